"""Progress of one run: a tqdm bar of simulated time with the time left.

The extension calls the bar with ``(now_s, end_s)`` between slices of the run (at
most ten times a second, the GIL taken back only for that). ``tqdm.auto`` draws it
as a widget in a notebook and as a line on stderr in a terminal; as the binary's,
the bar appears only once a run has taken a second, and is cleared at the end.
"""

from __future__ import annotations

import sys
from typing import Any


def wanted(progress: bool | None) -> bool:
    """Whether to draw a bar: as asked, or by default when stderr is a terminal
    or the run is in a notebook's kernel."""
    if progress is not None:
        return bool(progress)
    try:
        if sys.stderr is not None and sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):  # a replaced or closed stderr
        return False
    return "ipykernel" in sys.modules


class RunBar:
    """The progress callback of one run, and its bar once there is one."""

    def __init__(self) -> None:
        self.bar: Any = None

    def __call__(self, now_s: float, end_s: float) -> None:
        from aqmlab import _aqmlab

        if self.bar is None:
            from tqdm.auto import tqdm

            self.bar = tqdm(
                total=end_s,
                file=sys.stderr,
                delay=1.0,
                leave=False,
                dynamic_ncols=True,
                bar_format="simulated {desc} |{bar}| {percentage:3.0f}% [{elapsed}<{remaining}]",
            )
        # The binary's words for simulated time (`12.3 s / 300 s`).
        self.bar.set_description_str(_aqmlab.progress_text(now_s, end_s), refresh=False)
        self.bar.update(now_s - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def run_with_bar(progress: bool | None, start: Any) -> Any:
    """``start(callback)`` with a bar's callback when one is wanted, else ``None``;
    the bar is closed however the run ends."""
    if not wanted(progress):
        return start(None)
    bar = RunBar()
    try:
        return start(bar)
    finally:
        bar.close()
