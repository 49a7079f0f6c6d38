"""SFRED / NLRED paper, Fig. 11 (section 4.2): DropTail's average queue against N."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, trend
from aqmlab.repro._helpers import means, pyplot, save
from aqmlab.repro.sfred_nlred._common import (
    CITE,
    FIG12,
    NS,
    PAPER,
    bottleneck_numbers,
    fig12_scenario,
    scheme_qdisc,
)

if TYPE_CHECKING:
    import pandas as pd


# ---- Fig. 11: DropTail's average queue against N ------------------------------------


def _fig11_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    return [
        Point({"scheme": "droptail", "n": n}, fig12_scenario(bases[FIG12], n, scheme_qdisc("droptail")))
        for n in NS
    ]


def _fig11_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 11 / 4.2"
    q = means(runs, "n", "avg_queue")
    # "roughly directly proportional to the number of active TCP flows": rising
    # with N (a step down of at most 2 packets allowed: noise, or the buffer's cap).
    rising = all(b >= a - 2 for a, b in zip(q.values, q.values[1:]))
    below_cap = q[q < 0.9 * 120]
    slope_ok = len(below_cap) >= 3 and below_cap.iloc[-1] > 2 * below_cap.iloc[0]
    return [
        trend("DropTail average queue rises with N", src, "roughly proportional to N", rising),
        trend(
            "below the buffer's cap, the queue at least doubles across the N range",
            src,
            "roughly proportional to N",
            slope_ok,
            note=f"queue {q.iloc[0]:.1f} at N={q.index[0]} .. {q.iloc[-1]:.1f} at N={q.index[-1]}",
        ),
    ]


def _fig11_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    g = runs.groupby("n")["avg_queue"]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.errorbar(g.mean().index, g.mean(), yerr=g.std(), marker="o")
    ax.set_xlabel("number of flows N")
    ax.set_ylabel("average queue (packets)")
    ax.set_title("Fig. 11: DropTail, 120-packet buffer")
    save(fig, path)


EXP_FIG11 = Experiment(
    id="sfred-nlred-fig11",
    paper=PAPER,
    title="DropTail's average queue against the number of flows",
    source="Fig. 11, section 4.2",
    scenarios=(FIG12,),
    points=_fig11_points,
    measure=lambda label, result: bottleneck_numbers(result),
    checks=_fig11_checks,
    plot=_fig11_plot,
    seeds=3,
)
