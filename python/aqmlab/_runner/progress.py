"""Progress on stderr: a tqdm bar of runs (done, cached, failed, time left).

The cached runs count as done from the start, so the rate and the time left are
those of the runs being simulated. The bar is drawn only on a terminal (redrawn
in place) or in a notebook, never into a file or a pipe (a batch job's log, where
its redraws would pile up): there a failed run is still printed on stderr as it
happens, with its point and seed, and the command's own lines say the rest.
"""

from __future__ import annotations

import sys


def on_screen() -> bool:
    """Whether stderr is a terminal or this is a notebook's kernel: where a bar
    may be drawn (:func:`aqmlab._run_bar.wanted`)."""
    from aqmlab._run_bar import wanted

    return wanted(None)


class Progress:
    """The bar of ``total`` runs, ``cached`` of them found in the store."""

    def __init__(self, total: int, cached: int, enabled: bool, where: str = "") -> None:
        self.cached = cached
        self.failed = 0
        self.enabled = enabled
        self.bar = None
        if enabled and total > cached and on_screen():
            from tqdm.auto import tqdm

            self.bar = tqdm(
                total=total,
                initial=cached,
                desc="runs" + (f" ({where})" if where else ""),
                unit="run",
                file=sys.stderr,
                mininterval=0.2,
                dynamic_ncols=True,
                smoothing=0.1,
            )
            self._postfix()

    def _postfix(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"cached={self.cached} failed={self.failed}", refresh=False)

    def step(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def fail(self, message: str) -> None:
        self.failed += 1
        if self.bar is not None:
            self.bar.write(f"run failed: {message}", file=sys.stderr)
            self._postfix()
            self.bar.update(1)
        elif self.enabled:
            print(f"run failed: {message}", file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self._postfix()
            self.bar.close()
