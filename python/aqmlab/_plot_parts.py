"""What the figures of one run share (:mod:`aqmlab.plot`'s and
:mod:`aqmlab.plot_tcp`'s): reading a table, the warm-up's shading, a colour per
flow group, the line budget and the error for what a run did not record.
``aqmlab.plot`` shows each under its own name; it lives here so that
``plot_tcp``, which ``plot`` imports, need not import ``plot`` back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aqmlab.plot_sweep import colours

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from aqmlab.result import Result

#: The most lines (or bar colours) a figure draws by default: above it,
#: :func:`aqmlab.plot.throughput` sums flows by group, then by kind, and
#: :func:`aqmlab.plot.goodput` colours bars by kind.
MAX_LINES = 12


class NotRecorded(ValueError):
    """The run did not record what a figure needs; the message says which
    ``[monitor]`` key records it."""


def frame_of(result: Result, name: str) -> pd.DataFrame:
    """Table ``name`` as a plain DataFrame (no index; the result's own, cached:
    not to be modified); empty when the result has no such table (a folder
    written before the table existed)."""
    import pandas as pd

    try:
        return getattr(result, name) if name != "groups" else result.arrow(name).to_pandas()
    except KeyError:
        return pd.DataFrame()


def shade_warmup(result: Result, ax: Axes) -> None:
    """Shades the warm-up on ``ax`` (time on x): the interval every total leaves out."""
    run = frame_of(result, "run")
    if run.empty:
        return
    warmup = float(run["warmup_s"].iloc[0])
    if warmup > 0:
        ax.axvspan(0.0, warmup, color="0.92", zorder=0, label="warm-up")
    ax.set_xlim(0.0, float(run["duration_s"].iloc[0]))


def group_colours(result: Result) -> dict[str, object]:
    """One colour per flow group, the groups in natural order (``udp10k`` before
    ``udp100k``): every panel of a figure draws a group in its colour."""
    return colours(list(frame_of(result, "flows")["group"]))
