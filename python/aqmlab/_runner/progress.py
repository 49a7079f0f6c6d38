"""Progress on stderr: a tqdm bar of runs (done, cached, failed, time left).

The cached runs count as done from the start, so the rate and the time left are
those of the runs being simulated. On a terminal the bar is redrawn in place;
into a file or a pipe (a batch job's log), a line every few seconds at most. A
failed run is printed above the bar as it happens, with its point and seed.
"""

from __future__ import annotations

import sys


class Progress:
    """The bar of ``total`` runs, ``cached`` of them found in the store."""

    def __init__(self, total: int, cached: int, enabled: bool, where: str = "") -> None:
        self.cached = cached
        self.failed = 0
        self.bar = None
        if enabled and total > cached:
            from tqdm.auto import tqdm

            tty = sys.stderr.isatty()
            self.bar = tqdm(
                total=total,
                initial=cached,
                desc="runs" + (f" ({where})" if where else ""),
                unit="run",
                file=sys.stderr,
                mininterval=0.2 if tty else 5.0,
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

    def close(self) -> None:
        if self.bar is not None:
            self._postfix()
            self.bar.close()
