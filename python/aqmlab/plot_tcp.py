"""TCP's state over time, from ``Result.tcp_trace`` (``[monitor] tcp_trace =
"100ms"``): each traced flow's congestion window (packets) and smoothed RTT
(ms), two panels over one time axis, each flow in its group's colour (line
styles tell a group's flows apart), the warm-up shaded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from aqmlab.result import Result


def tcp_trace(result: Result, flows: Sequence[int] | None = None, fig: Figure | None = None) -> Figure:
    """The cwnd and smoothed-RTT figure of ``flows`` (ids; default: up to
    :data:`aqmlab.plot.MAX_LINES` traced flows, taken from each group in turn)."""
    from matplotlib.figure import Figure

    from aqmlab._plot_parts import MAX_LINES, NotRecorded, frame_of, group_colours, shade_warmup
    from aqmlab.plot_sweep import natural_key

    trace = frame_of(result, "tcp_trace")
    if trace.empty:
        raise NotRecorded('the run traced no TCP flow: set [monitor] tcp_trace = "100ms" in the scenario')
    group_of = frame_of(result, "flows").set_index("id")["group"].to_dict()
    traced = list(dict.fromkeys(trace["flow"]))
    if flows is None:
        by_group: dict[str, list[int]] = {}
        for flow in traced:
            by_group.setdefault(group_of[flow], []).append(flow)
        queues = [by_group[g] for g in sorted(by_group, key=natural_key)]
        flows = []
        while len(flows) < MAX_LINES and any(queues):
            for q in queues:
                if q and len(flows) < MAX_LINES:
                    flows.append(q.pop(0))
    else:
        missing = [f for f in flows if f not in traced]
        if missing:
            raise ValueError(
                f"flows = {missing}: not traced (traced: {traced[:20]}{' ...' if len(traced) > 20 else ''})"
            )
    if fig is None:
        fig = Figure(figsize=(8, 6), layout="constrained")
    cwnd_ax, rtt_ax = fig.subplots(2, 1, sharex=True)
    palette = group_colours(result)
    styles = ("-", "--", ":", "-.")
    seen: dict[str, int] = {}
    for flow in flows:
        rows = trace[trace["flow"] == flow]
        group = group_of[flow]
        style = styles[seen.get(group, 0) % len(styles)]
        seen[group] = seen.get(group, 0) + 1
        t = rows["t_s"].to_numpy()
        kw = {"color": palette[group], "linestyle": style, "label": f"flow {flow} ({group})"}
        cwnd_ax.plot(t, rows["cwnd"].to_numpy(dtype=float), **kw)
        rtt_ax.plot(t, rows["srtt_s"].to_numpy(dtype=float) * 1e3, **kw)
    for ax in (cwnd_ax, rtt_ax):
        shade_warmup(result, ax)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    cwnd_ax.set_ylabel("cwnd (packets)")
    cwnd_ax.set_title("Congestion window and smoothed RTT per flow")
    rtt_ax.set_ylabel("smoothed RTT (ms)")
    rtt_ax.set_xlabel("time (s)")
    cwnd_ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return fig
