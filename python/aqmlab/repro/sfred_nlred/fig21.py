"""SFRED / NLRED paper, Fig. 21 (section 5, Experiment 2): GRED, REM (byte mode) and
NLRED, throughput against packet size, 50 FTP flows.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, trend
from aqmlab.repro._helpers import means, pyplot, save
from aqmlab.repro.sfred_nlred._common import (
    CITE,
    FIG12,
    PAPER,
    SIZES,
    bottleneck_numbers,
    fig12_scenario,
    scheme_qdisc,
)

if TYPE_CHECKING:
    import pandas as pd


# ---- Fig. 21: throughput against packet size, 50 FTP flows ---------------------------


def _fig21_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    return [
        Point(
            {"scheme": s, "size": size},
            fig12_scenario(bases[FIG12], 50, scheme_qdisc(s, 0.1, byte_mode=True), size=size),
        )
        for s in ("gred", "rem", "nlred")
        for size in SIZES
    ]


def _fig21_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 21 / 5, Experiment 2"
    t = runs.groupby(["scheme", "size"])["utilization"].mean()
    spread = {s: float(t.loc[s].max() - t.loc[s].min()) for s in ("gred", "rem", "nlred")}
    note = ", ".join(f"{s} {v:.3f}" for s, v in spread.items())
    return [
        trend(
            "NLRED's throughput varies least with packet size",
            src,
            "NLRED is least sensitive to the packet size",
            spread["nlred"] < min(spread["gred"], spread["rem"]),
            note=f"max - min utilization over 100-2500 B: {note}",
        )
    ]


def _fig21_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for s in ("gred", "rem", "nlred"):
        t = means(runs, "size", "throughput_mbps", scheme=s)
        ax.plot(t.index, t.values, marker="o", label=s.upper() + (" (byte mode)" if s == "rem" else ""))
    ax.set_xlabel("packet size (bytes)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_title("Fig. 21: 50 FTP flows, max_p 0.1")
    ax.legend()
    save(fig, path)


EXP_FIG21 = Experiment(
    id="sfred-nlred-fig21",
    paper=PAPER,
    title="GRED, REM (byte mode) and NLRED: throughput against packet size",
    source="Fig. 21, section 5, Experiment 2",
    scenarios=(FIG12,),
    points=_fig21_points,
    measure=lambda label, result: bottleneck_numbers(result),
    checks=_fig21_checks,
    plot=_fig21_plot,
    seeds=3,
)
