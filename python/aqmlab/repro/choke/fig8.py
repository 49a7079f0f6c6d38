"""CHOKe paper, Fig. 8 (section III-C): more drop candidates (drop 2, 3 and 4), one
2 Mbit/s UDP flow.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, trend
from aqmlab.repro._helpers import increasing, means, pyplot, rate, save, with_flows, with_qdisc
from aqmlab.repro.choke._common import CITE, PAPER, bottleneck_numbers, qdisc

if TYPE_CHECKING:
    import pandas as pd


# ---- Fig. 8: more drop candidates, one UDP flow ------------------------------------

#: "CHOKe with drop m" has m - 1 candidates (section III-C): drop 2, 3, 4.
FIG8_CANDIDATES = (1, 2, 3)


def _fig8_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = with_flows(bases["choke-fig5"], "udp", rate=rate(2.0))
    return [
        Point({"drops": m + 1}, with_qdisc(base, **qdisc("choke", 30, 60, candidates=m)))
        for m in FIG8_CANDIDATES
    ]


def _fig8_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 8 / III-C"
    udp = means(runs, "drops", "udp_kbps")
    tcp = means(runs, "drops", "tcp_kbps")
    gain23, gain34 = udp[2] - udp[3], udp[3] - udp[4]
    return [
        trend(
            "UDP throughput falls from drop 2 to 3 to 4",
            src,
            "better control with more drops",
            increasing(list(udp)[::-1]),
        ),
        trend("all-TCP throughput rises from drop 2 to 3 to 4", src, "(implied)", increasing(list(tcp))),
        trend(
            "drop 3 -> 4 gains less than drop 2 -> 3",
            f"{CITE}, III-C footnote 8",
            "improvement 3 -> 4 'very small'",
            gain34 < gain23,
            note=f"UDP falls {gain23:.0f} then {gain34:.0f} kbit/s",
        ),
    ]


def _fig8_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    g = runs.groupby("drops")
    fig, ax = plt.subplots(figsize=(6, 4))
    for col, label in (("udp_kbps", "UDP"), ("tcp_kbps", "32 TCP")):
        ax.errorbar(g[col].mean().index, g[col].mean(), g[col].std(), fmt="o-", label=label)
    ax.set_xticks(list(g["udp_kbps"].mean().index))
    ax.set_xlabel("CHOKe with drop m (m - 1 candidates)")
    ax.set_ylabel("throughput (kbit/s)")
    ax.set_title("CHOKe Fig. 8: multiple drops, UDP at 2 Mbit/s")
    ax.legend()
    save(fig, path)


EXP_FIG8 = Experiment(
    id="choke-fig8",
    paper=PAPER,
    title="CHOKe with drop 2, 3 and 4 (1-3 candidates), one 2 Mbit/s UDP flow",
    source="Fig. 8, section III-C",
    scenarios=("choke-fig5",),
    points=_fig8_points,
    measure=lambda label, result: bottleneck_numbers(result),
    checks=_fig8_checks,
    plot=_fig8_plot,
)
