"""Aggregate FQ paper, section VII-A: the aggregation advantage, a flow's share of
the link when others idle, against eqs. (1)-(3).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, trend, within
from aqmlab.repro._helpers import kbit, pyplot, save, select
from aqmlab.repro.aggfq._common import CITE, PAPER

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result


# ---- Section VII-A: the aggregation advantage -----------------------------------

#: Aggregate 1 reserves weight R = 4 (four flows of weight 1); the other flows are
#: R_hat = 4 single flows of weight 1. Cases: (active flows of aggregate 1, active
#: others).
ADV_RESERVED = 4
ADV_OTHERS = 4
ADV_CASES = {"eq1": (4, 4), "eq2": (2, 4), "eq3": (4, 2)}
ADV_LINK_KBIT = 1000
#: Greedy CBR sources share a fluid-like link: within 5% of the formula.
ADV_TOL = 0.05


def advantage_share(case: str, classify: str) -> float:
    """A flow of aggregate 1's fraction of the link, from eqs. (1)-(3): r_i = 1,
    R = 4, R_hat = 4; r' = 2 flows absent from aggregate 1 (eq. 2) or from the others
    (eq. 3)."""
    mine, others = ADV_CASES[case]
    if classify == "flow":
        return 1.0 / (mine + others)
    # Aggregate 1 keeps its reserved R; the others are their own aggregates.
    return ADV_RESERVED / (ADV_RESERVED + others) / mine


def _advantage_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    points = []
    for case, (mine, others) in ADV_CASES.items():
        for classify in ("flow", "aggregate"):
            q: dict[str, Any] = {"kind": "wfq", "classify": classify, "buffer": "lqd", "limit": 100}
            if classify == "aggregate":
                q["weights"] = {"1": float(ADV_RESERVED)}
            flows = [
                {
                    "name": "mine",
                    "kind": "cbr",
                    "count": mine,
                    "aggregate": 1,
                    "rate": kbit(ADV_LINK_KBIT),
                },
                {"name": "others", "kind": "cbr", "count": others, "rate": kbit(ADV_LINK_KBIT)},
            ]
            scenario = {
                "name": "aggfq-advantage",
                "duration": "30s",
                "warmup": "5s",
                "seed": 1,
                "topology": {
                    "kind": "dumbbell",
                    "access": {"rate": "10Mbit", "delay": "1ms"},
                    "bottleneck": {"rate": kbit(ADV_LINK_KBIT), "delay": "1ms"},
                },
                "qdisc": q,
                "flows": flows,
            }
            points.append(Point({"case": case, "classify": classify}, scenario))
    return points


def _advantage_measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    f = result.flows
    mine = f[f["group"] == "mine"]["goodput_bps"]
    return {"share": float(mine.mean()) / (ADV_LINK_KBIT * 1e3)}


def _advantage_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, VII-A"
    checks = []
    got = {}
    what = {
        "eq1": "all flows backlogged",
        "eq2": "2 of aggregate 1's 4 flows idle",
        "eq3": "2 of the 4 other flows idle",
    }
    for case in ADV_CASES:
        for classify in ("flow", "aggregate"):
            sel = select(runs, case=case, classify=classify)["share"]
            got[(case, classify)] = float(sel.mean())
            formula = advantage_share(case, classify)
            checks.append(
                within(
                    f"{what[case]}, {classify} FQ: a flow of aggregate 1's share of the link",
                    src + f", eq. ({case[2]})",
                    formula,
                    float(sel.mean()),
                    ADV_TOL,
                    "",
                    relative=True,
                    sd=float(sel.std(ddof=1)) if len(sel) > 1 else None,
                    paper_text=f"{formula:.4f} (r_i = 1, R = {ADV_RESERVED}, R_hat = {ADV_OTHERS})",
                )
            )
    checks.append(
        trend(
            "aggregate FQ gives the flow more than per-flow FQ when its aggregate's others idle",
            src + ", eq. (2)",
            "flow i implicitly has a larger weight due to the absence of some other flows in the "
            "same aggregate",
            got[("eq2", "aggregate")] > got[("eq2", "flow")],
        )
    )
    return checks


def _advantage_plot(runs: pd.DataFrame, path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    xs, labels = [], []
    for k, case in enumerate(ADV_CASES):
        for d, (classify, color) in enumerate((("flow", "C0"), ("aggregate", "C1"))):
            x = 3 * k + d
            sel = select(runs, case=case, classify=classify)["share"]
            ax.bar(x, float(sel.mean()), color=color, label=f"{classify} FQ" if k == 0 else None)
            ax.plot([x - 0.4, x + 0.4], [advantage_share(case, classify)] * 2, "k-", lw=1.5)
            xs.append(x)
            labels.append(f"{case}\n{classify}")
    ax.set_xticks(xs, labels, fontsize=7)
    ax.set_ylabel("share of the link, one flow of aggregate 1")
    ax.legend(fontsize=7)
    ax.set_title("Sun & Shin VII-A: measured (bars) against eqs. (1)-(3) (lines)", fontsize=9)
    save(fig, path)


EXP_ADVANTAGE = Experiment(
    id="aggfq-advantage",
    paper=PAPER,
    title="Aggregation advantage: a flow's share when others idle, against eqs. (1)-(3)",
    source="section VII-A, eqs. (1)-(3)",
    scenarios=(),
    points=_advantage_points,
    measure=_advantage_measure,
    checks=_advantage_checks,
    plot=_advantage_plot,
    seeds=2,
)
