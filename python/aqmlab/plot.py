"""The figures a researcher draws first from one run.

- :func:`queue_length`: the sampled queue length of each monitored link over time
  (``Result.queue``; on by default, ``[monitor] queue_interval``).
- :func:`throughput`: each flow's throughput across a monitored link over time
  (``Result.flow_series``; ``[monitor] flow_series = "1s"``).
- :func:`goodput`: each flow's goodput over the measured interval beside its
  max-min fair share (``Result.flows``).
- :func:`delay_cdf`: the distribution of queueing delay at each monitored queue
  (``Result.delay_histogram``; ``[monitor] delays = true``).
- :func:`probe_rtt`: each probe group's (or flow's) RTT quantiles beside its base
  RTT (``Result.groups`` and ``Result.flows``; a flow group of ``kind = "probe"``).
- :func:`hosts`: each host's goodput beside an equal split between hosts
  (``Result.hosts``; a flow group's ``host`` or ``receiver_host``).

Each takes a :class:`~aqmlab.Result` (``Result.read(folder)`` reads back what
``aqmlab run --out`` wrote) and an optional matplotlib ``Axes``, draws into it (a
new figure's when none is given), labels the axes with their units and returns
it. A figure the run did not record raises :class:`NotRecorded` (a
``ValueError``) naming what to switch on in ``[monitor]``. :func:`figure` puts
several on one figure (by default every kind, the probe and hosts panels only
when the run has probes and named hosts: :func:`default_kinds`); ``aqmlab plot DIR`` is :func:`main`.

What is plotted is the table's numbers, unsmoothed: a series point is an
interval's mean, drawn at the interval's middle; the delay CDF is exact at the
histogram's bucket edges and linear inside a bucket (1.6% wide). Time axes cover
the whole run and shade the warm-up, which the totals leave out.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

# What this module's figures share with the TCP trace's, public here as before
# (``plot.NotRecorded``, ``plot.MAX_LINES``); kept apart so ``plot_tcp`` need not
# import this module, which imports it.
from aqmlab._plot_parts import MAX_LINES as MAX_LINES
from aqmlab._plot_parts import NotRecorded as NotRecorded
from aqmlab._plot_parts import frame_of as frame_of
from aqmlab._plot_parts import group_colours as group_colours
from aqmlab._plot_parts import shade_warmup as shade_warmup

# A sweep's metric against one key with confidence bands (``aqmlab.plot.sweep``),
# and TCP's cwnd and RTT over time (``aqmlab.plot.tcp_trace``).
from aqmlab.plot_sweep import colours, natural_key
from aqmlab.plot_sweep import sweep as sweep
from aqmlab.plot_tcp import tcp_trace as tcp_trace

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from aqmlab.result import Result

#: The kinds of figure, in the order ``--kind all`` draws them.
KINDS = ("queue", "throughput", "goodput", "delay", "probe", "hosts")
#: The kinds a run without their flows does not miss: left out of
#: :func:`default_kinds` (and of ``--kind all``, without a note) when it has none.
OPTIONAL_KINDS = ("probe", "hosts")

_LINK_COLOURS = ("black", "dimgrey", "darkgrey", "silver")
#: The most flows :func:`goodput` draws a bar for; past it, a CDF per group.
MAX_BARS = 100
_BY = ("flow", "group", "kind")
#: The most probe flows :func:`probe_rtt` draws one by one by default (when a
#: group has several); past it, or with one flow per group, a line per group.
MAX_PROBE_FLOWS = 4
#: The RTT quantiles :func:`probe_rtt` draws: (column of the flows and groups
#: tables, tick label).
PROBE_QUANTILES = (
    ("probe_rtt_p50_s", "p50"),
    ("probe_rtt_p95_s", "p95"),
    ("probe_rtt_p99_s", "p99"),
    ("probe_rtt_max_s", "max"),
)


def _rows(result: Result, name: str) -> int:
    try:
        return result.arrow(name).num_rows
    except KeyError:
        return 0


def _probe_flows(result: Result) -> pd.DataFrame:
    """The flows table's probe rows (``kind = "probe"``), by id."""
    f = frame_of(result, "flows")
    if f.empty or "kind" not in f.columns:
        return f
    return f[f["kind"] == "probe"].sort_values("id", kind="stable")


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    return ax


def _pick(links: Sequence[str], link: str | None, what: str, switch: str) -> list[str]:
    """The links to draw: ``[link]`` (``"bottleneck"`` is the dumbbell's
    ``left->right``, as in ``[monitor] links``), else all of ``links``."""
    if link is None:
        return list(links)
    wanted = "left->right" if link == "bottleneck" else link
    if wanted not in links:
        known = ", ".join(links) or "none"
        raise NotRecorded(f'no {what} at link "{link}" (links that have one: {known}); {switch}')
    return [wanted]


#: What records each kind, for the error when a run did not.
_SWITCH = {
    "queue": 'set [monitor] queue_interval to a period, e.g. "100ms" (the default; "0s" turns them off)',
    "throughput": 'switch on [monitor] flow_series = "1s" (and list the link in [monitor] links, if set)',
    "goodput": "is this the folder `aqmlab run --out` wrote?",
    "delay": "switch on [monitor] delays = true (and list the link in [monitor] links, if set)",
    "probe": 'add a flow group of kind = "probe" to the scenario (docs/probes.md)',
    "hosts": 'name the host of a flow group (host = "name", receiver_host = "name")',
}
_TABLE = {
    "queue": "queue",
    "throughput": "flow_series",
    "goodput": "flows",
    "delay": "delay_histogram",
    "probe": "flows",
    "hosts": "hosts",
}
_WHAT = {
    "queue": "queue samples",
    "throughput": "per-flow series",
    "goodput": "flows",
    "delay": "queueing-delay histograms",
    "probe": "probe flows",
    "hosts": "named hosts",
}


def missing(result: Result, kind: str) -> str | None:
    """Why ``result`` cannot give the figure ``kind`` (a sentence naming the
    ``[monitor]`` key that records it), or ``None`` when it can."""
    if kind not in _TABLE:
        raise ValueError(f'kind = "{kind}" must be one of {", ".join(KINDS)}')
    rows = len(_probe_flows(result)) if kind == "probe" else _rows(result, _TABLE[kind])
    if rows == 0:
        return f"this run has no {_WHAT[kind]}: {_SWITCH[kind]}"
    return None


def default_kinds(result: Result) -> tuple[str, ...]:
    """The kinds :func:`figure` draws by default: :data:`KINDS`, less those of
    :data:`OPTIONAL_KINDS` the run has nothing for (the probe panel of a run
    without probes). A kind the run did not record is left in: :func:`figure`
    says what to switch on."""
    return tuple(k for k in KINDS if k not in OPTIONAL_KINDS or missing(result, k) is None)


# ---- queue length over time ------------------------------------------------------------


def queue_length(
    result: Result, ax: Axes | None = None, *, link: str | None = None, unit: str = "packets"
) -> Axes:
    """The sampled queue length of each monitored link (or of ``link``) over the
    run, in packets (``unit="bytes"``: in kB)."""
    if unit not in ("packets", "bytes"):
        raise ValueError(f'unit = "{unit}" must be "packets" or "bytes"')
    reason = missing(result, "queue")
    if reason:
        raise NotRecorded(reason)
    q = frame_of(result, "queue")
    ax = _axes(ax)
    column, unit, scale = ("bytes", "kB", 1e-3) if unit == "bytes" else ("packets", "packets", 1.0)
    switch = _SWITCH["queue"]
    for name in _pick(list(dict.fromkeys(q["link"])), link, "queue samples", switch):
        s = q[q["link"] == name].sort_values("t_s", kind="stable")
        ax.plot(s["t_s"].to_numpy(), s[column].to_numpy(dtype=float) * scale, label=name)
    shade_warmup(result, ax)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"queue length ({unit})")
    ax.set_ylim(bottom=0)
    ax.set_title("Queue length")
    _legend(ax, len(ax.lines))
    return ax


# ---- per-flow throughput over time ---------------------------------------------------------


def series_link(result: Result, link: str | None = None) -> str:
    """The link :func:`throughput` draws: ``link``, or the one whose series
    carried the most bytes (a dumbbell's data direction, not its ACKs)."""
    reason = missing(result, "throughput")
    if reason:
        raise NotRecorded(reason)
    fs = frame_of(result, "flow_series")
    switch = _SWITCH["throughput"]
    links = list(dict.fromkeys(fs["link"]))
    if link is not None:
        return _pick(links, link, "per-flow series", switch)[0]
    by_link = fs.groupby("link", sort=False)["bytes"].sum()
    return str(by_link.idxmax())


def throughput_table(result: Result, link: str | None = None, by: str = "flow") -> pd.DataFrame:
    """Throughput (bit/s) across ``link`` per interval: one row per interval,
    indexed by its middle (``t_s``), one column per flow id (``by="flow"``) or per
    group (``by="group"``: the group's total) or per kind of flow (``by="kind"``:
    tcp, cbr, ...). An interval in which a flow sent nothing (the series has no
    row for it) is 0."""
    import numpy as np
    import pandas as pd

    if by not in _BY:
        raise ValueError(f'by = "{by}" must be one of {", ".join(_BY)}')
    name = series_link(result, link)
    fs = frame_of(result, "flow_series")
    fs = fs[fs["link"] == name]
    # Intervals are keyed by their start in whole nanoseconds: float seconds of
    # equal instants compare equal only by luck.
    start_ns = np.rint(fs["t_s"].to_numpy(dtype=float) * 1e9).astype(np.int64)
    lengths = (
        pd.DataFrame({"start": start_ns, "dt_s": fs["dt_s"].to_numpy(dtype=float)})
        .groupby("start")["dt_s"]
        .max()
    )
    starts = _interval_starts(result, lengths)
    if by == "flow":
        key = fs["flow"].to_numpy()
    else:
        of_flow = frame_of(result, "flows").set_index("id")[by]
        key = of_flow.reindex(fs["flow"].to_numpy()).to_numpy()
    table = (
        pd.DataFrame({"start": start_ns, "key": key, "bits": fs["bytes"].to_numpy(dtype=float) * 8})
        .groupby(["start", "key"])["bits"]
        .sum()
        .unstack("key", fill_value=0.0)
        .reindex(starts.index, fill_value=0.0)
    )
    table = table.div(starts, axis=0)
    table.index = pd.Index(starts.index / 1e9 + starts.to_numpy() / 2, name="t_s")
    table.columns.name = by
    return table


def _interval_starts(result: Result, lengths: pd.Series) -> pd.Series:
    """Every interval of the series (start in ns -> length in s), those in which
    no flow crossed the link included (the series has no row for them)."""
    import numpy as np
    import pandas as pd

    run = frame_of(result, "run")
    period = float(lengths.max())
    if run.empty or period <= 0:
        return lengths
    duration = float(run["duration_s"].iloc[0])
    period_ns = round(period * 1e9)
    grid = np.arange(0, round(duration * 1e9), period_ns, dtype=np.int64)
    full = pd.Series(np.minimum(period, duration - grid / 1e9), index=grid)
    # The series' own lengths where it has them (the last interval may be short).
    return lengths.combine_first(full).sort_index()


def throughput(
    result: Result,
    ax: Axes | None = None,
    *,
    link: str | None = None,
    flows: Sequence[int] | None = None,
    by: str | None = None,
) -> Axes:
    """Each flow's throughput across ``link`` (default: the busiest series) over
    time, in Mbit/s, one point per ``[monitor] flow_series`` interval. ``flows``
    picks flows by id; ``by="group"`` draws each flow group's total instead, and
    ``by="kind"`` each kind's (tcp, cbr, ...). By default, per flow, or with more
    than :data:`MAX_LINES` flows per group, or with more groups than that per kind."""
    name = series_link(result, link)
    f = frame_of(result, "flows")
    if by is None:
        by = "flow"
        if flows is None:
            by = next((b for b in _BY[:2] if _count(f, b) <= MAX_LINES), "kind")
    table = throughput_table(result, name, by)
    if flows is not None:
        if by != "flow":
            raise ValueError(f'flows picks flows; it cannot be combined with by = "{by}"')
        ids = set(frame_of(result, "flows")["id"])
        unknown = [f for f in flows if f not in ids]
        if unknown:
            raise ValueError(f"flows = {unknown}: no such flow (ids 0-{max(ids)})")
        # A flow that never crossed the link has no column: a line of zeros.
        table = table.reindex(columns=list(flows), fill_value=0.0)
    ax = _axes(ax)
    t = table.index.to_numpy()
    group_of = f.set_index("id")["group"].to_dict()
    palette = group_colours(result)
    styles = ("-", "--", ":", "-.")
    seen: dict[str, int] = {}
    if by != "flow":
        table = table[sorted(table.columns, key=natural_key)]
    for key in table.columns:
        label = f"flow {key} ({group_of.get(key, '?')})" if by == "flow" else f"{key} (total)"
        # A group's colour, in every panel; a group's flows apart by line style.
        group = group_of.get(key) if by == "flow" else key if by == "group" else None
        style = styles[seen.get(group, 0) % len(styles)] if group is not None else "-"
        seen[group] = seen.get(group, 0) + 1
        ax.plot(t, table[key].to_numpy() / 1e6, label=label, color=palette.get(group), linestyle=style)
    shade_warmup(result, ax)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Throughput across {name}")
    _legend(ax, len(table.columns))
    return ax


def _count(flows: pd.DataFrame, by: str) -> int:
    """Lines ``by`` would draw for ``flows``."""
    return len(flows) if by == "flow" else flows[by].nunique()


def _legend(ax: Axes, entries: int) -> None:
    """A legend beside the plot (inside it hides the lines); none when there
    are too many entries to read."""
    if entries <= 3 * MAX_LINES:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", ncol=1 + entries // 25)


# ---- goodput per flow --------------------------------------------------------------------


def goodput(result: Result, ax: Axes | None = None) -> Axes:
    """Each flow's goodput over the measured interval (Mbit/s), a bar per flow in
    its group's colour, and its max-min fair share (given every flow's demand and
    route) as a black tick. Past :data:`MAX_BARS` flows the bars would be
    slivers: each group's goodputs are drawn as a CDF instead, its fair shares as
    a dashed line of the group's colour."""
    reason = missing(result, "goodput")
    if reason:
        raise NotRecorded(reason)
    f = frame_of(result, "flows")
    ax = _axes(ax)
    f = f.sort_values("id", kind="stable")
    # By group, in the groups' colours; past MAX_LINES groups, by kind.
    by = "group" if _count(f, "group") <= MAX_LINES else "kind"
    palette = group_colours(result) if by == "group" else colours(list(f["kind"]))
    if len(f) > MAX_BARS:
        return _goodput_cdf(f, ax, palette, by)
    for key in sorted(dict.fromkeys(f[by]), key=natural_key):
        g = f[f[by] == key]
        ax.bar(g["id"].to_numpy(), g["goodput_bps"].to_numpy(dtype=float) / 1e6, width=0.8, label=key,
               color=palette[key])  # fmt: skip
    ax.plot(
        f["id"].to_numpy(),
        f["fair_share_bps"].to_numpy(dtype=float) / 1e6,
        linestyle="none",
        marker="_",
        markersize=8,
        color="black",
        label="max-min fair share",
    )
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("flow")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.set_title("Goodput per flow (measured interval)")
    _legend(ax, len(ax.containers) + 1)
    return ax


def _goodput_cdf(f: pd.DataFrame, ax: Axes, palette: dict[str, object], by: str) -> Axes:
    import numpy as np

    groups = sorted(dict.fromkeys(f[by]), key=natural_key)
    for key in groups:
        g = f[f[by] == key]
        xs = np.sort(g["goodput_bps"].to_numpy(dtype=float)) / 1e6
        ys = np.arange(1, len(xs) + 1) / len(xs)
        ax.step(np.concatenate([[0.0], xs]), np.concatenate([[0.0], ys]), where="post",
                color=palette[key], label=f"{key} ({len(xs)} flows)")  # fmt: skip
        shares = g["fair_share_bps"].to_numpy(dtype=float) / 1e6
        if len(shares) and np.allclose(shares, shares[0]):
            ax.axvline(shares[0], color=palette[key], linestyle="--", linewidth=1)
    ax.plot([], [], color="black", linestyle="--", linewidth=1, label="max-min fair share")
    ax.set_xlabel("goodput (Mbit/s)")
    ax.set_ylabel(f"fraction of the {by}'s flows (CDF)")
    ax.set_xlim(left=0)
    ax.set_ylim(0, 1.02)
    ax.set_title(f"Goodput per flow (measured interval), CDF over {len(f)} flows")
    _legend(ax, len(groups) + 1)
    return ax


# ---- queueing-delay CDF ------------------------------------------------------------------


def delay_cdf_table(result: Result, link: str, group: str | None = None) -> pd.DataFrame:
    """The CDF of queueing delay at ``link`` (over all packets, or ``group``'s):
    ``delay_s`` and ``cdf`` at each bucket's low and high edge, so the curve is
    flat between buckets and exact at every edge."""
    import numpy as np
    import pandas as pd

    reason = missing(result, "delay")
    if reason:
        raise NotRecorded(reason)
    h = frame_of(result, "delay_histogram")
    sel = h[h["link"] == link]
    sel = sel[sel["group"].isna()] if group is None else sel[sel["group"] == group]
    sel = sel[sel["count"] > 0].sort_values("lo_s", kind="stable")
    if sel.empty:
        what = "any packet" if group is None else f'group "{group}"'
        raise NotRecorded(f'no queueing delay of {what} at link "{link}"')
    counts = sel["count"].to_numpy(dtype=float)
    cdf = np.cumsum(counts) / counts.sum()
    before = np.concatenate([[0.0], cdf[:-1]])
    return pd.DataFrame(
        {
            "delay_s": np.column_stack([sel["lo_s"].to_numpy(), sel["hi_s"].to_numpy()]).ravel(),
            "cdf": np.column_stack([before, cdf]).ravel(),
        }
    )


def delay_cdf(
    result: Result, ax: Axes | None = None, *, link: str | None = None, by_group: bool = False
) -> Axes:
    """The CDF of the queueing delay (ms) of the packets each monitored queue (or
    ``link``) sent in the measured interval; one line per flow group too when
    ``by_group``."""
    from aqmlab._run import check_flag

    check_flag(by_group, "by_group")
    reason = missing(result, "delay")
    if reason:
        raise NotRecorded(reason)
    h = frame_of(result, "delay_histogram")
    ax = _axes(ax)
    for i, name in enumerate(
        _pick(list(dict.fromkeys(h["link"])), link, "delay histogram", _SWITCH["delay"])
    ):
        groups = [None]
        if by_group:
            groups += sorted(g for g in set(h.loc[h["link"] == name, "group"].dropna()))
        for group in groups:
            try:
                c = delay_cdf_table(result, name, group)
            except NotRecorded:
                continue  # a queue that sent nothing in the measured interval
            label = name if group is None else f"{name}, {group}"
            # Links in greys: the palette's colours are the groups'.
            colour = _LINK_COLOURS[i % 4] if group is None else group_colours(result).get(group)
            ax.plot(c["delay_s"].to_numpy() * 1e3, c["cdf"].to_numpy(), label=label, color=colour)
    ax.set_xlabel("queueing delay (ms)")
    ax.set_ylabel("fraction of packets (CDF)")
    ax.set_xlim(left=0)
    ax.set_ylim(0, 1.02)
    ax.set_title("Queueing delay")
    ax.legend(loc="lower right", fontsize="small")
    return ax


# ---- probe RTTs ----------------------------------------------------------------------------


def probe_table(result: Result, by: str = "group") -> pd.DataFrame:
    """What :func:`probe_rtt` draws, one row per probe group (``by="group"``,
    indexed by its name, in natural order) or per probe flow (``by="flow"``,
    indexed by id): ``group``, ``probe_sent``, ``probe_lost``, the RTT
    quantiles of :data:`PROBE_QUANTILES` (seconds, over the echoed probes; NaN
    when none was) and ``base_rtt_s`` (a flow's; a group's least flow's, the
    floor under every probe of the group)."""
    import pandas as pd

    if by not in ("flow", "group"):
        raise ValueError(f'by = "{by}" must be "flow" or "group"')
    reason = missing(result, "probe")
    if reason:
        raise NotRecorded(reason)
    f = _probe_flows(result)
    columns = ["probe_sent", "probe_lost", *(c for c, _ in PROBE_QUANTILES)]
    if by == "flow":
        table = f.set_index("id")[["group", *columns, "base_rtt_s"]]
    else:
        g = frame_of(result, "groups")
        g = g[g["kind"] == "probe"].set_index("group")
        order = sorted(dict.fromkeys(f["group"]), key=natural_key)
        table = g.loc[order, columns].copy()
        table.insert(0, "group", table.index.to_numpy())
        table["base_rtt_s"] = f.groupby("group")["base_rtt_s"].min().reindex(order)
    table.index.name = by
    # Counts: null only off probe rows, so whole numbers here.
    table = table.astype({"probe_sent": "int64", "probe_lost": "int64"})
    return pd.DataFrame(table)


def probe_rtt(result: Result, ax: Axes | None = None, *, by: str | None = None) -> Axes:
    """Each probe group's RTT quantiles over its echoed probes (p50, p95, p99
    and max, in ms: a line in the group's colour), its base RTT as a dashed line
    of that colour (propagation both ways: what is above it is queueing and
    transmission), and its lost probes in the label. ``by="flow"`` draws each
    probe flow instead; by default, per flow when a group has several and there
    are at most :data:`MAX_PROBE_FLOWS`. The numbers are the flows and groups
    tables' (:func:`probe_table`)."""
    import numpy as np

    reason = missing(result, "probe")
    if reason:
        raise NotRecorded(reason)
    if by is None:
        f = _probe_flows(result)
        several = len(f) > f["group"].nunique()
        by = "flow" if several and len(f) <= MAX_PROBE_FLOWS else "group"
    table = probe_table(result, by)
    ax = _axes(ax)
    palette = group_colours(result)
    styles = ("-", "--", ":", "-.")
    seen: dict[str, int] = {}
    xs = np.arange(len(PROBE_QUANTILES), dtype=float)
    for key, row in table.iterrows():
        group = row["group"]
        colour = palette.get(group)
        style = styles[seen.get(group, 0) % len(styles)]
        seen[group] = seen.get(group, 0) + 1
        sent, lost = int(row["probe_sent"]), int(row["probe_lost"])
        who = f"flow {key} ({group})" if by == "flow" else f"{key}"
        rtts = row[[c for c, _ in PROBE_QUANTILES]].to_numpy(dtype=float) * 1e3
        ax.plot(xs, rtts, marker="o", color=colour, linestyle=style, label=f"{who}, {lost} of {sent} lost")
        # "_" keeps the reference out of the legend; the proxy below names it once.
        ax.axhline(float(row["base_rtt_s"]) * 1e3, color=colour, linestyle="--", linewidth=1,
                   label=f"_base RTT of {who}")  # fmt: skip
    ax.plot([], [], color="black", linestyle="--", linewidth=1, label="base RTT")
    ax.set_xticks(xs, [name for _, name in PROBE_QUANTILES])
    ax.set_xlim(-0.3, len(PROBE_QUANTILES) - 0.7)
    ax.set_xlabel("quantile over the echoed probes (measured interval)")
    ax.set_ylabel("probe RTT (ms)")
    ax.set_ylim(bottom=0)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title("Probe RTT")
    _legend(ax, len(table) + 1)
    return ax


# ---- per host ----------------------------------------------------------------------------


def hosts(result: Result, ax: Axes | None = None) -> Axes:
    """Each host's goodput over the measured interval (Mbit/s), a bar per host and
    role (sender, then receiver), labelled with its number of flows, and the
    equal split between the hosts of a role as a dashed line: the figure of
    per-host fairness."""
    reason = missing(result, "hosts")
    if reason:
        raise NotRecorded(reason)
    h = frame_of(result, "hosts")
    ax = _axes(ax)
    roles = list(dict.fromkeys(h["role"]))
    palette = colours(roles)
    x = 0
    ticks, labels = [], []
    for role in roles:
        rows = h[h["role"] == role]
        xs = list(range(x, x + len(rows)))
        mbps = rows["goodput_bps"].to_numpy(dtype=float) / 1e6
        bars = ax.bar(xs, mbps, width=0.8, color=palette[role], label=f"as {role}")
        ax.bar_label(bars, labels=[f"{n} flow{'s' * (n != 1)}" for n in rows["flows"]], fontsize=7)
        ax.hlines(mbps.sum() / len(rows), xs[0] - 0.4, xs[-1] + 0.4, colors="black", linestyles="--",
                  linewidth=1)  # fmt: skip
        ticks += xs
        labels += list(rows["host"])
        x += len(rows) + 1
    ax.plot([], [], color="black", linestyle="--", linewidth=1, label="equal split")
    crowded = len(ticks) > 6
    ax.set_xticks(ticks, labels, rotation=30 if crowded else 0, ha="right" if crowded else "center")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.set_title("Goodput per host (measured interval)")
    _legend(ax, len(roles) + 1)
    return ax


# ---- several at once, and the command ------------------------------------------------------

_DRAW = {
    "queue": queue_length,
    "throughput": throughput,
    "goodput": goodput,
    "delay": delay_cdf,
    "probe": probe_rtt,
    "hosts": hosts,
}


def figure(result: Result, kinds: Sequence[str] | None = None) -> Figure:
    """One figure with a panel per kind (``queue``, ``throughput``, ``goodput``,
    ``delay``, ``probe``, ``hosts``; by default :func:`default_kinds`: the probe
    and hosts panels only when the run has probes and named hosts), stacked;
    :class:`NotRecorded` if the run did not record one (see :func:`missing`)."""
    from matplotlib.figure import Figure

    if kinds is None:
        kinds = default_kinds(result)
    for k in kinds:
        reason = missing(result, k)
        if reason:
            raise NotRecorded(reason)
    fig = Figure(figsize=(8, 3.2 * len(kinds)), layout="constrained")
    axes = fig.subplots(len(kinds), 1, squeeze=False)[:, 0]
    for k, ax in zip(kinds, axes):
        _DRAW[k](result, ax)
    run = frame_of(result, "run")
    if not run.empty:
        r = run.iloc[0]
        fig.suptitle(f"{r['scenario']}, seed {r['seed']}")
    return fig


def main(ns: argparse.Namespace) -> int:
    """``aqmlab plot DIR [--out FILE] [--kind KIND]``: saves the figure and prints
    its path; a kind the run did not record is a usage error (exit 2), or with
    ``--kind all`` a note on stderr (the probe panel of a run without probes is
    left out without one)."""
    from aqmlab.result import Result

    if (Path(ns.dir) / "stats.parquet").exists() or (Path(ns.dir) / "stats.csv").exists():
        from aqmlab import plot_sweep

        return plot_sweep.main(ns)  # a sweep's folder
    result = Result.read(ns.dir)
    kinds = [ns.kind]
    if ns.kind == "all":
        kinds = []
        for kind in default_kinds(result):
            reason = missing(result, kind)
            if reason:
                print(f"note: no {kind} panel: {reason}", file=sys.stderr)
            else:
                kinds.append(kind)
        if not kinds:
            raise NotRecorded(f"{ns.dir}: nothing to plot")
    fig = figure(result, kinds)
    out = Path(ns.out) if ns.out is not None else Path(ns.dir) / f"plot-{ns.kind}.png"
    from aqmlab._io import add_to_record, write_atomic

    fmt = out.suffix.lstrip(".").lower() or "png"
    # A device or FIFO (`--out /dev/stdout`) is written through, never replaced;
    # its path is not printed after the image.
    regular = not out.exists() or out.resolve().is_file()
    write_atomic(out, lambda f: fig.savefig(f, format=fmt, dpi=120))
    if regular:
        add_to_record(out)
        print(os.fspath(out))
    return 0
