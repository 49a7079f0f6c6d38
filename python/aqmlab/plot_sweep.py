"""Figures of a sweep: a metric's mean against one key, with its 95% interval.

:func:`sweep` draws ``y`` (a metric of the runs table) against the sweep key
``x``, one line per value of the key ``hue``, the interval as a band around
each line (error bars where ``x`` is not a number: qdisc kinds have no
between). It reads :attr:`aqmlab.Sweep.stats`, or the ``stats`` table of a
folder ``aqmlab sweep --out`` wrote, so a figure needs no run again. Each value
of ``hue`` keeps one colour in every panel of a figure, values are in the order
the sweep gave them (``--set qdisc.kind=red,choke`` draws red first; numbers on
a numeric axis lie where they fall), and the axes carry the metric's unit.
:func:`tradeoff` draws throughput against queueing delay, a point per point of
the sweep (Pantheon's figure). :func:`figure` draws one panel per metric, and
the trade-off when the runs recorded delays; ``aqmlab plot SWEEP_DIR`` is
:func:`main`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab._io import arrow_source

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from aqmlab._sweep_result import Sweep

#: The metrics ``aqmlab plot SWEEP_DIR`` draws, at most: one panel each (and
#: the throughput-against-delay panel, when the runs recorded delays).
MAX_PANELS = 5
#: The most probe groups whose p99 RTT :func:`default_metrics` draws.
MAX_PROBE_PANELS = 2
#: The probe metric :func:`default_metrics` draws, per probe group.
PROBE_METRIC = "_probe_rtt_p99_s"

_UNIT_SCALE = {"k": 1e3, "m": 1e6, "g": 1e9, "": 1.0}


def natural_key(value: Any) -> tuple:
    """Orders ``udp10k`` before ``udp100k`` and ``2Mbps`` before ``10Mbps``:
    digits compare as numbers, a unit prefix (k, M, G) scales the number before
    it, and numbers come before text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), "")
    text = str(value)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgG]?)(.*)", text)
    if m:
        return (0, float(m.group(1)) * _UNIT_SCALE[m.group(2).lower()], m.group(3))
    parts = re.split(r"([0-9]+\.?[0-9]*)", text)
    key: list[Any] = []
    for i, part in enumerate(parts):
        if i % 2:
            scale = _UNIT_SCALE.get(parts[i + 1][:1].lower(), 1.0) if i + 1 < len(parts) else 1.0
            key.append((0, float(part) * scale, ""))
        elif part:
            key.append((1, 0.0, part))
    return (1, 0.0, tuple(key))


def metric_label(metric: str) -> tuple[str, float]:
    """(axis label with the unit, divisor) of a runs-table metric."""
    if metric.endswith("_goodput_bps"):
        return f"{metric.removesuffix('_goodput_bps')} goodput (Mbit/s)", 1e6
    if metric.endswith("_drops"):
        return f"{metric.removesuffix('_drops')} drops (packets)", 1.0
    if metric.startswith("jain_"):
        return f"Jain's index, {metric.removeprefix('jain_')} flows", 1.0
    if metric == "events":
        return "events (count)", 1.0
    if metric == "goodput_bps":
        return "goodput of all flows (Mbit/s)", 1e6
    if metric == "mean_queue_packets":
        return "mean queue (packets)", 1.0
    m = re.fullmatch(r"(.+)_probe_rtt_(mean|p50|p95|p99)_s", metric)
    if m:
        return f"{m.group(1)} probe RTT, {m.group(2)} (ms)", 1e-3
    if metric.endswith("_probe_lost"):
        return f"{metric.removesuffix('_probe_lost')} probes lost (count)", 1.0
    if metric.endswith("_rtt_mean_s"):
        return f"{metric.removesuffix('_rtt_mean_s')} mean RTT (ms)", 1e-3
    m = re.fullmatch(r"(?:(.+)_)?delay_(mean|p50|p95|p99)_s", metric)
    if m:
        who = f"{m.group(1)} " if m.group(1) else ""
        return f"{who}queueing delay, {m.group(2)} (ms)", 1e-3
    return metric, 1.0


def _stats(source: Sweep | pd.DataFrame | str | os.PathLike[str]) -> tuple[pd.DataFrame, list[str]]:
    """(the stats table, the sweep keys' columns) of a Sweep, a stats frame or a
    folder written by ``aqmlab sweep``."""
    import pandas as pd

    if isinstance(source, (str, os.PathLike)):
        folder = Path(source)
        if not (folder / "summary.json").exists():
            raise ValueError(f"{folder}: no summary.json (not a finished `aqmlab sweep --out` folder)")
        path = next(
            (folder / f"stats.{fmt}" for fmt in ("parquet", "csv") if (folder / f"stats.{fmt}").exists()),
            None,
        )
        if path is None:
            raise ValueError(f"{folder}: no stats table (a folder `aqmlab sweep --out` wrote has one)")
        read = pd.read_parquet if path.suffix == ".parquet" else pd.read_csv
        stats = read(arrow_source(path))
        # The keys' columns come first, then "metric" (aqmlab.stats.summarize).
        return stats, list(stats.columns[: list(stats.columns).index("metric")])
    if isinstance(source, pd.DataFrame):
        return source, list(source.columns[: list(source.columns).index("metric")])
    return source.stats, [source.columns[k] for k in source.keys]


def _column(keys: Sequence[str], name: str | None, what: str) -> str | None:
    if name is None:
        return None
    if name in keys:
        return name
    if f"set.{name}" in keys:
        return f"set.{name}"
    raise ValueError(
        f"plot.sweep {what}={name!r} is not a key of the sweep (keys: {', '.join(keys) or 'none'})"
    )


def colours(values: Sequence[Any]) -> dict[Any, Any]:
    """One colour per value, in the order given (a sweep's stats table lists its
    points in the order of ``--set``): the same value gets the same colour in
    every panel that is drawn with this map."""
    import matplotlib as mpl

    cycle = mpl.rcParams["axes.prop_cycle"].by_key()["color"]
    ordered = list(dict.fromkeys(values))
    if len(ordered) > len(cycle):
        cmap = mpl.colormaps["viridis"]
        return {v: cmap(i / max(1, len(ordered) - 1)) for i, v in enumerate(ordered)}
    return {v: cycle[i] for i, v in enumerate(ordered)}


def sweep(
    result: Sweep | pd.DataFrame | str | os.PathLike[str],
    x: str,
    y: str,
    hue: str | None = None,
    ax: Axes | None = None,
    palette: dict[Any, Any] | None = None,
) -> Axes:
    """Draws the mean of metric ``y`` against sweep key ``x`` with its 95%
    interval, a line (and band) per value of key ``hue``. ``result``: a
    :class:`~aqmlab.Sweep`, its ``stats`` frame, or a folder ``aqmlab sweep``
    wrote. A key named neither ``x`` nor ``hue`` must have one value in the
    table given (select one: ``sw.stats[sw.stats[key] == value]``); averaging
    over it would mix points."""
    import matplotlib.pyplot as plt
    import numpy as np

    stats, keys = _stats(result)
    xc = _column(keys, x, "x")
    hc = _column(keys, hue, "hue")
    rows = stats[stats["metric"] == y]
    if rows.empty:
        metrics = ", ".join(dict.fromkeys(stats["metric"]))
        raise ValueError(f"plot.sweep y={y!r} is no metric of the sweep (metrics: {metrics})")
    others = [k for k in keys if k not in (xc, hc) and rows[k].nunique(dropna=False) > 1]
    if others:
        raise ValueError(
            f"plot.sweep: the key {others[0]!r} has several values; give it as hue, or plot one of its "
            "values (stats[stats[key] == value])"
        )
    label, scale = metric_label(y)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    # In the sweep's order (the stats table lists points as --set gave them).
    groups = [(None, rows)] if hc is None else list(rows.groupby(hc, sort=False))
    palette = palette or colours([g[0] for g in groups])
    numeric = (
        all(isinstance(v, (int, float, np.integer, np.floating)) for v in rows[xc])
        and not rows[xc].dtype == bool
    )
    order = list(dict.fromkeys(rows[xc]))
    if numeric:  # a line runs left to right
        order.sort(key=natural_key)
    for n, (value, g) in enumerate(groups):
        g = g.set_index(xc).loc[[v for v in order if v in set(g[xc])]]
        mean = g["mean"].to_numpy(dtype=float) / scale
        low = g["ci_low"].to_numpy(dtype=float) / scale
        high = g["ci_high"].to_numpy(dtype=float) / scale
        colour = palette.get(value, None)
        name = None if hc is None else f"{value}"
        if numeric:
            xs = g.index.to_numpy(dtype=float)
            ax.plot(xs, mean, marker="o", color=colour, label=name)
            ax.fill_between(xs, low, high, color=colour, alpha=0.2, linewidth=0)
        else:
            # Categories side by side, each hue a little apart so bars do not overlap.
            shift = (n - (len(groups) - 1) / 2) * 0.12
            xs = np.array([order.index(v) for v in g.index], dtype=float) + shift
            err = np.vstack([mean - low, high - mean])
            ax.errorbar(
                xs,
                mean,
                yerr=np.nan_to_num(err),
                marker="o",
                linestyle="none",
                capsize=4,
                color=colour,
                label=name,
            )
    if not numeric:
        ax.set_xticks(range(len(order)), [str(v) for v in order])
    ax.set_xlabel(x)
    ax.set_ylabel(label)
    ax.grid(True, alpha=0.3)
    seeds = rows["n"]
    n_text = f"{seeds.min()}" if seeds.min() == seeds.max() else f"{seeds.min()}-{seeds.max()}"
    ax.set_title(f"{label.split(' (')[0]}: mean and 95% interval, {n_text} seeds", fontsize="medium")
    if hc is not None:
        ax.legend(title=hue, fontsize="small")
    return ax


#: The delay :func:`tradeoff` draws and :func:`figure` puts beside goodput.
TRADEOFF_DELAY = "delay_p95_s"
#: The throughput :func:`tradeoff` draws.
TRADEOFF_THROUGHPUT = "goodput_bps"


def tradeoff(
    result: Sweep | pd.DataFrame | str | os.PathLike[str],
    x: str = TRADEOFF_DELAY,
    y: str = TRADEOFF_THROUGHPUT,
    hue: str | None = None,
    ax: Axes | None = None,
    palette: dict[Any, Any] | None = None,
) -> Axes:
    """Throughput against queueing delay, as Pantheon draws its schemes: one
    point per point of the sweep at the mean of metric ``x`` (default the
    busiest link's p95 queueing delay, ``delay_p95_s``) and of ``y`` (default
    the goodput of all flows), each with its 95% interval both ways, labelled
    with the point's values; coloured by the key ``hue`` (default the sweep's
    last key). The delay axis runs from right to left, so better (more
    throughput, less delay) is up and right."""
    import matplotlib.pyplot as plt
    import numpy as np

    stats, keys = _stats(result)
    missing = [m for m in (x, y) if not (stats["metric"] == m).any()]
    if missing:
        hint = " (record delays: --set monitor.delays=true)" if "delay" in missing[0] else ""
        raise ValueError(f"plot.tradeoff: no metric {missing[0]!r} in the sweep{hint}")
    hc = _column(keys, hue, "hue") if hue is not None else (keys[-1] if keys else None)
    xs = stats[stats["metric"] == x].set_index(keys) if keys else stats[stats["metric"] == x]
    ys = stats[stats["metric"] == y].set_index(keys) if keys else stats[stats["metric"] == y]
    xlabel, xscale = metric_label(x)
    ylabel, yscale = metric_label(y)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    palette = palette or (colours(stats[hc]) if hc is not None else {})
    seen: set[Any] = set()
    for point in xs.index:
        px, py = xs.loc[point], ys.loc[point]
        values = point if isinstance(point, tuple) else (point,)
        label_of = dict(zip(keys, values))
        colour_key = label_of.get(hc) if hc is not None else None
        colour = palette.get(colour_key)
        legend = None if hc is None or colour_key in seen else f"{colour_key}"
        seen.add(colour_key)
        ax.errorbar(
            [px["mean"] / xscale],
            [py["mean"] / yscale],
            xerr=[[np.nan_to_num(px["half_width"] / xscale)]],
            yerr=[[np.nan_to_num(py["half_width"] / yscale)]],
            marker="o",
            capsize=3,
            color=colour,
            label=legend,
        )
        others = [f"{v}" for k, v in label_of.items() if k != hc]
        if others:
            ax.annotate(
                ", ".join(others),
                (px["mean"] / xscale, py["mean"] / yscale),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize="x-small",
            )
    if not ax.xaxis_inverted():
        ax.invert_xaxis()
    ax.set_xlabel(f"{xlabel}, better to the right")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.set_title("throughput against delay: mean and 95% interval", fontsize="medium")
    if hc is not None:
        ax.legend(title=hue or hc, fontsize="small")
    return ax


def default_metrics(names: Sequence[str]) -> list[str]:
    """What :func:`figure` draws of a sweep whose stats have the metrics
    ``names``: each group's goodput, the busiest link's p95 queueing delay when
    the runs recorded delays, the p99 probe RTT of the first
    :data:`MAX_PROBE_PANELS` probe groups, and the Jain indices, in that order
    (groups in the order of ``names``), at most :data:`MAX_PANELS`. When they do
    not all fit, one goodput stays, then the delay, the probes and the Jain
    indices come before the other goodputs. A probe group's goodput (a few
    kbit/s by design) gives way to its RTT."""
    probes = [m for m in names if m.endswith(PROBE_METRIC) and m != PROBE_METRIC]
    probe_groups = {m.removesuffix(PROBE_METRIC) for m in probes}
    goodputs = [
        m for m in names if m.endswith("_goodput_bps") and m.removesuffix("_goodput_bps") not in probe_groups
    ]
    rest = [
        *(m for m in (TRADEOFF_DELAY,) if m in names),
        *probes[:MAX_PROBE_PANELS],
        *(m for m in ("jain_tcp", "jain_all") if m in names),
    ][: MAX_PANELS - 1 if goodputs else MAX_PANELS]
    return (goodputs[: max(1, MAX_PANELS - len(rest))] + rest)[:MAX_PANELS]


def figure(
    result: Sweep | str | os.PathLike[str],
    x: str | None = None,
    hue: str | None = None,
    metrics: Sequence[str] | None = None,
) -> Figure:
    """One panel per metric (default :func:`default_metrics`: each group's
    goodput, the p95 queueing delay, the probe groups' p99 RTT and the Jain
    indices), against ``x``
    (default the first key), a line per value of ``hue`` (default the second
    key), one colour per value in every panel; and, when the runs recorded
    delays, the throughput-against-delay panel (:func:`tradeoff`)."""
    import matplotlib.pyplot as plt

    stats, keys = _stats(result)
    if not keys:
        raise ValueError("the sweep has no key to plot against (aqmlab sweep --set KEY=V1,V2)")
    x = x or keys[0]
    if hue is None and len(keys) > 1:
        hue = next(k for k in keys if k != _column(keys, x, "x"))
    names = list(dict.fromkeys(stats["metric"]))
    if metrics is None:
        metrics = default_metrics(names)
    with_tradeoff = TRADEOFF_DELAY in names and TRADEOFF_THROUGHPUT in names
    hc = _column(keys, hue, "hue")
    palette = colours(stats[hc]) if hc is not None else None
    panels = len(metrics) + with_tradeoff
    cols = min(2, panels)
    rows = (panels + cols - 1) // cols
    fig, axes = plt.subplots(
        rows, cols, figsize=(6.0 * cols, 3.8 * rows), layout="constrained", squeeze=False
    )
    for ax, metric in zip(axes.flat, metrics):
        sweep(stats, x, metric, hue, ax=ax, palette=palette)
    if with_tradeoff:
        tradeoff(
            stats, hue=hue or x, ax=list(axes.flat)[len(metrics)], palette=None if hue is None else palette
        )
    for ax in list(axes.flat)[panels:]:
        ax.set_visible(False)
    return fig


def main(ns: Any) -> int:
    """``aqmlab plot SWEEP_DIR [--out FILE]``: the sweep's figure, saved."""
    from aqmlab._io import write_atomic

    fig = figure(ns.dir)
    out = Path(ns.out) if ns.out is not None else Path(ns.dir) / "plot-sweep.png"
    fmt = out.suffix.lstrip(".").lower() or "png"
    write_atomic(out, lambda f: fig.savefig(f, format=fmt, dpi=120))
    print(os.fspath(out))
    return 0
