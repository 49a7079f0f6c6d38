"""SFB paper, Fig. 4: eq. (1) against the number of non-responsive flows, and the
real qdisc's misclassified flows (open-loop traffic, ``scenarios/sfb-fig4.toml``)
drawn over it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab import _aqmlab
from aqmlab.repro._core import Check, Experiment, Point, band, trend, within
from aqmlab.repro._helpers import kbit, link_kbps, pyplot, save, with_flows, with_qdisc
from aqmlab.repro.sfb._common import CITE, PAPER, misclassification

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result


# ---- Fig. 4: eq. (1), and the real qdisc's misclassification drawn over it ---------


#: Fig. 4's panels: total bins -> the M of each measured point. Each L = 1, 2, 3
#: splits the total into L levels of total / L bins.
FIG4_M = {90: (10, 20, 45, 60, 90), 900: (100, 200, 450, 600, 900)}
FIG4_LEVELS = (1, 2, 3)
FIG4_HASH_SEEDS = (1, 2, 3, 4, 5)
FIG4_LOW = 400  # low-rate flows, the "responsive" flows eq. (1) counts
#: Eq. (1)'s values the paper quotes (III-C): (L, B, M) -> p.
EQ1_QUOTED = {(2, 23, 4): 0.0265, (2, 23, 8): 0.0896, (1, 46, 4): 0.0842, (1, 46, 8): 0.1612}


def fig4_scenario(base: Mapping[str, Any], total: int, levels: int, m: int, hash_seed: int) -> dict[str, Any]:
    """``scenarios/sfb-fig4.toml`` with ``m`` non-responsive flows and ``total`` bins
    split over ``levels`` levels. What scales with M (the file says why): the M
    flows offer 4x the link between them, the buffer is 8 x M packets (at least
    100); the rest (rate limit 0.16 Mbps, ``bin_size`` 3, ECN) is the file's."""
    kbps = link_kbps(base["topology"]["bottleneck"]["rate"])
    out = with_flows(base, "nonresp", count=m, rate=kbit(4 * kbps / m))
    return with_qdisc(out, levels=levels, bins=total // levels, limit=max(100, 8 * m), hash_seed=hash_seed)


def _fig4_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = bases["sfb-fig4"]
    return [
        Point(
            {"total_bins": total, "levels": levels, "nonresp": m, "hash_seed": h},
            fig4_scenario(base, total, levels, m, h),
        )
        for total, ms in FIG4_M.items()
        for levels in FIG4_LEVELS
        for m in ms
        for h in FIG4_HASH_SEEDS
    ]


def sfb_bins(hash_seed: int, levels: int, bins: int, flow: int) -> tuple[int, ...]:
    """The bins of ``flow`` in a fixed-hash SFB (key generation 1), level by level,
    by the qdisc's own hash (through the extension), so that a run's misclassified
    flows can be predicted from its hash alone."""
    return tuple(
        _aqmlab.flow_hash(_aqmlab.hash_key(hash_seed, 1, level), flow) % bins for level in range(levels)
    )


def fig4_numbers(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    """Low-rate flows the queue rate-limited (a ``rate_limit`` drop: the queue found
    all their bins at pm = 1); those the run's hash says share every bin with a
    non-responsive flow (``low_hashed``), and where the two disagree; and whether
    every non-responsive flow was identified."""
    f = result.flows
    low = f[f["group"] == "low"]
    nr = f[f["group"] == "nonresp"]
    levels, bins = int(label["levels"]), int(label["total_bins"]) // int(label["levels"])
    seed = int(label["hash_seed"])
    polluted = [set() for _ in range(levels)]
    for fid in nr["id"]:
        for level, b in enumerate(sfb_bins(seed, levels, bins, int(fid))):
            polluted[level].add(b)
    hashed = [
        all(b in polluted[level] for level, b in enumerate(sfb_bins(seed, levels, bins, int(fid))))
        for fid in low["id"]
    ]
    limited = list(low["drops_rate_limit"] > 0)
    drops = nr["drops_total"].sum()
    return {
        "low_flows": float(len(low)),
        "low_rate_limited": float(sum(limited)),
        "low_hashed": float(sum(hashed)),
        "low_missed": float(sum(h and not x for h, x in zip(hashed, limited))),
        "low_extra": float(sum(x and not h for h, x in zip(hashed, limited))),
        "low_sent_mean": float(low["sent"].mean()),
        "nonresp_rate_limit_pct": 100.0 * float(nr["drops_rate_limit"].sum() / drops) if drops else 0.0,
        "nonresp_never_limited": float((nr["drops_rate_limit"] == 0).sum()),
    }


def _fig4_tolerance(p: float, n: int) -> float:
    """Three binomial standard errors of a fraction of ``n`` flows, plus 0.01 (the
    spread of the polluted-bin count from one hash draw to the next is not in the
    binomial, and a misclassified flow may rarely escape detection), rounded up to
    0.001."""
    return math.ceil(1000 * (3.0 * math.sqrt(p * (1.0 - p) / n) + 0.01)) / 1000


def _fig4_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 4 / III-C"
    checks = []
    for (levels, bins, m), quoted in EQ1_QUOTED.items():
        checks.append(
            within(
                f"eq. (1), L = {levels}, B = {bins}, M = {m}",
                f"{CITE}, III-C",
                100 * quoted,
                100 * misclassification(levels, bins, m),
                0.005,
                "%",
                note="the closed form against the values the paper quotes (rounded to 0.01%)",
            )
        )
    measured: dict[tuple[int, int, int], float] = {}
    for total, ms in FIG4_M.items():
        for levels in FIG4_LEVELS:
            for m in ms:
                sel = runs[(runs.total_bins == total) & (runs.levels == levels) & (runs.nonresp == m)]
                n = float(sel["low_flows"].sum())
                frac = float(sel["low_rate_limited"].sum()) / n
                by_seed = sel["low_rate_limited"] / sel["low_flows"]
                measured[(total, levels, m)] = frac
                p = misclassification(levels, total // levels, m)
                tol = _fig4_tolerance(p, int(n))
                hashed = float(sel["low_hashed"].sum()) / n
                checks.append(
                    within(
                        f"{total} bins, L = {levels}, M = {m}: misclassified fraction",
                        src,
                        p,
                        frac,
                        tol,
                        "",
                        sd=float(by_seed.std(ddof=1)) if len(by_seed) > 1 else None,
                        paper_text=f"eq. (1): {p:.4f}",
                        note=f"{int(n)} low-rate flows over {len(sel)} hash seeds; "
                        f"band 3 binomial SE + 0.01; the runs' hashes predict {hashed:.4f}",
                    )
                )
    for total in FIG4_M:
        for levels in FIG4_LEVELS:
            sel = runs[(runs.total_bins == total) & (runs.levels == levels)]
            n = float(sel["low_flows"].sum())
            wrong = float(sel["low_missed"].sum() + sel["low_extra"].sum())
            checks.append(
                band(
                    f"{total} bins, L = {levels}: flows where qdisc and hash disagree",
                    src,
                    "a flow is misclassified when all its bins are polluted",
                    100.0 * wrong / n,
                    0.0,
                    1.0,
                    "%",
                    "<= 1% of flows",
                    note=f"{int(sel['low_missed'].sum())} hashed into polluted bins only but never "
                    f"rate-limited, {int(sel['low_extra'].sum())} rate-limited with a clean bin, "
                    f"of {int(n)}; non-responsive flows never identified: "
                    f"{int(sel['nonresp_never_limited'].sum())}",
                )
            )
    for total, ms in FIG4_M.items():
        small, large = ms[0], ms[-1]
        checks.append(
            trend(
                f"{total} bins, M = {small}: more levels, fewer misclassified",
                src,
                "when the number of non-responsive flows is small compared to the number of bins, "
                "multiple levels keep misclassification extremely low",
                measured[(total, 3, small)] < measured[(total, 2, small)] < measured[(total, 1, small)],
                note="measured L = 3 < L = 2 < L = 1",
            )
        )
        checks.append(
            trend(
                f"{total} bins, M = {large}: one level misclassifies least",
                src,
                "past half the number of bins, the single level affords the smallest probability",
                measured[(total, 1, large)] < measured[(total, 2, large)] < measured[(total, 3, large)],
                note="measured L = 1 < L = 2 < L = 3",
            )
        )
    return checks


def _fig4_plot(runs: pd.DataFrame, path: Path) -> None:
    import numpy as np

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.8))
    for ax, (total, ms) in zip(axes, FIG4_M.items()):
        grid = np.arange(0, total + 1)
        for levels, color in zip(FIG4_LEVELS, ("C0", "C1", "C2")):
            theory = [misclassification(levels, total // levels, int(m)) for m in grid]
            ax.plot(grid, theory, color=color, lw=1.2, label=f"L={levels} (eq. 1)")
            xs, ys, es, hashed = [], [], [], []
            for m in ms:
                sel = runs[(runs.total_bins == total) & (runs.levels == levels) & (runs.nonresp == m)]
                if sel.empty:
                    continue
                n = float(sel["low_flows"].sum())
                frac = float(sel["low_rate_limited"].sum()) / n
                xs.append(m)
                ys.append(frac)
                hashed.append(float(sel["low_hashed"].sum()) / n)
                es.append(math.sqrt(max(frac * (1 - frac), 1e-12) / n))
            ax.errorbar(xs, ys, yerr=es, fmt="o", color=color, ms=4, capsize=2, label=f"L={levels} (SFB)")
            ax.plot(xs, hashed, "x", color=color, ms=5)
        ax.set_xlim(0, total)
        ax.set_ylim(0, 1)
        ax.set_xlabel("number of non-responsive flows")
        ax.set_ylabel("probability of misclassification")
        ax.set_title(f"({'a' if total == 90 else 'b'}) {total} bins", fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(
        "SFB Fig. 4: eq. (1) (lines), the qdisc's rate-limited flows (dots), the runs' hashes (x)",
        fontsize=10,
    )
    save(fig, path)


EXP_FIG4 = Experiment(
    id="sfb-fig4",
    paper=PAPER,
    title="Probability of misclassification vs non-responsive flows, 90 and 900 bins, L = 1-3",
    source="Fig. 4, eq. (1), section III-C",
    scenarios=("sfb-fig4",),
    points=_fig4_points,
    measure=fig4_numbers,
    checks=_fig4_checks,
    plot=_fig4_plot,
    seeds=1,
    notes="Each point is one hash seed (seeds 1-5); open-loop traffic, see scenarios/sfb-fig4.toml.",
)
