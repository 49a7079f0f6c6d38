"""SFB paper, Figs. 5 and 6: 4 and 8 non-responsive flows, the TCP flows a fixed
hash misclassifies, and the moving and double-buffered hashes that free them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, band, trend, within
from aqmlab.repro._helpers import mean_sd, rate, with_flows, with_qdisc
from aqmlab.repro.sfb._common import (
    BOTTLENECK_ENDS,
    CITE,
    N_TCP,
    PAPER,
    flow_panels,
    misclassification,
    run_numbers,
    sfb,
)

if TYPE_CHECKING:
    import pandas as pd


# ---- Fig. 5: 4 and 8 non-responsive flows, misclassification ------------------------

HASH_SEEDS = (1, 2, 3, 4, 5)


def _fig5_point(base: Mapping[str, Any], m: int, hash_seed: int, **qdisc: Any) -> dict[str, Any]:
    scenario = with_flows(base, "nonresp", count=m, rate=rate(5.0))
    return with_qdisc(scenario, sfb(hash_seed=hash_seed, **qdisc), link=BOTTLENECK_ENDS)


def _fig5_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = bases["sfb-fig2b"]
    return [
        Point({"nonresp": m, "hash_seed": h}, _fig5_point(base, m, h)) for m in (4, 8) for h in HASH_SEEDS
    ]


def _fig5_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 5 / III-C"
    checks = []
    for m, paper, tol, thr in ((4, 11, 4, 0.18), (8, 36, 8, 0.21)):
        model = N_TCP * misclassification(2, 23, m)
        mean, sd = mean_sd(runs, "tcp_rate_limited", nonresp=m)
        checks.append(
            within(
                f"{m} non-responsive: misclassified TCP flows",
                src,
                paper,
                mean,
                tol,
                "flows",
                sd=sd,
                paper_text=f"{paper} (eq. 1: {model:.1f})",
                note="TCP flows with a rate-limit drop; mean over hash seeds",
            )
        )
        mean, sd = mean_sd(runs, "nonresp_mbps", nonresp=m)
        checks.append(within(f"{m} non-responsive: their throughput", src, thr, mean, 0.1, "Mbit/s", sd=sd))
    return checks


def _fig5_plot(runs: pd.DataFrame, path: Path) -> None:
    panels = [
        (f"({c}) {m} non-responsive (hash seed 1)", {"nonresp": m, "hash_seed": 1})
        for c, m in (("a", 4), ("b", 8))
    ]
    flow_panels(runs, path, panels, "SFB Fig. 5: TCP throughput with 5 Mbit/s non-responsive flows")


EXP_FIG5 = Experiment(
    id="sfb-fig5",
    paper=PAPER,
    title="SFB with 4 and 8 non-responsive flows: misclassified TCP flows vs eq. (1)",
    source="Fig. 5, section III-C",
    scenarios=("sfb-fig2b",),
    points=_fig5_points,
    measure=run_numbers,
    checks=_fig5_checks,
    plot=_fig5_plot,
    seeds=1,
    notes="Each point is one hash seed (the bins' mapping); the mean is over hash seeds 1-5.",
)


# ---- Fig. 6: moving and double-buffered hashes --------------------------------------


def _fig6_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = bases["sfb-fig2b"]
    return [
        Point({"hash": "fixed"}, _fig5_point(base, 8, 1)),
        Point({"hash": "moving"}, _fig5_point(base, 8, 1, hash="moving", rehash_period="2s")),
        Point(
            {"hash": "double_buffered"}, _fig5_point(base, 8, 1, hash="double_buffered", rehash_period="2s")
        ),
    ]


def _fig6_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 6 / III-D"
    m, sd = mean_sd(runs, "nonresp_mbps", hash="moving")
    checks = [
        within(
            "moving hash: non-responsive throughput",
            src + "(a)",
            3.85,
            m,
            0.5,
            "Mbit/s",
            sd=sd,
            relative=True,
        )
    ]
    m, sd = mean_sd(runs, "nonresp_mbps", hash="double_buffered")
    checks.append(
        within("double-buffered: non-responsive throughput", src + "(b)", 0.19, m, 0.1, "Mbit/s", sd=sd)
    )
    for h, name, paper in (
        ("moving", "moving hash", "none of the TCP-friendly flows are shut out"),
        ("double_buffered", "double-buffered", "a very high level of protection"),
    ):
        m, sd = mean_sd(runs, "tcp_shut_out", hash=h)
        checks.append(band(f"{name}: TCP flows shut out", src, paper, m, 0, 4, "flows", "<= 4 (1%)", sd=sd))
    fixed, _ = mean_sd(runs, "tcp_shut_out", hash="fixed")
    moving, _ = mean_sd(runs, "tcp_shut_out", hash="moving")
    checks.append(
        trend(
            "moving hash shuts out fewer TCP flows than fixed",
            src,
            "in contrast to Figure 5",
            moving < fixed,
        )
    )
    return checks


def _fig6_plot(runs: pd.DataFrame, path: Path) -> None:
    panels = [
        ("fixed hash (Fig. 5(b))", {"hash": "fixed"}),
        ("(a) moving hash", {"hash": "moving"}),
        ("(b) double-buffered", {"hash": "double_buffered"}),
    ]
    flow_panels(runs, path, panels, "SFB Fig. 6: 8 non-responsive flows, hash changed every 2 s")


EXP_FIG6 = Experiment(
    id="sfb-fig6",
    paper=PAPER,
    title="SFB with moving and double-buffered hashes, 8 non-responsive flows",
    source="Fig. 6, section III-D",
    scenarios=("sfb-fig2b",),
    points=_fig6_points,
    measure=run_numbers,
    checks=_fig6_checks,
    plot=_fig6_plot,
    seeds=3,
)
