"""SFB paper, Fig. 8: TCP flows over varying round-trip times, RED and SFB
(``scenarios/sfb-fig8.toml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, band, trend
from aqmlab.repro._helpers import mean_sd, with_qdisc
from aqmlab.repro.sfb._common import BOTTLENECK_ENDS, CITE, NAMES, PAPER, QDISCS, flow_panels, run_numbers

if TYPE_CHECKING:
    import pandas as pd


# ---- Fig. 8: varying round-trip times -----------------------------------------------


def _fig8_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = bases["sfb-fig8"]
    return [
        Point({"net": "fig8", "qdisc": k}, with_qdisc(base, QDISCS[k], link=BOTTLENECK_ENDS))
        for k in ("red", "sfb")
    ]


def _fig8_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 8 / III-E"
    checks = []
    for k in ("red", "sfb"):
        corr, _ = mean_sd(runs, "rtt_corr", qdisc=k)
        short, _ = mean_sd(runs, "tcp_short_rtt_mbps", qdisc=k)
        long_, _ = mean_sd(runs, "tcp_long_rtt_mbps", qdisc=k)
        checks.append(
            trend(
                f"{NAMES[k]}: shorter round trips get more",
                src,
                "biases towards connections with smaller round-trip times",
                corr < 0 and short > long_,
                note=f"corr(RTT, throughput) {corr:.2f}; 52 ms flows {short:.3f}, 90 ms {long_:.3f} Mbit/s",
            )
        )
        m, sd = mean_sd(runs, "tcp_jain", qdisc=k)
        checks.append(
            band(
                f"{NAMES[k]}: Jain's index over TCP flows",
                src,
                "unfairness is limited",
                m,
                0.75,
                1.0,
                "",
                ">= 0.75",
                sd=sd,
            )
        )
    return checks


def _fig8_plot(runs: pd.DataFrame, path: Path) -> None:
    panels = [("(a) RED", {"qdisc": "red"}), ("(b) SFB", {"qdisc": "sfb"})]
    flow_panels(runs, path, panels, "SFB Fig. 8: TCP throughput over varying round-trip times")


EXP_FIG8 = Experiment(
    id="sfb-fig8",
    paper=PAPER,
    title="TCP flows over varying round-trip times, RED and SFB",
    source="Fig. 8, section III-E",
    scenarios=("sfb-fig8",),
    points=_fig8_points,
    measure=run_numbers,
    checks=_fig8_checks,
    plot=_fig8_plot,
    seeds=3,
)
