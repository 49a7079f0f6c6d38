"""SFRED / NLRED paper, Figs. 19-20 (section 5, Experiment 2): GRED, REM and NLRED at
max_p 0.1, throughput and average queue against N.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, band, trend
from aqmlab.repro._helpers import mean_sd, means, pyplot, save
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


# ---- Figs. 19-20: GRED, REM and NLRED at max_p 0.1 against N ------------------------


def _fig19_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    return [
        Point({"scheme": s, "n": n}, fig12_scenario(bases[FIG12], n, scheme_qdisc(s, 0.1)))
        for s in ("gred", "rem", "nlred")
        for n in NS
    ]


def _fig19_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 19 / 5, Experiment 2"
    overall = {s: mean_sd(runs, "utilization", scheme=s)[0] for s in ("gred", "rem", "nlred")}
    t = runs.groupby(["scheme", "n"])["utilization"].mean()
    note = ", ".join(f"{s} {v:.3f}" for s, v in overall.items())
    checks = [
        trend(
            "NLRED has the highest throughput over all N",
            src,
            "NLRED has the highest overall throughput",
            overall["nlred"] > max(overall["gred"], overall["rem"]),
            note=f"mean utilization over N: {note}",
        ),
        trend(
            "GRED has the lowest throughput over all N",
            src,
            "whereas GRED is the lowest",
            overall["gred"] < min(overall["nlred"], overall["rem"]),
            note=f"mean utilization over N: {note}",
        ),
        trend(
            "REM below NLRED at the lightest load (N = 5)",
            src,
            "REM suffers low throughput when the load is extremely light (< 5 flows)",
            t.loc[("rem", 5)] < t.loc[("nlred", 5)],
            note=f"N = 5: REM {t.loc[('rem', 5)]:.3f}, NLRED {t.loc[('nlred', 5)]:.3f}",
        ),
        trend(
            "REM's throughput falls from N = 60 to N = 120",
            src,
            "when N > 60 the throughput of REM is unstable and drops as N increases",
            t.loc[("rem", 120)] < t.loc[("rem", 60)],
            note=f"REM: {t.loc[('rem', 60)]:.3f} at 60, {t.loc[('rem', 120)]:.3f} at 120",
        ),
        trend(
            "NLRED converges to the link rate for N > 40",
            src,
            "as soon as N > 40 the throughput of NLRED quickly converges to the link bandwidth",
            all(t.loc[("nlred", n)] >= 0.97 for n in NS if n > 40),
            note="utilization >= 0.97 at every N > 40 (our reading of 'converges')",
        ),
    ]
    src = f"{CITE}, Fig. 20 / 5, Experiment 2"
    rem_q = runs[(runs["scheme"] == "rem") & (runs["n"] <= 60)]["avg_queue"].mean()
    checks.append(
        band(
            "REM's average queue for N <= 60 (mean)",
            src,
            "REM steers the queue around a target length (b0 = 20)",
            float(rem_q),
            10,
            30,
            "packets",
            "b0 ± 10",
            paper_value=20,
        )
    )
    return checks


def _fig19_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for s in ("gred", "rem", "nlred"):
        t = means(runs, "n", "throughput_mbps", scheme=s)
        q = means(runs, "n", "avg_queue", scheme=s)
        axes[0].plot(t.index, t.values, marker="o", label=s.upper())
        axes[1].plot(q.index, q.values, marker="o", label=s.upper())
    axes[0].set_ylabel("throughput (Mbit/s)")
    axes[1].set_ylabel("average queue (packets)")
    for ax, n in zip(axes, (19, 20)):
        ax.set_xlabel("number of flows N")
        ax.set_title(f"Fig. {n}: max_p 0.1, REM ns-2 defaults")
        ax.legend()
    save(fig, path)


EXP_FIG19_20 = Experiment(
    id="sfred-nlred-fig19-20",
    paper=PAPER,
    title="GRED, REM and NLRED: throughput and average queue against N",
    source="Figs. 19-20, section 5, Experiment 2",
    scenarios=(FIG12,),
    points=_fig19_points,
    measure=lambda label, result: bottleneck_numbers(result),
    checks=_fig19_checks,
    plot=_fig19_plot,
    seeds=3,
)
