"""SFRED / NLRED paper, Figs. 13-16 (section 5, Experiment 1): GRED and NLRED,
throughput and average queue against N over max_p.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, band, trend
from aqmlab.repro._helpers import means, pyplot, save, select
from aqmlab.repro.sfred_nlred._common import (
    BOTTLENECK,
    CITE,
    FIG12,
    MAX_PS,
    NS,
    PAPER,
    bottleneck_numbers,
    fig12_scenario,
    scheme_qdisc,
)

if TYPE_CHECKING:
    import pandas as pd


# ---- Figs. 13-16: GRED and NLRED over max_p and N -----------------------------------


def _grid_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    return [
        Point(
            {"scheme": s, "max_p": p, "n": n}, fig12_scenario(bases[FIG12], n, scheme_qdisc(s, p), short=True)
        )
        for s in ("gred", "nlred")
        for p in MAX_PS
        for n in NS
    ]


def _spread_over_max_p(runs: pd.DataFrame, scheme: str, column: str) -> float:
    """The mean over N of (max - min over max_p) of the seed-mean ``column``."""
    m = select(runs, scheme=scheme).groupby(["n", "max_p"])[column].mean().unstack()
    return float((m.max(axis=1) - m.min(axis=1)).mean())


def _grid_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Figs. 13-14 / 5"
    g_spread = _spread_over_max_p(runs, "gred", "utilization")
    n_spread = _spread_over_max_p(runs, "nlred", "utilization")
    mid = select(runs, scheme="nlred")
    mid = mid[mid["max_p"].isin([0.075, 0.1, 0.15])]
    worst = float(mid.groupby(["max_p", "n"])["utilization"].mean().min())
    checks = [
        trend(
            "NLRED's throughput less sensitive to max_p than GRED's",
            src,
            "NLRED is less sensitive to the choice of max_p",
            n_spread < g_spread,
            note=f"mean spread over max_p: NLRED {n_spread:.3f}, GRED {g_spread:.3f} of the link",
        ),
        band(
            "NLRED, max_p 0.075-0.15: lowest utilization over N",
            src,
            "high throughput regardless of the loading",
            worst,
            0.9,
            1.0,
            "of link",
            ">= 0.9 (our reading of 'high')",
        ),
    ]
    src = f"{CITE}, Figs. 15-16 / 5"
    small = [n for n in NS if n <= 20]
    large = [n for n in NS if n >= 60]
    q = runs.groupby(["scheme", "n"])["avg_queue"].mean()
    n_small = float(q.loc["nlred"].loc[small].mean())
    g_small = float(q.loc["gred"].loc[small].mean())
    checks.append(
        trend(
            "NLRED's average queue above GRED's at small N (N <= 20)",
            src,
            "NLRED allows the average queue to grow faster when N is small",
            n_small > g_small,
            note=f"NLRED {n_small:.1f}, GRED {g_small:.1f} packets (mean over max_p and N)",
        )
    )
    per = runs.groupby(["scheme", "max_p", "n"])["avg_queue"].mean()

    def range_large(s: str) -> float:
        r = per.loc[s].unstack()[large]
        return float((r.max(axis=1) - r.min(axis=1)).mean())

    n_rng, g_rng = range_large("nlred"), range_large("gred")
    checks.append(
        trend(
            "NLRED's average queue varies less with N than GRED's for N >= 60",
            src,
            "as N increases NLRED controls the average queue better (converges faster)",
            n_rng < g_rng,
            note=f"range over N >= 60, mean over max_p: NLRED {n_rng:.1f}, GRED {g_rng:.1f} packets",
        )
    )
    return checks


def _grid_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True)
    for col, scheme in enumerate(("gred", "nlred")):
        for p in MAX_PS:
            t = means(runs, "n", "throughput_mbps", scheme=scheme, max_p=p)
            q = means(runs, "n", "avg_queue", scheme=scheme, max_p=p)
            axes[0][col].plot(t.index, t.values, marker=".", label=f"max_p {p:g}")
            axes[1][col].plot(q.index, q.values, marker=".", label=f"max_p {p:g}")
        name = "GRED" if scheme == "gred" else "NLRED (equivalent max_p)"
        axes[0][col].set_title(f"Figs. {13 + col} / {15 + col}: {name}")
        axes[0][col].set_ylabel("throughput (Mbit/s)")
        axes[1][col].set_ylabel("average queue (packets)")
        axes[1][col].set_xlabel("number of flows N")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"100 s runs measured over the second 50 s (paper: 200 s, second 100 s); {BOTTLENECK}")
    save(fig, path)


EXP_FIG13_16 = Experiment(
    id="sfred-nlred-fig13-16",
    paper=PAPER,
    title="GRED and NLRED: throughput and average queue against N over max_p",
    source="Figs. 13-16, section 5, Experiment 1",
    scenarios=(FIG12,),
    points=_grid_points,
    measure=lambda label, result: bottleneck_numbers(result),
    checks=_grid_checks,
    plot=_grid_plot,
    seeds=3,
    notes="runs shortened to 100 s (second 50 s measured) to keep 576 runs in minutes",
)
