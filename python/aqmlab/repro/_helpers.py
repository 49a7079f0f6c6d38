"""What every paper's reproduction shares, beside the framework (:mod:`._core`):
scenario edits (a queue on a link, a flow group's keys, a rate's spelling), the
run table's selections and statistics (mean and spread over seeds, a curve of
means), and the plotting backend.

A paper's module states its network and its checks with these; a helper that two
papers would write alike belongs here, not in either.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

# ---- scenarios --------------------------------------------------------------------


def with_flows(scenario: Mapping[str, Any], group: str, **keys: Any) -> dict[str, Any]:
    """A copy of ``scenario`` with ``keys`` set on the flow group named ``group``."""
    out = copy.deepcopy(dict(scenario))
    found = False
    for spec in out["flows"]:
        if spec["name"] == group:
            spec.update(keys)
            found = True
    if not found:
        raise KeyError(f"scenario {out.get('name')!r} has no flow group {group!r}")
    return out


def with_qdisc(
    scenario: Mapping[str, Any],
    qdisc: Mapping[str, Any] | None = None,
    *,
    link: tuple[str, str] | None = None,
    **keys: Any,
) -> dict[str, Any]:
    """A copy of ``scenario`` with a queue set: on the topology's link ``link`` =
    (from, to), or on the bottleneck (the scenario's ``[qdisc]``) without it.

    ``qdisc`` replaces the queue's table whole (plus ``keys``); ``keys`` alone
    update it, and a new ``kind`` among them starts a fresh table (keys of one
    kind do not apply to another)."""
    out = copy.deepcopy(dict(scenario))
    holder = out
    if link is not None:
        for spec in out["topology"]["links"]:
            if (spec["from"], spec["to"]) == link:
                holder = spec
                break
        else:
            raise KeyError(f"scenario {out.get('name')!r} has no link {link[0]} -> {link[1]}")
    if qdisc is not None:
        holder["qdisc"] = {**qdisc, **keys}
    elif "kind" in keys and keys["kind"] != holder.get("qdisc", {}).get("kind"):
        holder["qdisc"] = dict(keys)
    else:
        holder.setdefault("qdisc", {}).update(keys)
    return out


def kbit(kbps: float) -> str:
    """A rate in kbit/s as a scenario spells it: one spelling per rate (whole
    kbit/s), so equal points hash, and cache, equally."""
    return f"{round(kbps)}kbit"


def rate(mbps: float) -> str:
    """A rate in Mbit/s as a scenario spells it (:func:`kbit`)."""
    return kbit(mbps * 1000)


def link_kbps(text: str) -> float:
    """A scenario's rate (``"45Mbit"``, ``"0.16Mbps"``) in kbit/s, read by the
    scenarios' own parser."""
    from aqmlab import _aqmlab

    return _aqmlab.parse_rate(text) / 1e3


# ---- the run table: one row per point and seed ------------------------------------


def select(runs: pd.DataFrame, **where: Any) -> pd.DataFrame:
    """The rows of ``runs`` whose columns equal ``where``'s values; ``KeyError``
    when none do (a misspelt label, not an empty mean)."""
    sel = runs
    for k, v in where.items():
        sel = sel[sel[k] == v]
    if sel.empty:
        raise KeyError(f"no runs with {where}")
    return sel


def mean_sd(runs: pd.DataFrame, column: str, **where: Any) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one run) of ``column`` over the
    runs :func:`select` picks: a check's "ours" and its spread over seeds."""
    values = select(runs, **where)[column].astype(float)
    return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0


def means(runs: pd.DataFrame, by: str, column: str, **where: Any) -> pd.Series:
    """The mean of ``column`` over seeds at each value of ``by`` (a curve of the
    paper's x axis), in order of ``by``."""
    return select(runs, **where).groupby(by)[column].mean().sort_index()


def increasing(values: Iterable[float]) -> bool:
    """Strictly increasing, in the given order."""
    v = list(values)
    return all(b > a for a, b in zip(v, v[1:]))


def pct(part: float, whole: float) -> float:
    """``part`` as a percentage of ``whole``; NaN when ``whole`` is 0."""
    return 100 * float(part) / float(whole) if whole else float("nan")


# ---- figures ----------------------------------------------------------------------


def pyplot():
    """``matplotlib.pyplot`` on the file-only Agg backend: figures are written, never
    shown, also on a machine without a display."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path, dpi: int = 100) -> None:
    """Lays ``fig`` out, writes it as PNG to ``path`` (a path or a binary file, as
    an experiment's ``plot`` receives it) and frees it."""
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
