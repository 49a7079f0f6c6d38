"""SFRED / NLRED paper, Figs. 17-18 (section 5, Experiment 1): the instantaneous and
average queue over time at N = 100.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, trend
from aqmlab.repro._helpers import mean_sd, pyplot, save, select
from aqmlab.repro.sfred_nlred._common import (
    BOTTLENECK,
    CITE,
    FIG12,
    PAPER,
    bottleneck_numbers,
    fig12_scenario,
    scheme_qdisc,
)

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result


# ---- Figs. 17-18: the queue over time at N = 100 ------------------------------------

SERIES_STEP = 0.5  # seconds per stored point of the queue series


def _fig17_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    return [
        Point({"scheme": s}, fig12_scenario(bases[FIG12], 100, scheme_qdisc(s, 0.1), queue_interval="50ms"))
        for s in ("gred", "nlred")
    ]


def _fig17_measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    out = bottleneck_numbers(result)
    q = result.queue
    q = q[q["link"] == BOTTLENECK]
    # The instantaneous queue, thinned to one point per SERIES_STEP for the figure.
    step = max(1, round(SERIES_STEP / float(q["t_s"].diff().median() or SERIES_STEP)))
    for t, v in zip(q["t_s"].values[::step], q["packets"].values[::step]):
        out[f"q_{t:.1f}"] = float(v)
    return out


def _fig17_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Figs. 17-18 / 5"
    n, _ = mean_sd(runs, "queue_sd", scheme="nlred")
    g, _ = mean_sd(runs, "queue_sd", scheme="gred")
    return [
        trend(
            "N = 100, max_p 0.1: NLRED's queue oscillates less than GRED's",
            src,
            "oscillations much more noticeable with GRED",
            n < g,
            note=f"sd of the instantaneous queue over 100-200 s: NLRED {n:.1f}, GRED {g:.1f} packets",
        )
    ]


def _fig17_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for ax, scheme in zip(axes, ("nlred", "gred")):
        row = select(runs, scheme=scheme, seed=1).iloc[0]
        cols = [c for c in runs.columns if c.startswith("q_") and not math.isnan(row[c])]
        t = [float(c[2:]) for c in cols]
        v = [row[c] for c in cols]
        ax.plot(t, v, lw=0.6, label="instantaneous")
        k = 10  # 5 s moving average (RED's own average is not sampled)
        avg = [sum(v[max(0, i - k + 1) : i + 1]) / len(v[max(0, i - k + 1) : i + 1]) for i in range(len(v))]
        ax.plot(t, avg, lw=1.5, label="5 s moving average")
        ax.set_ylabel("queue (packets)")
        ax.set_title(f"Fig. {17 if scheme == 'nlred' else 18}: {scheme.upper()}, N = 100, max_p 0.1 (seed 1)")
        ax.legend()
    axes[-1].set_xlabel("time (s)")
    save(fig, path)


EXP_FIG17_18 = Experiment(
    id="sfred-nlred-fig17-18",
    paper=PAPER,
    title="Instantaneous and average queue over time at N = 100",
    source="Figs. 17-18, section 5, Experiment 1",
    scenarios=(FIG12,),
    points=_fig17_points,
    measure=_fig17_measure,
    checks=_fig17_checks,
    plot=_fig17_plot,
    seeds=3,
)
