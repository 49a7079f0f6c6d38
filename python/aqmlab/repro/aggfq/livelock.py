"""Aggregate FQ paper, section III: DropFront's livelock, an over-rate CBR flow
under WFQ with and without the fix, in Fig. 3's network and in section III's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, band, within
from aqmlab.repro._helpers import kbit, pyplot, save, select, with_qdisc
from aqmlab.repro.aggfq._common import BOTTLENECK_ENDS, CITE, PAPER, RATE_DEFAULT, SEEDS, measure

if TYPE_CHECKING:
    import pandas as pd


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
            "bottleneck": {"rate": kbit(SEC3_LINK_KBIT), "delay": "0.5ms"},
        },
        "qdisc": dict(q, limit=40),
        "flows": [
            {"name": "tcp", "kind": "tcp", "variant": "reno", "count": 4, "max_window": 4},
            {"name": "udp", "kind": "cbr", "count": 1, "rate": kbit(SEC3_CBR_KBIT)},
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
            points.append(
                Point(
                    {"net": "fig3", "classify": classify, "fix": fix},
                    with_qdisc(base, q, link=BOTTLENECK_ENDS),
                )
            )
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
            off = select(runs, net=net, classify=classify, fix=False)["udp_kbps"]
            on = select(runs, net=net, classify=classify, fix=True)["udp_kbps"]
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
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    shares = {"fig3": udp_share_kbps(), "sec3": udp_share_kbps(SEC3_LINK_KBIT, 4, 1)}
    titles = {
        "fig3": "Fig. 3's network: 800 kbit/s CBR, weight 10",
        "sec3": "4 TCP (window 4), 400 kbit/s CBR",
    }
    for ax, net in zip(axes, ("fig3", "sec3")):
        labels, values = [], []
        for (classify, fix), sel in select(runs, net=net).groupby(["classify", "fix"], sort=True):
            labels.append(f"{classify}\n{'fix' if fix else 'no fix'}")
            values.append(float(sel["udp_kbps"].mean()))
        ax.bar(labels, values, color="C1")
        ax.axhline(shares[net], color="k", ls="--", lw=1, label="weighted share")
        ax.set_ylabel("UDP goodput (kbit/s)")
        ax.legend(fontsize=7)
        ax.set_title(titles[net], fontsize=9)
    fig.suptitle("Sun & Shin III: WFQ + DropFront, with and without the livelock fix", fontsize=10)
    save(fig, path)


EXP_LIVELOCK = Experiment(
    id="aggfq-livelock",
    paper=PAPER,
    title="DropFront's livelock: an over-rate CBR under WFQ, with and without the fix",
    source="section III",
    scenarios=("aggfq-fig3",),
    points=_livelock_points,
    measure=measure,
    checks=_livelock_checks,
    plot=_livelock_plot,
    seeds=SEEDS,
)
