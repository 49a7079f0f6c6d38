"""What the aggregate FQ paper's experiments share: the network's rates and
buffers, each scheme's queue at CR1 -> CR2, what a run is measured by (per-flow
goodput) and the paper's fairness index over runs, the plots, and the numbers
that stand for the text's "much", "significantly" and "comparable". The
package's docstring gives the setup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from aqmlab.networks import aggfq as network
from aqmlab.repro._core import Point
from aqmlab.repro._helpers import pyplot, save, select, with_qdisc

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result


PAPER = "aggfq"
CITE = "Sun & Shin"
BOTTLENECK = "CR1->CR2"
#: The bottleneck's ends, as :func:`~aqmlab.repro._helpers.with_qdisc` names a link.
BOTTLENECK_ENDS = ("CR1", "CR2")

#: Buffer sizes (packets) of the x axis of Figs. 4-8. The paper's axis is lost; a
#: span from a quarter of a packet per flow to four per flow, log-spaced.
BUFFERS = (25, 50, 100, 200, 400)
#: Runs per point (section V: "six independent simulation runs").
SEEDS = 6

#: The bottleneck rates (kbit/s): Fig. 4's default, Fig. 6's lower congestion, and
#: Fig. 6's "greater than 8 Mbps" (10 Mbit/s: with the UDP flow at 25% of it, the
#: sources offer 6.4 + 2.5 Mbit/s, below the link).
RATE_DEFAULT = 3200
RATE_LOW_CONGESTION = 4800
RATE_UNCONGESTED = 10_000

#: The queue of CR1 -> CR2 for each scheme, given the buffer B (packets).
SCHEME_NAMES = {
    "agg_alqd": "aggregate FQ, ALQD",
    "agg_alqd_plus": "aggregate FQ, ALQD+",
    "flow_alqd": "per-flow FQ, ALQD",
    "fifo_droptail": "FIFO, DropTail",
    "fifo_red": "FIFO, RED",
}
FQ_SCHEMES = ("agg_alqd", "agg_alqd_plus", "flow_alqd")
FIFO_SCHEMES = ("fifo_droptail", "fifo_red")


def qdisc(scheme: str, buffer: int, weights: Mapping[int, float] | None = None) -> dict[str, Any]:
    """The bottleneck queue of ``scheme`` with a ``buffer``-packet buffer;
    ``weights`` (aggregate id -> weight) for aggregate FQ (Fig. 8)."""
    if scheme == "fifo_droptail":
        return {"kind": "droptail", "limit": buffer}
    if scheme == "fifo_red":
        return {
            "kind": "red",
            "limit": buffer,
            "min_th": 0.25 * buffer,
            "max_th": 0.75 * buffer,
            "w_q": 0.002,
            "max_p": 0.1,
            "mean_pkt_size": 1000,
        }
    classify, _, buf = scheme.partition("_")
    if scheme not in FQ_SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r} (known: {', '.join(SCHEME_NAMES)})")
    q: dict[str, Any] = {
        "kind": "wfq",
        "classify": "aggregate" if classify == "agg" else "flow",
        "buffer": buf,
        "limit": buffer,
    }
    if weights and classify == "agg":
        q["weights"] = {str(k): float(v) for k, v in sorted(weights.items())}
    return q


# ---- measurements -----------------------------------------------------------------


def measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    """Per TCP flow goodput (kbit/s, ``g.<group>``), the total over the bulk TCP
    flows, and the UDP flow's goodput."""
    f = result.flows
    out: dict[str, float] = {}
    bulk = f[f["kind"] == "tcp"]
    out["tcp_kbps"] = float(bulk["goodput_bps"].sum()) / 1e3
    out["udp_kbps"] = float(f[f["kind"] == "cbr"]["goodput_bps"].sum()) / 1e3
    out["web_kbps"] = float(f[f["kind"] == "web"]["goodput_bps"].sum()) / 1e3
    for group, bps in zip(bulk["group"], bulk["goodput_bps"]):
        out[f"g.{group}"] = float(bps) / 1e3
    return out


def flow_columns(sel: pd.DataFrame, aggregate: int | None = None) -> list[str]:
    """The per-flow goodput columns (``g.<group>``) of every bulk TCP flow, or of
    those of ``aggregate``, present in every row of ``sel``."""
    prefix = "g." if aggregate is None else f"g.a{aggregate:02d}f"
    return [c for c in sel.columns if c.startswith(prefix) and sel[c].notna().all()]


def cov(values) -> float:
    """Coefficient of variation: population standard deviation over the mean."""
    import numpy as np

    x = np.asarray(values, dtype=float)
    return float(x.std() / x.mean()) if x.mean() > 0 else float("nan")


def fairness(sel: pd.DataFrame, aggregate: int | None = None) -> float:
    """The paper's index: each flow's goodput averaged over the runs, then their CoV
    (over every bulk TCP flow, or over those of ``aggregate``)."""
    return cov(sel[flow_columns(sel, aggregate)].mean(axis=0))


def aggregate_fairness(sel: pd.DataFrame) -> float:
    """CoV over the aggregates of their goodput (the sum of their flows'), averaged
    over the runs (Fig. 5(b))."""
    cols = flow_columns(sel)
    means = sel[cols].mean(axis=0)
    totals = means.groupby([c[2:5] for c in cols]).sum()
    return cov(totals)


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per point (every label key but the seed): TCP goodput (mean over runs, with
    its sd), UDP goodput, and the fairness indices."""
    import pandas as pd

    keys = [c for c in ("net", "rate_kbit", "scheme", "buffer") if c in runs.columns]
    rows = []
    for values, sel in runs.groupby(keys, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        rows.append(
            {
                **dict(zip(keys, values)),
                "tcp_kbps": float(sel["tcp_kbps"].mean()),
                "tcp_kbps_sd": float(sel["tcp_kbps"].std(ddof=1)) if len(sel) > 1 else 0.0,
                "udp_kbps": float(sel["udp_kbps"].mean()),
                "cov": fairness(sel),
                "cov_agg1": fairness(sel, 1),
                "cov_aggregates": aggregate_fairness(sel),
                "runs": len(sel),
            }
        )
    return pd.DataFrame(rows)


def mean_over_buffers(s: pd.DataFrame, column: str, scheme: str, **where: Any) -> float:
    """The mean of ``column`` of :func:`summary` over the buffer sizes of ``scheme``."""
    sel = select(s, scheme=scheme, **where)
    return float(sel[column].mean())


def per_buffer(s: pd.DataFrame, column: str, scheme: str, **where: Any) -> dict[int, float]:
    """``column`` of :func:`summary` for ``scheme``, by buffer size."""
    sel = select(s, scheme=scheme, **where)
    return {int(b): float(v) for b, v in zip(sel["buffer"], sel[column])}


def buffer_points(net: str, rate_kbit: int, schemes: Sequence[str], scenario_for) -> list[Point]:
    """One point per scheme and buffer size of :data:`BUFFERS`, its scenario from
    ``scenario_for(scheme, buffer)``."""
    return [
        Point(
            {"net": net, "rate_kbit": rate_kbit, "scheme": scheme, "buffer": b},
            scenario_for(scheme, b),
        )
        for scheme in schemes
        for b in BUFFERS
    ]


def base_points(bases: Mapping[str, dict[str, Any]], rate_kbit: int, schemes=tuple(SCHEME_NAMES)):
    """The points of Fig. 3's network with the bottleneck at ``rate_kbit``."""
    if rate_kbit == RATE_DEFAULT:
        base = bases["aggfq-fig3"]
    else:
        base = network(bottleneck_kbit=rate_kbit)
    return buffer_points(
        "base", rate_kbit, schemes, lambda s, b: with_qdisc(base, qdisc(s, b), link=BOTTLENECK_ENDS)
    )


# ---- plots ------------------------------------------------------------------------


def scheme_panels(
    runs: pd.DataFrame, path, panels: list[tuple[str, str, dict[str, Any]]], title: str
) -> None:
    """One panel per (column of :func:`summary`, y label, selection), a line per
    scheme against the buffer size."""
    plt = pyplot()
    s = summary(runs)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.3 * len(panels), 3.6), squeeze=False)
    for ax, (column, ylabel, where) in zip(axes[0], panels):
        sel = s
        for k, v in where.items():
            sel = sel[sel[k] == v]
        for scheme, name in SCHEME_NAMES.items():
            line = sel[sel["scheme"] == scheme].sort_values("buffer")
            if not line.empty:
                ax.plot(line["buffer"], line[column], "o-", ms=3, label=name)
        ax.set_xscale("log")
        ax.set_xlabel("buffer (packets)")
        ax.set_ylabel(ylabel)
        ax.set_title(", ".join(f"{k} {v}" for k, v in where.items()) or column, fontsize=8)
        ax.legend(fontsize=6)
    fig.suptitle(title, fontsize=10)
    save(fig, path)


def summary_table(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """An experiment's ``extra_tables``: :func:`summary`, indexed by point."""
    return {"summary": summary(runs).set_index([c for c in ("net", "rate_kbit", "scheme", "buffer")])}


# ---- the text's words as numbers (Figs. 4-7) --------------------------------------

#: "much larger" throughput: at least 10% more. (Holding the UDP flow to its
#: weighted share, 1/11 of the link instead of 25%, alone gives TCP about 20% more.)
MUCH_LARGER = 1.10
#: "much worse" / "much fairer" / "improved significantly" as CoV ratios.
MUCH_WORSE = 1.5
MUCH_BETTER = 0.75
#: "comparable to that of FIFO": within a factor 2 of the mean of the two FIFO CoVs.
COMPARABLE = (0.5, 2.0)
