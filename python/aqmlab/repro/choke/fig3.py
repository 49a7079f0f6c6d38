"""CHOKe paper, Fig. 3 (section III-A): UDP throughput under DropTail, RED and CHOKe."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, band, within
from aqmlab.repro._helpers import mean_sd, pyplot, save, with_qdisc
from aqmlab.repro.choke._common import CITE, LINK_KBPS, PAPER, measure_bottleneck, qdisc

if TYPE_CHECKING:
    import pandas as pd


# ---- Fig. 3: UDP throughput under DropTail, RED and CHOKe -----------------------------


def _fig3_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = bases["choke-fig3"]
    return [
        Point({"qdisc": kind}, with_qdisc(base, **qdisc(kind, 100, 200)))
        for kind in ("droptail", "red", "choke")
    ]


def _fig3_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 3 / III-A"
    checks = []
    for kind, name in (("droptail", "DropTail"), ("red", "RED")):
        m, sd = mean_sd(runs, "udp_kbps", qdisc=kind)
        checks.append(
            band(
                f"{name}: UDP throughput",
                src,
                "> 95% of 1 Mbit/s",
                m,
                900,
                LINK_KBPS,
                "kbit/s",
                ">= 900 (-5 pp)",
                sd=sd,
                paper_value=950,
            )
        )
        m, sd = mean_sd(runs, "tcp_kbps", qdisc=kind)
        checks.append(
            band(
                f"{name}: all TCP throughput",
                src,
                "50 kbit/s (the rest)",
                m,
                0,
                100,
                "kbit/s",
                "<= 100 (+50)",
                sd=sd,
                paper_value=50,
            )
        )
    m, sd = mean_sd(runs, "udp_kbps", qdisc="choke")
    checks.append(within("CHOKe: UDP throughput", src, 250, m, 100, "kbit/s", sd=sd))
    m, sd = mean_sd(runs, "tcp_kbps", qdisc="choke")
    checks.append(within("CHOKe: all TCP throughput", src, 750, m, 100, "kbit/s", sd=sd))
    return checks


def _fig3_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    order = ["droptail", "red", "choke"]
    g = runs.groupby("qdisc")
    mean, sd = g[["udp_kbps", "tcp_kbps"]].mean().loc[order], g[["udp_kbps", "tcp_kbps"]].std().loc[order]
    fig, ax = plt.subplots(figsize=(6, 4))
    x = range(len(order))
    ax.bar([i - 0.2 for i in x], mean["udp_kbps"], 0.4, yerr=sd["udp_kbps"], label="UDP (ours)")
    ax.bar([i + 0.2 for i in x], mean["tcp_kbps"], 0.4, yerr=sd["tcp_kbps"], label="32 TCP (ours)")
    ax.plot([0, 1, 2], [950, 950, 250], "k*", ms=10, label="UDP (paper)")
    ax.set_xticks(list(x), ["DropTail", "RED", "CHOKe"])
    ax.set_ylabel("throughput at the bottleneck (kbit/s)")
    ax.set_title("CHOKe Fig. 3: 32 TCP + 1 UDP (2 Mbit/s) over 1 Mbit/s")
    ax.legend()
    save(fig, path)


EXP_FIG3 = Experiment(
    id="choke-fig3",
    paper=PAPER,
    title="UDP throughput under DropTail, RED and CHOKe",
    source="Fig. 3, section III-A",
    scenarios=("choke-fig3",),
    points=_fig3_points,
    measure=measure_bottleneck,
    checks=_fig3_checks,
    plot=_fig3_plot,
)
