"""The aggregate fair queueing paper's experiments (seed 003).

Sun & Shin, *TCP Performance under Aggregate Fair Queueing* (section III's livelock,
sections V-VI's simulations, Figs. 4-8, and section VII-A's aggregation advantage,
eqs. (1)-(3)).

The network of Fig. 3 (``scenarios/aggfq-fig3.toml``, written by :func:`aqmlab.networks.aggfq`):
N = 100 TCP Reno sources, each on its own 64 kbit/s, 10 ms link to one of n = 10
ingress routers IR_i (N/n sources each); IR_i -> CR1 and CR2 -> ER_i at 640 kbit/s,
2 ms; the bottleneck CR1 -> CR2 at 3.2 Mbit/s, 2 ms; each sink on its own 64 kbit/s,
10 ms link from ER_i. A CBR UDP flow at 25% of the bottleneck, weight 10, enters at
CR1 and leaves at CR2 on links of its own (the paper does not say where it enters;
no IR link could carry 800 kbit/s). The flows of IR_i form aggregate i; the UDP flow
is aggregate n + 1. 1000-byte packets; 6 runs of 100 s per point, the first 20 s
discarded. Only CR1 -> CR2's queue changes between schemes; every other link is
DropTail of 50 packets (ns-2's default) and none is ever loaded above its rate.

Schemes (section V): <aggregate FQ, ALQD>, <aggregate FQ, ALQD+>, <per-flow FQ,
ALQD> (``kind = "wfq"``, ``classify = "aggregate" | "flow"``), <FIFO, DropTail>,
<FIFO, RED> (min_th 25%, max_th 75% of the buffer, w_q 0.002; max_p 0.1, ns-2's
default: the paper gives none).

Fairness (section V): each TCP flow's goodput averaged over the runs of a point,
then the coefficient of variation (population standard deviation over mean) of
those averages. The figures are lost from our copy: every check is a statement of
the text, with the threshold that makes "much", "significantly", "comparable" and
"virtually identical" a number fixed (and committed) before any full run; see
REPRODUCTION.md.

``python -m aqmlab.networks --flows 10 --aggregates 10 --bottleneck 3200``
prints the network as a scenario file with other N, n or rates.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from aqmlab.networks import aggfq as network
from aqmlab.networks import flow_name
from aqmlab.repro._core import (
    Check,
    Experiment,
    Point,
    band,
    register,
    trend,
    within,
)

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result

PAPER = "aggfq"
CITE = "Sun & Shin"
BOTTLENECK = "CR1->CR2"

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


def with_bottleneck(scenario: Mapping[str, Any], q: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``scenario`` whose CR1 -> CR2 link has the queue ``q``."""
    out = copy.deepcopy(dict(scenario))
    for lk in out["topology"]["links"]:
        if (lk["from"], lk["to"]) == ("CR1", "CR2"):
            lk["qdisc"] = dict(q)
            return out
    raise KeyError(f"scenario {out.get('name')!r} has no link CR1 -> CR2")


# ---- measurements -----------------------------------------------------------------


def _measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
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


def _select(runs: pd.DataFrame, **where: Any) -> pd.DataFrame:
    sel = runs
    for k, v in where.items():
        sel = sel[sel[k] == v]
    if sel.empty:
        raise KeyError(f"no runs with {where}")
    return sel


def _flow_columns(sel: pd.DataFrame, aggregate: int | None = None) -> list[str]:
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
    return cov(sel[_flow_columns(sel, aggregate)].mean(axis=0))


def aggregate_fairness(sel: pd.DataFrame) -> float:
    """CoV over the aggregates of their goodput (the sum of their flows'), averaged
    over the runs (Fig. 5(b))."""
    cols = _flow_columns(sel)
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


def _mean_over_buffers(s: pd.DataFrame, column: str, scheme: str, **where: Any) -> float:
    sel = _select(s, scheme=scheme, **where)
    return float(sel[column].mean())


def _per_buffer(s: pd.DataFrame, column: str, scheme: str, **where: Any) -> dict[int, float]:
    sel = _select(s, scheme=scheme, **where)
    return {int(b): float(v) for b, v in zip(sel["buffer"], sel[column])}


def _points(net: str, rate_kbit: int, schemes: Sequence[str], scenario_for) -> list[Point]:
    return [
        Point(
            {"net": net, "rate_kbit": rate_kbit, "scheme": scheme, "buffer": b},
            scenario_for(scheme, b),
        )
        for scheme in schemes
        for b in BUFFERS
    ]


def _base_points(bases: Mapping[str, dict[str, Any]], rate_kbit: int, schemes=tuple(SCHEME_NAMES)):
    if rate_kbit == RATE_DEFAULT:
        base = bases["aggfq-fig3"]
    else:
        base = network(bottleneck_kbit=rate_kbit)
    return _points("base", rate_kbit, schemes, lambda s, b: with_bottleneck(base, qdisc(s, b)))


# ---- plots ------------------------------------------------------------------------


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _panels(runs: pd.DataFrame, path, panels: list[tuple[str, str, dict[str, Any]]], title: str) -> None:
    """One panel per (column of :func:`summary`, y label, selection), a line per
    scheme against the buffer size."""
    plt = _plt()
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
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _summary_table(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {"summary": summary(runs).set_index([c for c in ("net", "rate_kbit", "scheme", "buffer")])}


# ---- Fig. 4: identical flows, goodput and fairness against the buffer ------------

#: "much larger" throughput: at least 10% more. (Holding the UDP flow to its
#: weighted share, 1/11 of the link instead of 25%, alone gives TCP about 20% more.)
MUCH_LARGER = 1.10
#: "much worse" / "much fairer" / "improved significantly" as CoV ratios.
MUCH_WORSE = 1.5
MUCH_BETTER = 0.75
#: "comparable to that of FIFO": within a factor 2 of the mean of the two FIFO CoVs.
COMPARABLE = (0.5, 2.0)


def _fig4_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    return _base_points(bases, RATE_DEFAULT)


def _fig4_checks(runs: pd.DataFrame) -> list[Check]:
    s = summary(runs)
    s = s[(s.net == "base") & (s.rate_kbit == RATE_DEFAULT)]
    src = f"{CITE}, Fig. 4 / VI-A"
    checks: list[Check] = []
    fifo_best = {b: max(_per_buffer(s, "tcp_kbps", f)[b] for f in FIFO_SCHEMES) for b in BUFFERS}
    for scheme in FQ_SCHEMES:
        g = _per_buffer(s, "tcp_kbps", scheme)
        worst = min(g[b] / fifo_best[b] for b in BUFFERS)
        checks.append(
            band(
                f"{SCHEME_NAMES[scheme]}: TCP goodput / best FIFO's, smallest over buffers",
                src,
                "much larger than the two FIFO schemes",
                worst,
                MUCH_LARGER,
                math.inf,
                "ratio",
                f">= {MUCH_LARGER} at every buffer",
                note=", ".join(f"B={b}: {g[b] / fifo_best[b]:.3f}" for b in BUFFERS),
            )
        )
    agg = _per_buffer(s, "tcp_kbps", "agg_alqd")
    flow = _per_buffer(s, "tcp_kbps", "flow_alqd")
    checks.append(
        trend(
            "aggregate FQ ALQD's TCP goodput above per-flow FQ ALQD's (mean over buffers)",
            src,
            "the throughput under aggregate FQ is even better than that of per-flow FQ",
            sum(agg.values()) > sum(flow.values()),
            note=", ".join(f"B={b}: {agg[b]:.0f} vs {flow[b]:.0f} kbit/s" for b in BUFFERS),
        )
    )
    small, large = BUFFERS[0], BUFFERS[-1]
    gain_small = agg[small] / flow[small] - 1
    gain_large = agg[large] / flow[large] - 1
    checks.append(
        trend(
            "aggregate over per-flow FQ: larger gain at the smallest buffer than at the largest",
            src,
            "especially when the buffer size is small",
            gain_small > gain_large,
            note=f"B={small}: {100 * gain_small:+.1f}%, B={large}: {100 * gain_large:+.1f}%",
        )
    )
    c = {k: _mean_over_buffers(s, "cov", k) for k in SCHEME_NAMES}
    checks.append(
        band(
            "CoV: aggregate FQ ALQD / per-flow FQ ALQD (means over buffers)",
            src,
            "fairness of aggregate FQ under ALQD is much worse than per-flow FQ",
            c["agg_alqd"] / c["flow_alqd"],
            MUCH_WORSE,
            math.inf,
            "ratio",
            f">= {MUCH_WORSE}",
            note=f"CoV {c['agg_alqd']:.3f} vs {c['flow_alqd']:.3f}",
        )
    )
    fifo = (c["fifo_droptail"] + c["fifo_red"]) / 2
    checks.append(
        band(
            "CoV: aggregate FQ ALQD / mean of the FIFO schemes'",
            src,
            "[fairness of aggregate FQ under ALQD] is comparable to that of FIFO queuing",
            c["agg_alqd"] / fifo,
            COMPARABLE[0],
            COMPARABLE[1],
            "ratio",
            f"{COMPARABLE[0]}..{COMPARABLE[1]}",
            note=f"CoV {c['agg_alqd']:.3f}; DropTail {c['fifo_droptail']:.3f}, RED {c['fifo_red']:.3f}",
        )
    )
    checks.append(
        band(
            "CoV: aggregate FQ ALQD+ / aggregate FQ ALQD",
            src,
            "the fairness under ALQD+ is improved significantly",
            c["agg_alqd_plus"] / c["agg_alqd"],
            0.0,
            MUCH_BETTER,
            "ratio",
            f"<= {MUCH_BETTER}",
            note=f"CoV {c['agg_alqd_plus']:.3f} vs {c['agg_alqd']:.3f}",
        )
    )
    checks.append(
        band(
            "CoV: aggregate FQ ALQD+ / the fairer FIFO scheme's",
            f"{CITE}, abstract",
            "we improve significantly the fairness of aggregate-flow FQ over FIFO queueing",
            c["agg_alqd_plus"] / min(c["fifo_droptail"], c["fifo_red"]),
            0.0,
            MUCH_BETTER,
            "ratio",
            f"<= {MUCH_BETTER}",
        )
    )
    return checks


def _fig4_plot(runs: pd.DataFrame, path) -> None:
    _panels(
        runs,
        path,
        [
            ("tcp_kbps", "TCP goodput (kbit/s)", {"rate_kbit": RATE_DEFAULT}),
            ("cov", "CoV of per-flow goodput", {"rate_kbit": RATE_DEFAULT}),
        ],
        "Sun & Shin Fig. 4: identical flows, 3.2 Mbit/s",
    )


register(
    Experiment(
        id="aggfq-fig4",
        paper=PAPER,
        title="Identical flows: TCP goodput and CoV against the buffer, five schemes",
        source="Fig. 4, section VI-A",
        scenarios=("aggfq-fig3",),
        points=_fig4_points,
        measure=_measure,
        checks=_fig4_checks,
        plot=_fig4_plot,
        seeds=SEEDS,
        extra_tables=_summary_table,
    )
)


# ---- Fig. 5: fairness within aggregate 1 and among the aggregates ------------------

#: "very close to that of per-flow FQ": CoVs among the aggregates within 0.05.
VERY_CLOSE = 0.05


def _fig5_checks(runs: pd.DataFrame) -> list[Check]:
    s = summary(runs)
    src = f"{CITE}, Fig. 5 / VI-A"
    c1 = {k: _mean_over_buffers(s, "cov_agg1", k) for k in SCHEME_NAMES}
    ca = {k: _mean_over_buffers(s, "cov_aggregates", k) for k in SCHEME_NAMES}
    checks = [
        band(
            "CoV within aggregate 1: aggregate FQ ALQD / per-flow FQ ALQD",
            src + " (a)",
            "the unfairness problem exists among the flows within the same aggregate",
            c1["agg_alqd"] / c1["flow_alqd"],
            MUCH_WORSE,
            math.inf,
            "ratio",
            f">= {MUCH_WORSE}",
            note=f"CoV {c1['agg_alqd']:.3f} vs {c1['flow_alqd']:.3f}",
        ),
        trend(
            "CoV within aggregate 1: ALQD+ below ALQD (aggregate FQ)",
            src + " (a), IV",
            "ALQD+ improves the fairness of aggregate FQ (its packet match protects a flow "
            "from another's arrivals)",
            c1["agg_alqd_plus"] < c1["agg_alqd"],
            note=f"CoV {c1['agg_alqd_plus']:.3f} vs {c1['agg_alqd']:.3f}",
        ),
        trend(
            "aggregate FQ ALQD: CoV among aggregates below CoV within aggregate 1",
            src,
            "the unfairness exists within the same aggregate; among aggregates it is close to per-flow FQ",
            ca["agg_alqd"] < c1["agg_alqd"],
            note=f"{ca['agg_alqd']:.3f} vs {c1['agg_alqd']:.3f}",
        ),
    ]
    for scheme in ("agg_alqd", "agg_alqd_plus"):
        checks.append(
            within(
                f"CoV among the aggregates: {SCHEME_NAMES[scheme]} minus per-flow FQ ALQD",
                src + " (b)",
                0.0,
                ca[scheme] - ca["flow_alqd"],
                VERY_CLOSE,
                "",
                paper_text="very close to that of per-flow FQ",
                note=f"CoV {ca[scheme]:.3f} vs {ca['flow_alqd']:.3f}",
            )
        )
    return checks


def _fig5_plot(runs: pd.DataFrame, path) -> None:
    _panels(
        runs,
        path,
        [
            ("cov_agg1", "CoV among the flows of aggregate 1", {}),
            ("cov_aggregates", "CoV among the 10 aggregates", {}),
        ],
        "Sun & Shin Fig. 5: fairness within aggregate 1 (a) and among aggregates (b)",
    )


register(
    Experiment(
        id="aggfq-fig5",
        paper=PAPER,
        title="CoV among the 10 flows of aggregate 1 and among the 10 aggregates",
        source="Fig. 5, section VI-A",
        scenarios=("aggfq-fig3",),
        points=_fig4_points,
        measure=_measure,
        checks=_fig5_checks,
        plot=_fig5_plot,
        seeds=SEEDS,
        extra_tables=_summary_table,
    )
)


# ---- Fig. 6: less congestion (4.8 Mbit/s) and none at the core (10 Mbit/s) -------

#: "virtually identical": goodput within 2%, CoV within 0.02.
IDENTICAL_GOODPUT = 0.02
IDENTICAL_COV = 0.02


def _fig6_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    return (
        _base_points(bases, RATE_DEFAULT)
        + _base_points(bases, RATE_LOW_CONGESTION)
        + _base_points(bases, RATE_UNCONGESTED, FQ_SCHEMES)
    )


def _fig6_checks(runs: pd.DataFrame) -> list[Check]:
    s = summary(runs)
    src = f"{CITE}, Fig. 6 / VI-A"
    checks = []
    for scheme in ("agg_alqd", "agg_alqd_plus"):
        low = _mean_over_buffers(s, "cov", scheme, rate_kbit=RATE_LOW_CONGESTION)
        high = _mean_over_buffers(s, "cov", scheme, rate_kbit=RATE_DEFAULT)
        checks.append(
            band(
                f"{SCHEME_NAMES[scheme]}: CoV at 4.8 / at 3.2 Mbit/s",
                src + " (a, b)",
                "since the congestion is less severe, aggregate FQ is much fairer than in the previous case",
                low / high,
                0.0,
                MUCH_BETTER,
                "ratio",
                f"<= {MUCH_BETTER}",
                note=f"CoV {low:.3f} vs {high:.3f}",
            )
        )
    flow_g = _mean_over_buffers(s, "tcp_kbps", "flow_alqd", rate_kbit=RATE_UNCONGESTED)
    flow_c = _mean_over_buffers(s, "cov", "flow_alqd", rate_kbit=RATE_UNCONGESTED)
    for scheme in ("agg_alqd", "agg_alqd_plus"):
        g = _mean_over_buffers(s, "tcp_kbps", scheme, rate_kbit=RATE_UNCONGESTED)
        c = _mean_over_buffers(s, "cov", scheme, rate_kbit=RATE_UNCONGESTED)
        checks.append(
            within(
                f"10 Mbit/s: {SCHEME_NAMES[scheme]} TCP goodput / per-flow FQ's",
                src,
                1.0,
                g / flow_g,
                IDENTICAL_GOODPUT,
                "ratio",
                paper_text="virtually identical throughput (bottleneck above 8 Mbit/s)",
                note=f"{g:.0f} vs {flow_g:.0f} kbit/s",
            )
        )
        checks.append(
            within(
                f"10 Mbit/s: {SCHEME_NAMES[scheme]} CoV minus per-flow FQ's",
                src,
                0.0,
                c - flow_c,
                IDENTICAL_COV,
                "",
                paper_text="virtually identical fairness (bottleneck above 8 Mbit/s)",
                note=f"CoV {c:.3f} vs {flow_c:.3f}",
            )
        )
    return checks


def _fig6_plot(runs: pd.DataFrame, path) -> None:
    _panels(
        runs,
        path,
        [
            ("tcp_kbps", "TCP goodput (kbit/s)", {"rate_kbit": RATE_LOW_CONGESTION}),
            ("cov", "CoV", {"rate_kbit": RATE_LOW_CONGESTION}),
            ("tcp_kbps", "TCP goodput (kbit/s)", {"rate_kbit": RATE_UNCONGESTED}),
            ("cov", "CoV", {"rate_kbit": RATE_UNCONGESTED}),
        ],
        "Sun & Shin Fig. 6: lower congestion (4.8 Mbit/s) and none at the core (10 Mbit/s)",
    )


register(
    Experiment(
        id="aggfq-fig6",
        paper=PAPER,
        title="Lower congestion: 4.8 Mbit/s, and 10 Mbit/s where per-flow and aggregate FQ agree",
        source="Fig. 6, section VI-A",
        scenarios=("aggfq-fig3",),
        points=_fig6_points,
        measure=_measure,
        checks=_fig6_checks,
        plot=_fig6_plot,
        seeds=SEEDS,
        extra_tables=_summary_table,
    )
)


# ---- Fig. 7: heterogeneous RTTs -------------------------------------------------

COMPARED = ("agg_alqd_plus", "fifo_droptail", "fifo_red")
#: Fig. 7(a): the first source of each aggregate; (b): all of aggregate 1.
LONG_ONE_PER_AGGREGATE = tuple((i, 1) for i in range(1, 11))
LONG_AGGREGATE_1 = tuple((1, j) for j in range(1, 11))
#: "much lower" throughput: at most 3/4 of the others'; "almost the same": within 15%.
MUCH_LOWER = 0.75
ALMOST_SAME = 0.15


def _fig7_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    nets = {"rtt_one_per_aggregate": LONG_ONE_PER_AGGREGATE, "rtt_aggregate_1": LONG_AGGREGATE_1}
    points = []
    for net, long in nets.items():
        base = network(long_rtt=long)
        points += _points(
            net, RATE_DEFAULT, COMPARED, lambda s, b, base=base: with_bottleneck(base, qdisc(s, b))
        )
    return points


def _long_ratio(runs: pd.DataFrame, net: str, long: Sequence[tuple[int, int]]) -> float:
    """Mean goodput of the long-RTT flows over that of the others (aggregate FQ
    ALQD+, every buffer and run)."""
    sel = _select(runs, net=net, scheme="agg_alqd_plus")
    names = {f"g.{flow_name(i, j)}" for i, j in long}
    cols = _flow_columns(sel)
    longs = [c for c in cols if c in names]
    others = [c for c in cols if c not in names]
    return float(sel[longs].to_numpy().mean() / sel[others].to_numpy().mean())


def _fig7_checks(runs: pd.DataFrame) -> list[Check]:
    s = summary(runs)
    src = f"{CITE}, Fig. 7 / VI-B"
    checks = []
    cases = {
        "rtt_one_per_aggregate": "one long-RTT flow per aggregate",
        "rtt_aggregate_1": "aggregate 1 long-RTT",
    }
    c = {}
    for net, what in cases.items():
        c[net] = {k: _mean_over_buffers(s, "cov", k, net=net) for k in COMPARED}
        fifo = min(c[net]["fifo_droptail"], c[net]["fifo_red"])
        checks.append(
            trend(
                f"{what}: CoV of aggregate FQ ALQD+ below both FIFO schemes'",
                src,
                "in both cases, the fairness of aggregate FQ is better than that of the two FIFO "
                "queuing schemes",
                c[net]["agg_alqd_plus"] < fifo,
                note=f"{c[net]['agg_alqd_plus']:.3f} vs DropTail {c[net]['fifo_droptail']:.3f}, "
                f"RED {c[net]['fifo_red']:.3f}",
            )
        )
    one, all1 = c["rtt_one_per_aggregate"]["agg_alqd_plus"], c["rtt_aggregate_1"]["agg_alqd_plus"]
    checks.append(
        band(
            "aggregate FQ ALQD+: CoV, aggregate 1 long / one long per aggregate",
            src,
            "the fairness of the second case is significantly better than that of the first",
            all1 / one,
            0.0,
            MUCH_BETTER,
            "ratio",
            f"<= {MUCH_BETTER}",
            note=f"CoV {all1:.3f} vs {one:.3f}",
        )
    )
    checks.append(
        band(
            "one long per aggregate: long-RTT flows' goodput / the others'",
            src,
            "in the first case, flows with longer RTTs had much lower throughput than other flows",
            _long_ratio(runs, "rtt_one_per_aggregate", LONG_ONE_PER_AGGREGATE),
            0.0,
            MUCH_LOWER,
            "ratio",
            f"<= {MUCH_LOWER}",
        )
    )
    checks.append(
        within(
            "aggregate 1 long: long-RTT flows' goodput / the others'",
            src,
            1.0,
            _long_ratio(runs, "rtt_aggregate_1", LONG_AGGREGATE_1),
            ALMOST_SAME,
            "ratio",
            paper_text="in the second case, on average almost the same throughput as others",
        )
    )
    return checks


def _fig7_plot(runs: pd.DataFrame, path) -> None:
    _panels(
        runs,
        path,
        [
            ("cov", "CoV", {"net": "rtt_one_per_aggregate"}),
            ("cov", "CoV", {"net": "rtt_aggregate_1"}),
        ],
        "Sun & Shin Fig. 7: one 100 ms flow per aggregate (left), aggregate 1 at 100 ms (right)",
    )


register(
    Experiment(
        id="aggfq-fig7",
        paper=PAPER,
        title="Heterogeneous RTTs: one long flow per aggregate, or all of aggregate 1",
        source="Fig. 7, section VI-B",
        scenarios=(),
        points=_fig7_points,
        measure=_measure,
        checks=_fig7_checks,
        plot=_fig7_plot,
        seeds=SEEDS,
        extra_tables=_summary_table,
    )
)


# ---- Fig. 8: inaccurate weights -------------------------------------------------


def _fig8_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    counts = [11, 9] + [10] * 8
    nets = {
        # (a): 11 and 9 flows, every aggregate's weight left at 10.
        "weights_11_9": (network(flows=counts), {i: 10.0 for i in range(1, 12)}),
        # (b): 10 FTP and 4 on/off sources per aggregate, weight 12.
        "telnet": (network(telnets=4), {**{i: 12.0 for i in range(1, 11)}, 11: 10.0}),
    }
    points = []
    for net, (base, weights) in nets.items():
        points += _points(
            net,
            RATE_DEFAULT,
            COMPARED,
            lambda s, b, base=base, weights=weights: with_bottleneck(base, qdisc(s, b, weights)),
        )
    return points


def _fig8_checks(runs: pd.DataFrame) -> list[Check]:
    s = summary(runs)
    src = f"{CITE}, Fig. 8 / VI-C"
    a = {k: _mean_over_buffers(s, "cov", k, net="weights_11_9") for k in COMPARED}
    b = {k: _mean_over_buffers(s, "cov", k, net="telnet") for k in COMPARED}
    return [
        trend(
            "11 and 9 flows at weight 10: CoV of aggregate FQ ALQD+ below both FIFO schemes'",
            src + " (a)",
            "the fairness of aggregate FQ is still better than that of FIFO queuing",
            a["agg_alqd_plus"] < min(a["fifo_droptail"], a["fifo_red"]),
            note=f"{a['agg_alqd_plus']:.3f} vs DropTail {a['fifo_droptail']:.3f}, RED {a['fifo_red']:.3f}",
        ),
        trend(
            "aggregate FQ ALQD+: CoV with on/off sources (b) below 11/9 flows (a)",
            src + " (b)",
            "the unfairness is less severe [than in (a)]",
            b["agg_alqd_plus"] < a["agg_alqd_plus"],
            note=f"{b['agg_alqd_plus']:.3f} vs {a['agg_alqd_plus']:.3f}; FIFO in (b): DropTail "
            f"{b['fifo_droptail']:.3f}, RED {b['fifo_red']:.3f}",
        ),
    ]


def _fig8_plot(runs: pd.DataFrame, path) -> None:
    _panels(
        runs,
        path,
        [("cov", "CoV", {"net": "weights_11_9"}), ("cov", "CoV of the FTP flows", {"net": "telnet"})],
        "Sun & Shin Fig. 8: 11/9 flows at weight 10 (a); 10 FTP + 4 on/off, weight 12 (b)",
    )


register(
    Experiment(
        id="aggfq-fig8",
        paper=PAPER,
        title="Robustness to inaccurate weights: 11/9 flows; 10 FTP + 4 on/off sources",
        source="Fig. 8, section VI-C",
        scenarios=(),
        points=_fig8_points,
        measure=_measure,
        checks=_fig8_checks,
        plot=_fig8_plot,
        seeds=SEEDS,
        extra_tables=_summary_table,
    )
)


# ---- Section III: DropFront's livelock ---------------------------------------------

LIVELOCK_BUFFER = 100
#: "totally shut down": at most 5% of its weighted share; the fix: within 15% of it.
SHUT_DOWN = 0.05
SHARE_TOL = 0.15

#: Section III's own setting, added after the first full run (REPRODUCTION.md): in
#: Fig. 3's network the CBR flow takes the shared buffer from the TCP aggregates, so
#: the others are not "busy all the time" and the tags never matter. Here they are:
#: 4 TCP flows whose windows (4 packets each) cannot fill the 40-packet buffer and
#: whose round trip (4 ms) is far below their packets' queueing time, so their
#: queues never empty, and a CBR flow at twice its share (weight 1 of 5: 200 of
#: 1000 kbit/s) and above C / 4, the rate at which its tags outrun theirs.
SEC3_LINK_KBIT = 1000
SEC3_CBR_KBIT = 400


def _sec3_scenario(q: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": "aggfq-sec3",
        "duration": "60s",
        "warmup": "10s",
        "seed": 1,
        "topology": {
            "kind": "dumbbell",
            "access": {"rate": "100Mbit", "delay": "0.5ms"},
            "bottleneck": {"rate": f"{SEC3_LINK_KBIT}kbit", "delay": "0.5ms"},
        },
        "qdisc": dict(q, limit=40),
        "flows": [
            {"name": "tcp", "kind": "tcp", "variant": "reno", "count": 4, "max_window": 4},
            {"name": "udp", "kind": "cbr", "count": 1, "rate": f"{SEC3_CBR_KBIT}kbit"},
        ],
    }


def _livelock_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = bases["aggfq-fig3"]
    points = []
    for classify in ("flow", "aggregate"):
        for fix in (False, True):
            q = {
                "kind": "wfq",
                "classify": classify,
                "buffer": "dropfront",
                "livelock_fix": fix,
                "limit": LIVELOCK_BUFFER,
            }
            points.append(Point({"net": "fig3", "classify": classify, "fix": fix}, with_bottleneck(base, q)))
            points.append(Point({"net": "sec3", "classify": classify, "fix": fix}, _sec3_scenario(q)))
    return points


def udp_share_kbps(rate_kbit: int = RATE_DEFAULT, flows: int = 100, udp_weight: float = 10) -> float:
    """The UDP flow's weighted share of the bottleneck: w / (N + w) of it."""
    return rate_kbit * udp_weight / (flows + udp_weight)


def _livelock_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, III"
    shares = {
        "fig3": (udp_share_kbps(), "Fig. 3's network", "800 offered"),
        "sec3": (udp_share_kbps(SEC3_LINK_KBIT, 4, 1), "4 TCP of window 4", f"{SEC3_CBR_KBIT} offered"),
    }
    checks = []
    for net, (share, where, offered) in shares.items():
        for classify in ("flow", "aggregate"):
            off = _select(runs, net=net, classify=classify, fix=False)["udp_kbps"]
            on = _select(runs, net=net, classify=classify, fix=True)["udp_kbps"]
            checks.append(
                band(
                    f"{where}, {classify} WFQ + DropFront, no fix: UDP goodput / its weighted share",
                    src,
                    "the flow/aggregate could totally be shut down at the router",
                    float(off.mean()) / share,
                    0.0,
                    SHUT_DOWN,
                    "ratio",
                    f"<= {SHUT_DOWN}",
                    sd=float(off.std(ddof=1)) / share,
                    note=f"{float(off.mean()):.1f} kbit/s of a {share:.0f} kbit/s share ({offered})",
                )
            )
            checks.append(
                within(
                    f"{where}, {classify} WFQ + DropFront, fix: UDP goodput / its weighted share",
                    src,
                    1.0,
                    float(on.mean()) / share,
                    SHARE_TOL,
                    "ratio",
                    sd=float(on.std(ddof=1)) / share,
                    paper_text="the fix: dropped heads do not advance the queue's start time",
                    note=f"{float(on.mean()):.1f} kbit/s of a {share:.0f} kbit/s share ({offered})",
                )
            )
    return checks


def _livelock_plot(runs: pd.DataFrame, path) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    shares = {"fig3": udp_share_kbps(), "sec3": udp_share_kbps(SEC3_LINK_KBIT, 4, 1)}
    titles = {
        "fig3": "Fig. 3's network: 800 kbit/s CBR, weight 10",
        "sec3": "4 TCP (window 4), 400 kbit/s CBR",
    }
    for ax, net in zip(axes, ("fig3", "sec3")):
        labels, values = [], []
        for (classify, fix), sel in _select(runs, net=net).groupby(["classify", "fix"], sort=True):
            labels.append(f"{classify}\n{'fix' if fix else 'no fix'}")
            values.append(float(sel["udp_kbps"].mean()))
        ax.bar(labels, values, color="C1")
        ax.axhline(shares[net], color="k", ls="--", lw=1, label="weighted share")
        ax.set_ylabel("UDP goodput (kbit/s)")
        ax.legend(fontsize=7)
        ax.set_title(titles[net], fontsize=9)
    fig.suptitle("Sun & Shin III: WFQ + DropFront, with and without the livelock fix", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


register(
    Experiment(
        id="aggfq-livelock",
        paper=PAPER,
        title="DropFront's livelock: an over-rate CBR under WFQ, with and without the fix",
        source="section III",
        scenarios=("aggfq-fig3",),
        points=_livelock_points,
        measure=_measure,
        checks=_livelock_checks,
        plot=_livelock_plot,
        seeds=SEEDS,
    )
)


# ---- Section VII-A: the aggregation advantage -----------------------------------

#: Aggregate 1 reserves weight R = 4 (four flows of weight 1); the other flows are
#: R_hat = 4 single flows of weight 1. Cases: (active flows of aggregate 1, active
#: others).
ADV_RESERVED = 4
ADV_OTHERS = 4
ADV_CASES = {"eq1": (4, 4), "eq2": (2, 4), "eq3": (4, 2)}
ADV_LINK_KBIT = 1000
#: Greedy CBR sources share a fluid-like link: within 5% of the formula.
ADV_TOL = 0.05


def advantage_share(case: str, classify: str) -> float:
    """A flow of aggregate 1's fraction of the link, from eqs. (1)-(3): r_i = 1,
    R = 4, R_hat = 4; r' = 2 flows absent from aggregate 1 (eq. 2) or from the others
    (eq. 3)."""
    mine, others = ADV_CASES[case]
    if classify == "flow":
        return 1.0 / (mine + others)
    # Aggregate 1 keeps its reserved R; the others are their own aggregates.
    return ADV_RESERVED / (ADV_RESERVED + others) / mine


def _advantage_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    points = []
    for case, (mine, others) in ADV_CASES.items():
        for classify in ("flow", "aggregate"):
            q: dict[str, Any] = {"kind": "wfq", "classify": classify, "buffer": "lqd", "limit": 100}
            if classify == "aggregate":
                q["weights"] = {"1": float(ADV_RESERVED)}
            flows = [
                {
                    "name": "mine",
                    "kind": "cbr",
                    "count": mine,
                    "aggregate": 1,
                    "rate": f"{ADV_LINK_KBIT}kbit",
                },
                {"name": "others", "kind": "cbr", "count": others, "rate": f"{ADV_LINK_KBIT}kbit"},
            ]
            scenario = {
                "name": "aggfq-advantage",
                "duration": "30s",
                "warmup": "5s",
                "seed": 1,
                "topology": {
                    "kind": "dumbbell",
                    "access": {"rate": "10Mbit", "delay": "1ms"},
                    "bottleneck": {"rate": f"{ADV_LINK_KBIT}kbit", "delay": "1ms"},
                },
                "qdisc": q,
                "flows": flows,
            }
            points.append(Point({"case": case, "classify": classify}, scenario))
    return points


def _advantage_measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    f = result.flows
    mine = f[f["group"] == "mine"]["goodput_bps"]
    return {"share": float(mine.mean()) / (ADV_LINK_KBIT * 1e3)}


def _advantage_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, VII-A"
    checks = []
    got = {}
    what = {
        "eq1": "all flows backlogged",
        "eq2": "2 of aggregate 1's 4 flows idle",
        "eq3": "2 of the 4 other flows idle",
    }
    for case in ADV_CASES:
        for classify in ("flow", "aggregate"):
            sel = _select(runs, case=case, classify=classify)["share"]
            got[(case, classify)] = float(sel.mean())
            formula = advantage_share(case, classify)
            checks.append(
                within(
                    f"{what[case]}, {classify} FQ: a flow of aggregate 1's share of the link",
                    src + f", eq. ({case[2]})",
                    formula,
                    float(sel.mean()),
                    ADV_TOL,
                    "",
                    relative=True,
                    sd=float(sel.std(ddof=1)) if len(sel) > 1 else None,
                    paper_text=f"{formula:.4f} (r_i = 1, R = {ADV_RESERVED}, R_hat = {ADV_OTHERS})",
                )
            )
    checks.append(
        trend(
            "aggregate FQ gives the flow more than per-flow FQ when its aggregate's others idle",
            src + ", eq. (2)",
            "flow i implicitly has a larger weight due to the absence of some other flows in the "
            "same aggregate",
            got[("eq2", "aggregate")] > got[("eq2", "flow")],
        )
    )
    return checks


def _advantage_plot(runs: pd.DataFrame, path) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    xs, labels = [], []
    for k, case in enumerate(ADV_CASES):
        for d, (classify, color) in enumerate((("flow", "C0"), ("aggregate", "C1"))):
            x = 3 * k + d
            sel = _select(runs, case=case, classify=classify)["share"]
            ax.bar(x, float(sel.mean()), color=color, label=f"{classify} FQ" if k == 0 else None)
            ax.plot([x - 0.4, x + 0.4], [advantage_share(case, classify)] * 2, "k-", lw=1.5)
            xs.append(x)
            labels.append(f"{case}\n{classify}")
    ax.set_xticks(xs, labels, fontsize=7)
    ax.set_ylabel("share of the link, one flow of aggregate 1")
    ax.legend(fontsize=7)
    ax.set_title("Sun & Shin VII-A: measured (bars) against eqs. (1)-(3) (lines)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


register(
    Experiment(
        id="aggfq-advantage",
        paper=PAPER,
        title="Aggregation advantage: a flow's share when others idle, against eqs. (1)-(3)",
        source="section VII-A, eqs. (1)-(3)",
        scenarios=(),
        points=_advantage_points,
        measure=_advantage_measure,
        checks=_advantage_checks,
        plot=_advantage_plot,
        seeds=2,
    )
)
