"""SFB paper, Table I and Fig. 3: one non-responsive flow at 2 and 45 Mbit/s under
SFB, RED, SFRED and SFQ+RED; and ``table1_diagnostic``, Table I's points under a
changed scenario (REPRODUCTION.md's diagnostics).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, band, load_scenario, run_all, run_key, trend, within
from aqmlab.repro._helpers import mean_sd, pyplot, rate, save, with_flows, with_qdisc
from aqmlab.repro.sfb._common import (
    BOTTLENECK_ENDS,
    CITE,
    N_TCP,
    NAMES,
    PAPER,
    QDISCS,
    flow_panels,
    loose,
    run_numbers,
    sfq_bin,
)

if TYPE_CHECKING:
    import pandas as pd


# ---- Table I and Fig. 3: one non-responsive flow at 2 and 45 Mbit/s -----------------

TABLE1 = {  # (rate, scheme) -> (total, non-responsive, TCP) loss in Mbit/s
    (2.0, "sfb"): (1.86, 1.85, 0.01),
    (2.0, "red"): (1.79, 0.03, 1.76),
    (2.0, "sfred"): (3.10, 0.63, 2.57),
    (45.0, "sfb"): (44.85, 44.84, 0.01),
    (45.0, "red"): (13.39, 10.32, 3.07),
    (45.0, "sfred"): (42.80, 40.24, 2.56),
    (2.0, "sfq_red"): (3.60, 1.03, 2.47),
    (45.0, "sfq_red"): (46.47, 43.94, 2.53),
}


def _table1_points(bases: Mapping[str, dict[str, Any]], rates=(2.0, 45.0)) -> list[Point]:
    base = bases["sfb-fig2b"]
    return [
        Point(
            {"qdisc": kind, "rate_mbps": r},
            with_qdisc(with_flows(base, "nonresp", rate=rate(r)), QDISCS[kind], link=BOTTLENECK_ENDS),
        )
        for r in rates
        for kind in ("sfb", "red", "sfred", "sfq_red")
    ]


def _table1_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Table I"
    checks = []
    for (r, kind), paper in TABLE1.items():
        where = {"qdisc": kind, "rate_mbps": r}
        cols = ("loss_total_mbps", "loss_nonresp_mbps", "loss_tcp_mbps")
        for what, col, p in zip(("total", "non-responsive flow", "all TCP flows"), cols, paper):
            q = f"{r:g} Mbit/s, {NAMES[kind]}: loss, {what}"
            if kind == "sfb":
                m, sd = mean_sd(runs, col, **where)
                checks.append(within(q, src, p, m, 0.1, "Mbit/s", sd=sd))
            else:
                checks.append(loose(q, src, p, runs, col, 0.3, 0.3, **where))
    return checks


def _table1_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
    for ax, r in zip(axes, (2.0, 45.0)):
        kinds = ["sfb", "red", "sfred", "sfq_red"]
        x = range(len(kinds))
        for off, col, idx, name in (
            (-0.2, "loss_nonresp_mbps", 1, "non-responsive"),
            (0.2, "loss_tcp_mbps", 2, "TCP"),
        ):
            means = [runs[(runs.qdisc == k) & (runs.rate_mbps == r)][col].mean() for k in kinds]
            ax.bar([i + off for i in x], means, 0.4, label=f"{name} (ours)")
            ax.plot([i + off for i in x], [TABLE1[(r, k)][idx] for k in kinds], "k*", ms=9)
        ax.set_xticks(list(x), [NAMES[k] for k in kinds])
        ax.set_title(f"{r:g} Mbit/s non-responsive flow (stars: paper)", fontsize=9)
        ax.set_ylabel("loss (Mbit/s)")
        ax.legend(fontsize=8)
    fig.suptitle("SFB Table I: loss rates, one non-responsive flow")
    save(fig, path)


EXP_TABLE1 = Experiment(
    id="sfb-table1",
    paper=PAPER,
    title="Loss rates with one non-responsive flow: SFB, RED, SFRED, SFQ+RED",
    source="Table I, section III-B",
    scenarios=("sfb-fig2b",),
    points=_table1_points,
    measure=run_numbers,
    checks=_table1_checks,
    plot=_table1_plot,
    seeds=3,
)


FIG3_NONRESP = {"sfb": 0.16, "red": 34.68, "sfred": 4.76, "sfq_red": 0.10}


def _fig3_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 3"
    where45 = {"rate_mbps": 45.0}
    m, sd = mean_sd(runs, "nonresp_mbps", qdisc="sfb", **where45)
    checks = [within("SFB: non-responsive throughput", src, 0.16, m, 0.1, "Mbit/s", sd=sd)]
    for kind in ("red", "sfred", "sfq_red"):
        checks.append(
            loose(
                f"{NAMES[kind]}: non-responsive throughput",
                src,
                FIG3_NONRESP[kind],
                runs,
                "nonresp_mbps",
                0.3,
                0.3,
                qdisc=kind,
                **where45,
            )
        )
    m, sd = mean_sd(runs, "tcp_above_half_fair_pct", qdisc="sfb", **where45)
    checks.append(
        band(
            "SFB: TCP flows at >= half the fair share",
            src + "(a)",
            "each TCP flow close to a fair share",
            m,
            95,
            100,
            "%",
            ">= 95%",
            sd=sd,
        )
    )
    red_tcp, _ = mean_sd(runs, "tcp_mean_mbps", qdisc="red", **where45)
    sfb_tcp, _ = mean_sd(runs, "tcp_mean_mbps", qdisc="sfb", **where45)
    checks.append(
        trend(
            "RED: mean TCP throughput < half of SFB's",
            src + "(b)",
            "throughput of all TCP flows suffers considerably",
            red_tcp < 0.5 * sfb_tcp,
        )
    )
    sfred_loss, _ = mean_sd(runs, "loss_tcp_mbps", qdisc="sfred", **where45)
    sfb_loss, _ = mean_sd(runs, "loss_tcp_mbps", qdisc="sfb", **where45)
    checks.append(
        trend(
            "SFRED: TCP loss above SFB's",
            src + "(c)",
            "drops a significant amount of packets from TCP flows",
            sfred_loss > sfb_loss,
        )
    )
    checks.extend(_fig3d_checks(runs))
    return checks


def _fig3d_checks(runs: pd.DataFrame) -> list[Check]:
    """Fig. 3(d)'s two claims about SFQ+RED: fairness among TCP flows deteriorates
    (Jain's index below SFB's), and the TCP flows hashed into the non-responsive
    flow's queue get "an extremely small amount of the link bandwidth" (their mean
    below a tenth of the fair share)."""
    src = f"{CITE}, Fig. 3(d)"
    where = {"qdisc": "sfq_red", "rate_mbps": 45.0}
    jain, _ = mean_sd(runs, "tcp_jain", **where)
    sfb_jain, _ = mean_sd(runs, "tcp_jain", qdisc="sfb", rate_mbps=45.0)
    divisor = QDISCS["sfq_red"]["divisor"]
    mates = [f for f in range(N_TCP) if sfq_bin(f, divisor) == sfq_bin(N_TCP, divisor)]
    sel = runs[(runs.qdisc == "sfq_red") & (runs.rate_mbps == 45.0)]
    mates_mbps = float(sel[[f"flow{f}_kbps" for f in mates]].to_numpy().mean()) / 1e3
    fair = float(sel["fair_mbps"].iloc[0])
    return [
        trend(
            "SFQ+RED: TCP Jain's index below SFB's",
            src,
            "the fairness between flows deteriorates",
            jain < sfb_jain,
            note=f"Jain {jain:.3f} (SFB {sfb_jain:.3f})",
        ),
        trend(
            "SFQ+RED: TCP flows in the non-responsive flow's queue < 1/10 fair share",
            src,
            "flows that map into this bin receive an extremely small amount",
            mates_mbps < 0.1 * fair,
            note=f"{len(mates)} flows, mean {mates_mbps * 1e3:.1f} kbit/s (fair {fair * 1e3:.0f})",
        ),
    ]


def _fig3_plot(runs: pd.DataFrame, path: Path) -> None:
    panels = [
        (f"({c}) {NAMES[k]}", {"qdisc": k, "rate_mbps": 45.0})
        for c, k in zip("abcd", ("sfb", "red", "sfred", "sfq_red"))
    ]
    flow_panels(runs, path, panels, "SFB Fig. 3: TCP throughput, 45 Mbit/s non-responsive flow (seed 1)")


EXP_FIG3 = Experiment(
    id="sfb-fig3",
    paper=PAPER,
    title="Throughput of the 400 TCP flows, 45 Mbit/s non-responsive flow",
    source="Fig. 3, section III-B",
    scenarios=("sfb-fig2b",),
    points=lambda bases: _table1_points(bases, rates=(45.0,)),
    measure=run_numbers,
    checks=_fig3_checks,
    plot=_fig3_plot,
    seeds=3,
)


def table1_diagnostic(
    transform, *, qdiscs=("sfb", "red", "sfred"), seeds=(1, 2, 3), jobs: int | None = None
) -> pd.DataFrame:
    """Table I's points with ``transform`` (scenario -> scenario) applied, simulated
    (uncached) and averaged over ``seeds``: loss and throughput in Mbit/s, and the
    share of the non-responsive flow's drops that were ``rate_limit`` (pmin = 1).
    For the diagnostics in REPRODUCTION.md, e.g. ``table1_diagnostic(without_ecn)``."""
    import pandas as pd

    points = [
        p for p in _table1_points({"sfb-fig2b": load_scenario("sfb-fig2b")}) if p.label["qdisc"] in qdiscs
    ]
    jobs_in = [(transform(p.scenario), s) for p in points for s in seeds]
    results, _, _ = run_all(jobs_in, None, jobs=jobs, progress=False, fail_fast=True)
    rows = []
    for p in points:
        for seed in seeds:
            r = results[run_key(transform(p.scenario), seed)]
            n = run_numbers(p.label, r)
            nr = r.flows[r.flows["group"] == "nonresp"]
            keep = ("loss_total_mbps", "loss_nonresp_mbps", "loss_tcp_mbps", "nonresp_mbps", "tcp_jain")
            rows.append(
                {
                    **p.label,
                    **{k: n[k] for k in keep},
                    "nonresp_rate_limit_pct": 100
                    * float(nr["drops_rate_limit"].sum() / nr["drops_total"].sum()),
                }
            )
    return pd.DataFrame(rows).groupby(["rate_mbps", "qdisc"]).mean().round(3)
