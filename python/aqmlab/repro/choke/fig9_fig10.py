"""CHOKe paper, Figs. 9 and 10 (section III-C): five UDP flows; basic CHOKe, CHOKe
with 5 drops, and self-adjusting CHOKe.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, band, trend, within
from aqmlab.repro._helpers import increasing, mean_sd, means, pyplot, rate, save, with_flows, with_qdisc
from aqmlab.repro.choke._common import CITE, FIG9_RATES, PAPER, bottleneck_numbers, qdisc

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result


# ---- Figs. 9 and 10: five UDP flows -------------------------------------------------

FIG9_VARIANTS = {
    "basic": {"candidates": 1},  # drop 2
    "drop5": {"candidates": 4},  # "CHOKe with 5 drops"
    # m = 2i candidates in region i of k = 2 (the paper gives no k; 2 makes the
    # largest m = 4, the same as "5 drops" of Fig. 9).
    "self-adjusting": {"candidates": 1, "adaptive_candidates": True, "regions": 2},
}


def _fig9_points(bases: Mapping[str, dict[str, Any]], variants=("basic", "drop5")) -> list[Point]:
    base = bases["choke-fig9"]
    pts = []
    for v in variants:
        q = with_qdisc(base, **qdisc("choke", 30, 60, **FIG9_VARIANTS[v]))
        for mbps in FIG9_RATES:
            pts.append(Point({"variant": v, "udp_mbps": mbps}, with_flows(q, "udp", rate=rate(mbps))))
    return pts


def _fig9_measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    out = bottleneck_numbers(result)
    # five UDP flows of equal rate: each holds a fifth of their total share.
    out["udp_qshare_each"] = out["udp_qshare"] / 5
    return out


def _fig9_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 9 / III-C"
    top = max(FIG9_RATES)
    basic_udp = means(runs, "udp_mbps", "udp_kbps", variant="basic")
    checks = [
        trend(
            "basic: all-UDP throughput rises with the UDP rate",
            src,
            "goes up monotonically",
            increasing(basic_udp),
        ),
    ]
    m, sd = mean_sd(runs, "tcp_kbps", variant="basic", udp_mbps=top)
    checks.append(
        band(
            f"basic: all-TCP throughput at {top:g} Mbit/s per UDP flow",
            src,
            "'almost no bandwidth left'",
            m,
            0,
            100,
            "kbit/s",
            "<= 100 (10% of link)",
            sd=sd,
        )
    )
    m, sd = mean_sd(runs, "udp_qshare_each", variant="basic", udp_mbps=top)
    checks.append(
        within(
            f"basic: queue share of each UDP flow at {top:g} Mbit/s",
            src,
            20,
            100 * m,
            10,
            "%",
            paper_text="'around 20% of the queue'",
            sd=100 * sd,
        )
    )
    basic = means(runs, "udp_mbps", "tcp_kbps", variant="basic")
    drop5 = means(runs, "udp_mbps", "tcp_kbps", variant="drop5")
    rates = [r for r in FIG9_RATES if r >= 0.5]
    checks.append(
        trend(
            "drop 5: all-TCP throughput above basic at every rate >= 0.5 Mbit/s",
            src,
            "boosts the throughput of the TCP flows",
            all(drop5[r] > basic[r] for r in rates),
        )
    )
    return checks


def _fig9_plot(runs: pd.DataFrame, path: Path, title: str = "CHOKe Fig. 9: 32 TCP + 5 UDP") -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for v in [v for v in FIG9_VARIANTS if v in set(runs["variant"])]:
        g = runs[runs["variant"] == v].groupby("udp_mbps")
        ax.errorbar(
            g["udp_kbps"].mean().index,
            g["udp_kbps"].mean(),
            g["udp_kbps"].std(),
            fmt="o-",
            label=f"{v}: 5 UDP",
        )
        ax.errorbar(
            g["tcp_kbps"].mean().index,
            g["tcp_kbps"].mean(),
            g["tcp_kbps"].std(),
            fmt="s--",
            label=f"{v}: 32 TCP",
        )
    ax.set_xscale("log")
    ax.set_xlabel("arrival rate of each UDP flow (Mbit/s)")
    ax.set_ylabel("aggregate throughput (kbit/s)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    save(fig, path)


EXP_FIG9 = Experiment(
    id="choke-fig9",
    paper=PAPER,
    title="Five UDP flows: basic CHOKe vs CHOKe with 5 drops",
    source="Fig. 9, section III-C",
    scenarios=("choke-fig9",),
    points=_fig9_points,
    measure=_fig9_measure,
    checks=_fig9_checks,
    plot=_fig9_plot,
)


def _fig10_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 10 / III-C"
    basic = means(runs, "udp_mbps", "tcp_kbps", variant="basic")
    adaptive = means(runs, "udp_mbps", "tcp_kbps", variant="self-adjusting")
    basic_udp = means(runs, "udp_mbps", "udp_kbps", variant="basic")
    adaptive_udp = means(runs, "udp_mbps", "udp_kbps", variant="self-adjusting")
    rates = [r for r in FIG9_RATES if r >= 0.5]
    top = max(FIG9_RATES)
    return [
        trend(
            "self-adjusting: all-TCP throughput above basic at every rate >= 0.5 Mbit/s",
            src,
            "'works well' with multiple unresponsive flows",
            all(adaptive[r] > basic[r] for r in rates),
        ),
        trend(
            f"self-adjusting: all-UDP throughput at {top:g} Mbit/s below basic",
            src,
            "UDP regulated",
            adaptive_udp[top] < basic_udp[top],
            note=f"{adaptive_udp[top]:.0f} vs {basic_udp[top]:.0f} kbit/s",
        ),
    ]


EXP_FIG10 = Experiment(
    id="choke-fig10",
    paper=PAPER,
    title="Five UDP flows: self-adjusting CHOKe (m = 2i over k = 2 regions)",
    source="Fig. 10, section III-C",
    scenarios=("choke-fig9",),
    points=lambda bases: _fig9_points(bases, variants=("basic", "self-adjusting")),
    measure=_fig9_measure,
    checks=_fig10_checks,
    plot=lambda runs, path: _fig9_plot(runs, path, "CHOKe Fig. 10: self-adjusting, 32 TCP + 5 UDP"),
)
