"""Aggregate FQ paper, Figs. 7 and 8 (sections VI-B, VI-C): aggregate FQ with ALQD+
against the FIFO schemes under heterogeneous round trips and inaccurate weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from aqmlab.networks import aggfq as network
from aqmlab.networks import flow_name
from aqmlab.repro._core import Check, Experiment, Point, band, trend, within
from aqmlab.repro._helpers import select, with_qdisc
from aqmlab.repro.aggfq._common import (
    BOTTLENECK_ENDS,
    CITE,
    MUCH_BETTER,
    PAPER,
    RATE_DEFAULT,
    SEEDS,
    buffer_points,
    flow_columns,
    mean_over_buffers,
    measure,
    qdisc,
    scheme_panels,
    summary,
    summary_table,
)

if TYPE_CHECKING:
    import pandas as pd


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
        points += buffer_points(
            net,
            RATE_DEFAULT,
            COMPARED,
            lambda s, b, base=base: with_qdisc(base, qdisc(s, b), link=BOTTLENECK_ENDS),
        )
    return points


def _long_ratio(runs: pd.DataFrame, net: str, long: Sequence[tuple[int, int]]) -> float:
    """Mean goodput of the long-RTT flows over that of the others (aggregate FQ
    ALQD+, every buffer and run)."""
    sel = select(runs, net=net, scheme="agg_alqd_plus")
    names = {f"g.{flow_name(i, j)}" for i, j in long}
    cols = flow_columns(sel)
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
        c[net] = {k: mean_over_buffers(s, "cov", k, net=net) for k in COMPARED}
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
    scheme_panels(
        runs,
        path,
        [
            ("cov", "CoV", {"net": "rtt_one_per_aggregate"}),
            ("cov", "CoV", {"net": "rtt_aggregate_1"}),
        ],
        "Sun & Shin Fig. 7: one 100 ms flow per aggregate (left), aggregate 1 at 100 ms (right)",
    )


EXP_FIG7 = Experiment(
    id="aggfq-fig7",
    paper=PAPER,
    title="Heterogeneous RTTs: one long flow per aggregate, or all of aggregate 1",
    source="Fig. 7, section VI-B",
    scenarios=(),
    points=_fig7_points,
    measure=measure,
    checks=_fig7_checks,
    plot=_fig7_plot,
    seeds=SEEDS,
    extra_tables=summary_table,
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
        points += buffer_points(
            net,
            RATE_DEFAULT,
            COMPARED,
            lambda s, b, base=base, weights=weights: with_qdisc(
                base, qdisc(s, b, weights), link=BOTTLENECK_ENDS
            ),
        )
    return points


def _fig8_checks(runs: pd.DataFrame) -> list[Check]:
    s = summary(runs)
    src = f"{CITE}, Fig. 8 / VI-C"
    a = {k: mean_over_buffers(s, "cov", k, net="weights_11_9") for k in COMPARED}
    b = {k: mean_over_buffers(s, "cov", k, net="telnet") for k in COMPARED}
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
    scheme_panels(
        runs,
        path,
        [("cov", "CoV", {"net": "weights_11_9"}), ("cov", "CoV of the FTP flows", {"net": "telnet"})],
        "Sun & Shin Fig. 8: 11/9 flows at weight 10 (a); 10 FTP + 4 on/off, weight 12 (b)",
    )


EXP_FIG8 = Experiment(
    id="aggfq-fig8",
    paper=PAPER,
    title="Robustness to inaccurate weights: 11/9 flows; 10 FTP + 4 on/off sources",
    source="Fig. 8, section VI-C",
    scenarios=(),
    points=_fig8_points,
    measure=measure,
    checks=_fig8_checks,
    plot=_fig8_plot,
    seeds=SEEDS,
    extra_tables=summary_table,
)
