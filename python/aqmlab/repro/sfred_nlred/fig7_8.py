"""SFRED / NLRED paper, Figs. 7-8 (section 3.2): two FTP and two CBR-UDP flows under
RED, SFRED and LRU-RED.
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


# Figs. 7-8: two FTP and two CBR-UDP flows.


def _fig7_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Figs. 7-8 / 3.2"
    m = {
        s: {c: mean_sd(runs, c, scheme=s)[0] for c in ("tcp_kbps", "udp_kbps", "all_jain")}
        for s in FAIR_SCHEMES
    }
    return [
        trend(
            "SFRED: TCP gets more than under RED",
            src,
            "SFRED protected TCP flows",
            m["mrul"]["tcp_kbps"] > m["red"]["tcp_kbps"],
            note=f"TCP {m['mrul']['tcp_kbps']:.0f} vs {m['red']['tcp_kbps']:.0f} kbit/s",
        ),
        trend(
            "SFRED: UDP gets less than under RED",
            src,
            "by punishing the unresponsive UDP flows",
            m["mrul"]["udp_kbps"] < m["red"]["udp_kbps"],
            note=f"UDP {m['mrul']['udp_kbps']:.0f} vs {m['red']['udp_kbps']:.0f} kbit/s",
        ),
        trend(
            "SFRED: the four flows not rigorously fair (Jain < 0.98)",
            src,
            "although rigorous fairness is still not attained",
            m["mrul"]["all_jain"] < 0.98,
            note=f"Jain over the 4 flows {m['mrul']['all_jain']:.3f}",
        ),
        trend(
            "LRU-RED: UDP gets more than under SFRED",
            f"{CITE}, section 2.1",
            "LRU-RED cannot identify an unresponsive flow",
            m["lru_red"]["udp_kbps"] > m["mrul"]["udp_kbps"],
            note=f"UDP {m['lru_red']['udp_kbps']:.0f} (LRU-RED) vs "
            f"{m['mrul']['udp_kbps']:.0f} (SFRED) kbit/s",
        ),
    ]


EXP_FIG7_8 = Experiment(
    id="sfred-nlred-fig7-8",
    paper=PAPER,
    title="Two FTP and two CBR-UDP flows under RED, SFRED and LRU-RED",
    source="Figs. 7-8, section 3.2",
    scenarios=(FIG1,),
    points=lambda bases: fair_points(bases, cbr=True),
    measure=fair_measure,
    checks=_fig7_checks,
    plot=lambda runs, path: series_plot(
        runs, path, ("ftp1", "ftp2", "udp1", "udp2"), "Figs. 7-8: 2 FTP + 2 CBR-UDP"
    ),
    seeds=5,
)
