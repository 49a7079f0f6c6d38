"""Aggregate FQ paper, Figs. 4 and 5 (section VI-A): identical flows; TCP goodput
and fairness against the buffer, then fairness within aggregate 1 and among the
aggregates, from the same runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, band, trend, within
from aqmlab.repro.aggfq._common import (
    BUFFERS,
    CITE,
    COMPARABLE,
    FIFO_SCHEMES,
    FQ_SCHEMES,
    MUCH_BETTER,
    MUCH_LARGER,
    MUCH_WORSE,
    PAPER,
    RATE_DEFAULT,
    SCHEME_NAMES,
    SEEDS,
    base_points,
    mean_over_buffers,
    measure,
    per_buffer,
    scheme_panels,
    summary,
    summary_table,
)

if TYPE_CHECKING:
    import pandas as pd


# ---- Fig. 4: identical flows, goodput and fairness against the buffer ------------


def _fig4_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    return base_points(bases, RATE_DEFAULT)


def _fig4_checks(runs: pd.DataFrame) -> list[Check]:
    s = summary(runs)
    s = s[(s.net == "base") & (s.rate_kbit == RATE_DEFAULT)]
    src = f"{CITE}, Fig. 4 / VI-A"
    checks: list[Check] = []
    fifo_best = {b: max(per_buffer(s, "tcp_kbps", f)[b] for f in FIFO_SCHEMES) for b in BUFFERS}
    for scheme in FQ_SCHEMES:
        g = per_buffer(s, "tcp_kbps", scheme)
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
    agg = per_buffer(s, "tcp_kbps", "agg_alqd")
    flow = per_buffer(s, "tcp_kbps", "flow_alqd")
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
    c = {k: mean_over_buffers(s, "cov", k) for k in SCHEME_NAMES}
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
    scheme_panels(
        runs,
        path,
        [
            ("tcp_kbps", "TCP goodput (kbit/s)", {"rate_kbit": RATE_DEFAULT}),
            ("cov", "CoV of per-flow goodput", {"rate_kbit": RATE_DEFAULT}),
        ],
        "Sun & Shin Fig. 4: identical flows, 3.2 Mbit/s",
    )


EXP_FIG4 = Experiment(
    id="aggfq-fig4",
    paper=PAPER,
    title="Identical flows: TCP goodput and CoV against the buffer, five schemes",
    source="Fig. 4, section VI-A",
    scenarios=("aggfq-fig3",),
    points=_fig4_points,
    measure=measure,
    checks=_fig4_checks,
    plot=_fig4_plot,
    seeds=SEEDS,
    extra_tables=summary_table,
)


# ---- Fig. 5: fairness within aggregate 1 and among the aggregates ------------------

#: "very close to that of per-flow FQ": CoVs among the aggregates within 0.05.
VERY_CLOSE = 0.05


def _fig5_checks(runs: pd.DataFrame) -> list[Check]:
    s = summary(runs)
    src = f"{CITE}, Fig. 5 / VI-A"
    c1 = {k: mean_over_buffers(s, "cov_agg1", k) for k in SCHEME_NAMES}
    ca = {k: mean_over_buffers(s, "cov_aggregates", k) for k in SCHEME_NAMES}
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
    scheme_panels(
        runs,
        path,
        [
            ("cov_agg1", "CoV among the flows of aggregate 1", {}),
            ("cov_aggregates", "CoV among the 10 aggregates", {}),
        ],
        "Sun & Shin Fig. 5: fairness within aggregate 1 (a) and among aggregates (b)",
    )


EXP_FIG5 = Experiment(
    id="aggfq-fig5",
    paper=PAPER,
    title="CoV among the 10 flows of aggregate 1 and among the 10 aggregates",
    source="Fig. 5, section VI-A",
    scenarios=("aggfq-fig3",),
    points=_fig4_points,
    measure=measure,
    checks=_fig5_checks,
    plot=_fig5_plot,
    seeds=SEEDS,
    extra_tables=summary_table,
)
