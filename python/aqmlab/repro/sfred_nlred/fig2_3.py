"""SFRED / NLRED paper, Figs. 2-3 (section 3.1): two FTP flows (10 ms and 100 ms)
under RED, SFRED and LRU-RED.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aqmlab.repro._core import Check, Experiment, trend
from aqmlab.repro._helpers import mean_sd
from aqmlab.repro.sfred_nlred._common import (
    CITE,
    FAIR_SCHEMES,
    FIG1,
    PAPER,
    fair_measure,
    fair_points,
    series_plot,
)

if TYPE_CHECKING:
    import pandas as pd


# Figs. 2-3: two FTP flows.


def _fig2_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Figs. 2-3 / 3.1"
    gap = {s: mean_sd(runs, "ftp_gap_kbps", scheme=s)[0] for s in FAIR_SCHEMES}
    jain = {s: mean_sd(runs, "ftp_jain", scheme=s)[0] for s in FAIR_SCHEMES}
    return [
        trend(
            "SFRED: smaller gap between the two FTP flows than RED",
            src,
            "with much less margin between the two curves, SFRED is fairer",
            gap["mrul"] < gap["red"],
            note=f"gap {gap['mrul']:.0f} vs {gap['red']:.0f} kbit/s; "
            f"Jain {jain['mrul']:.3f} vs {jain['red']:.3f}",
        ),
        trend(
            "(beyond the paper) LRU-RED: smaller gap than RED",
            "section 2.1 (LRU-RED targets high-bandwidth flows)",
            "LRU-RED contains high-bandwidth flows",
            gap["lru_red"] < gap["red"],
            note=f"gap {gap['lru_red']:.0f} kbit/s, Jain {jain['lru_red']:.3f}",
        ),
    ]


EXP_FIG2_3 = Experiment(
    id="sfred-nlred-fig2-3",
    paper=PAPER,
    title="Two FTP flows (10 ms and 100 ms) under RED, SFRED and LRU-RED",
    source="Figs. 2-3, section 3.1",
    scenarios=(FIG1,),
    points=lambda bases: fair_points(bases),
    measure=fair_measure,
    checks=_fig2_checks,
    plot=lambda runs, path: series_plot(runs, path, ("ftp1", "ftp2"), "Figs. 2-3: two FTP flows"),
    seeds=5,
)
