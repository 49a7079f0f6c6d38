"""Aggregate FQ paper, Fig. 6 (section VI-A): less congestion (4.8 Mbit/s), and none
at the core (10 Mbit/s), where aggregate and per-flow FQ agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, band, within
from aqmlab.repro.aggfq._common import (
    CITE,
    FQ_SCHEMES,
    MUCH_BETTER,
    PAPER,
    RATE_DEFAULT,
    RATE_LOW_CONGESTION,
    RATE_UNCONGESTED,
    SCHEME_NAMES,
    SEEDS,
    base_points,
    mean_over_buffers,
    measure,
    scheme_panels,
    summary,
    summary_table,
)

if TYPE_CHECKING:
    import pandas as pd


# ---- Fig. 6: less congestion (4.8 Mbit/s) and none at the core (10 Mbit/s) -------

#: "virtually identical": goodput within 2%, CoV within 0.02.
IDENTICAL_GOODPUT = 0.02
IDENTICAL_COV = 0.02


def _fig6_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    return (
        base_points(bases, RATE_DEFAULT)
        + base_points(bases, RATE_LOW_CONGESTION)
        + base_points(bases, RATE_UNCONGESTED, FQ_SCHEMES)
    )


def _fig6_checks(runs: pd.DataFrame) -> list[Check]:
    s = summary(runs)
    src = f"{CITE}, Fig. 6 / VI-A"
    checks = []
    for scheme in ("agg_alqd", "agg_alqd_plus"):
        low = mean_over_buffers(s, "cov", scheme, rate_kbit=RATE_LOW_CONGESTION)
        high = mean_over_buffers(s, "cov", scheme, rate_kbit=RATE_DEFAULT)
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
    flow_g = mean_over_buffers(s, "tcp_kbps", "flow_alqd", rate_kbit=RATE_UNCONGESTED)
    flow_c = mean_over_buffers(s, "cov", "flow_alqd", rate_kbit=RATE_UNCONGESTED)
    for scheme in ("agg_alqd", "agg_alqd_plus"):
        g = mean_over_buffers(s, "tcp_kbps", scheme, rate_kbit=RATE_UNCONGESTED)
        c = mean_over_buffers(s, "cov", scheme, rate_kbit=RATE_UNCONGESTED)
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
    scheme_panels(
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


EXP_FIG6 = Experiment(
    id="aggfq-fig6",
    paper=PAPER,
    title="Lower congestion: 4.8 Mbit/s, and 10 Mbit/s where per-flow and aggregate FQ agree",
    source="Fig. 6, section VI-A",
    scenarios=("aggfq-fig3",),
    points=_fig6_points,
    measure=measure,
    checks=_fig6_checks,
    plot=_fig6_plot,
    seeds=SEEDS,
    extra_tables=summary_table,
)
