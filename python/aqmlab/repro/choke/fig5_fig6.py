"""CHOKe paper, Figs. 5 and 6 (sections III-A, IV-C): a UDP rate sweep, CHOKe against
RED; the UDP flow's throughput, drop percentage and queue occupancy.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, band, trend, within
from aqmlab.repro._helpers import increasing, mean_sd, means, pyplot, rate, save, with_flows, with_qdisc
from aqmlab.repro.choke._common import CITE, FIG5_RATES, LINK_KBPS, PAPER, measure_bottleneck, qdisc

if TYPE_CHECKING:
    import pandas as pd


# ---- Figs. 5 and 6: a UDP rate sweep, CHOKe vs RED, min_th 30, max_th 60 -----------


def _fig5_points(bases: Mapping[str, dict[str, Any]], kinds=("choke", "red")) -> list[Point]:
    base = bases["choke-fig5"]
    pts = []
    for kind in kinds:
        q = with_qdisc(base, **qdisc(kind, 30, 60))
        for mbps in FIG5_RATES:
            pts.append(Point({"qdisc": kind, "udp_mbps": mbps}, with_flows(q, "udp", rate=rate(mbps))))
    return pts


FIG5_DROPS = (  # (UDP Mbit/s, % of UDP packets dropped, where the paper says it)
    (0.1, 23.0, "III-A"),
    (0.5, 57.3, "IV-C"),
    (1.0, 74.1, "IV-C"),
    (3.0, 92.4, "IV-C"),
    (10.0, 98.3, "III-A"),
)


def _fig5_checks(runs: pd.DataFrame) -> list[Check]:
    checks = []
    for mbps, pct, where in FIG5_DROPS:
        m, sd = mean_sd(runs, "udp_drop_pct", qdisc="choke", udp_mbps=mbps)
        checks.append(
            within(
                f"CHOKe: UDP dropped at {mbps:g} Mbit/s", f"{CITE}, Fig. 5 / {where}", pct, m, 10, "%", sd=sd
            )
        )
    m, sd = mean_sd(runs, "udp_kbps", qdisc="choke", udp_mbps=1.0)
    checks.append(
        within(
            "CHOKe: UDP throughput at 1 Mbit/s",
            f"{CITE}, Fig. 5 / IV-C",
            280,
            m,
            100,
            "kbit/s",
            sd=sd,
            paper_text="about 280 kbit/s",
        )
    )
    tcp = means(runs, "udp_mbps", "tcp_mean_kbps", qdisc="choke")
    spread = float(tcp.max() / tcp.min())
    checks.append(
        band(
            "CHOKe: mean TCP throughput, max/min over loads",
            f"{CITE}, Fig. 5 / III-A",
            "'stays almost constant'",
            spread,
            1.0,
            1.5,
            "ratio",
            "<= 1.5",
        )
    )
    m, sd = mean_sd(runs, "udp_kbps", qdisc="red", udp_mbps=10.0)
    checks.append(
        band(
            "RED: UDP throughput at 10 Mbit/s",
            f"{CITE}, Fig. 5 / III-A",
            "'use up all the network bandwidth'",
            m,
            900,
            LINK_KBPS,
            "kbit/s",
            ">= 900",
            sd=sd,
        )
    )
    m, sd = mean_sd(runs, "tcp_kbps", qdisc="red", udp_mbps=10.0)
    checks.append(
        band(
            "RED: all TCP throughput at 10 Mbit/s",
            f"{CITE}, Fig. 5 / III-A",
            "'starve out the well-behaving flows'",
            m,
            0,
            100,
            "kbit/s",
            "<= 100",
            sd=sd,
        )
    )
    checks.append(
        trend(
            "CHOKe: UDP drop share rises with the UDP rate",
            f"{CITE}, Fig. 5 / III-A",
            "goes up",
            increasing(means(runs, "udp_mbps", "udp_drop_pct", qdisc="choke")),
        )
    )
    return checks


def _fig5_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for kind, style in (("choke", "o-"), ("red", "s--")):
        sel = runs[runs["qdisc"] == kind].groupby("udp_mbps")
        a.errorbar(
            sel["udp_kbps"].mean().index,
            sel["udp_kbps"].mean(),
            sel["udp_kbps"].std(),
            fmt=style,
            label=f"{kind.upper() if kind == 'red' else 'CHOKe'} UDP",
        )
        a.plot(
            sel["tcp_mean_kbps"].mean().index,
            sel["tcp_mean_kbps"].mean(),
            style,
            alpha=0.5,
            label=f"{'RED' if kind == 'red' else 'CHOKe'} mean TCP flow",
        )
        b.errorbar(
            sel["udp_drop_pct"].mean().index,
            sel["udp_drop_pct"].mean(),
            sel["udp_drop_pct"].std(),
            fmt=style,
            label="RED" if kind == "red" else "CHOKe",
        )
    b.plot([r for r, _, _ in FIG5_DROPS], [p for _, p, _ in FIG5_DROPS], "k*", ms=10, label="paper (CHOKe)")
    for ax in (a, b):
        ax.set_xscale("log")
        ax.set_xlabel("UDP arrival rate (Mbit/s)")
        ax.legend(fontsize=8)
    a.set_ylabel("throughput (kbit/s)")
    b.set_ylabel("UDP packets dropped (%)")
    fig.suptitle("CHOKe Fig. 5: 32 TCP + 1 UDP, min_th 30, max_th 60")
    save(fig, path)


EXP_FIG5 = Experiment(
    id="choke-fig5",
    paper=PAPER,
    title="UDP throughput and drop percentage vs UDP rate, CHOKe and RED",
    source="Fig. 5, sections III-A, IV-C",
    scenarios=("choke-fig5",),
    points=_fig5_points,
    measure=measure_bottleneck,
    checks=_fig5_checks,
    plot=_fig5_plot,
)


def _fig6_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 6 / III-A"
    checks = []
    for mbps in (0.1, 1.0, 10.0):
        m, sd = mean_sd(runs, "mean_queue", udp_mbps=mbps)
        checks.append(
            band(
                f"mean queue at {mbps:g} Mbit/s",
                src,
                "controlled 'as RED does'",
                m,
                30,
                60,
                "packets",
                "in [min_th, max_th] = [30, 60]",
                sd=sd,
            )
        )
    share = means(runs, "udp_mbps", "udp_qshare")
    loads = [0.1, 1.0, 10.0]
    checks.append(
        trend(
            "UDP share of the queue rises with its rate",
            src,
            "increases",
            increasing(share.loc[loads]),
            note="over 0.1, 1 and 10 Mbit/s",
        )
    )
    m, sd = mean_sd(runs, "udp_qshare", udp_mbps=10.0)
    checks.append(
        within(
            "UDP share of the queue at 10 Mbit/s",
            f"{CITE}, IV-C footnote 10",
            50,
            100 * m,
            15,
            "%",
            paper_text="'half the buffer space'",
            sd=100 * sd,
        )
    )
    return checks


def _fig6_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    g = runs.groupby("udp_mbps")
    q, share = g["mean_queue"].mean(), g["udp_qshare"].mean()
    x = range(len(q))
    fig, ax = plt.subplots(figsize=(7, 4))
    udp = q * share
    ax.bar(x, q - udp, label="TCP (ours)")
    ax.bar(x, udp, bottom=q - udp, label="UDP (ours)")
    ax.set_xticks(list(x), [f"{r:g}" for r in q.index])
    ax.set_xlabel("UDP arrival rate (Mbit/s)")
    ax.set_ylabel("mean queue (packets)")
    ax.set_title("CHOKe Fig. 6: time-averaged queue split between UDP and TCP")
    ax.legend(fontsize=8)
    save(fig, path)


EXP_FIG6 = Experiment(
    id="choke-fig6",
    paper=PAPER,
    title="Queue occupancy of the UDP flow vs its rate (CHOKe)",
    source="Fig. 6, sections III-A, IV-C",
    scenarios=("choke-fig5",),
    points=lambda bases: _fig5_points(bases, kinds=("choke",)),
    measure=measure_bottleneck,
    checks=_fig6_checks,
    plot=_fig6_plot,
)
