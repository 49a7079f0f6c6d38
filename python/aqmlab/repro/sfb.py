"""The SFB paper's experiments (seed 000).

Feng, Kandlur, Saha & Shin, *Stochastic Fair Blue: A Queue Management Algorithm for
Enforcing Fairness*, INFOCOM 2001, section III (Tables I-II, Figs. 3-8; eq. (1) is
also ``aqmlab model sfb-misclass``).

The network of Fig. 2(b) (``scenarios/sfb-fig2b.toml``: every link 10 ms, as
section III-B sets it; ``scenarios/sfb-fig8.toml``: the figure's own delays). 400
TCP flows from n0-n4 to n5-n9 and non-responsive CBR flows share the 45 Mbps link
A->B, the bottleneck. SFB: 2 x 23 bins, bin size 13, 200 KB (200 packets of 1000
bytes), rate limit 0.16 Mbps. RED and SFRED (the compared schemes) get the same 200
packets; RED's other parameters are not in the paper: ns-2's defaults of the time
(min_th 5, max_th 15, max_p 0.1, w_q 0.002). SFQ with RED per bin, the paper's
fourth scheme (Table I, Fig. 3(d)): 46 queues of 9 packets (414 KB), RED in each
with min_th 2 and max_th 8 packets (2 KB / 8 KB), ns-2's max_p and w_q, packet
round robin (quantum = the 1000-byte packet); ``sfq_bin`` gives a flow's queue.

ECN: the TCP flows are ECN-capable and every scheme (SFB, RED, SFRED, SFQ+RED) marks them
instead of dropping them early; forced, overflow and rate-limit drops stay drops,
and the CBR flows (not ECN-capable) are always dropped. The setup (III-B) does not
mention ECN, but the paper's schemes are marking schemes: BLUE "uses a single
marking probability to mark packets (using ECN)" (section I), SFB's Fig. 1 says
"Mark/drop with probability pmin", SFRED applies Adaptive RED's max_p "just as
BLUE's marking probability can be used in SFB" (III-A); Table I's TCP loss of 0.01
Mbit/s for 400 flows under SFB is impossible if SFB's signal is a drop; and ECN is
a property of the TCP sources, which the paper keeps while it swaps the queue, so
RED and SFRED saw ECN-capable packets too (ns-2's RED marks them when asked,
``setbit_``). ``without_ecn`` turns it off, for comparison.

Fig. 4 (eq. (1) against M for 90 and 900 bins) is measured here too, with
open-loop traffic through the real qdisc (``scenarios/sfb-fig4.toml``).

Every tolerance below was fixed before looking at our numbers; REPRODUCTION.md
gives the reasons.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab import _aqmlab
from aqmlab.repro._core import (
    Check,
    Experiment,
    Point,
    band,
    register,
    trend,
    with_flows,
    within,
)

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result

PAPER = "sfb"
CITE = "Feng et al. 2001"
BOTTLENECK = "A->B"
LINK_MBPS = 45.0
PACKET_BITS = 8 * 1000
N_TCP = 400

#: The bottleneck's queue for each scheme. SFB and SFRED per section III-B; RED's
#: thresholds, max_p and w_q are ns-2's defaults (the paper states none). Every
#: scheme marks ECN-capable packets (the module docstring says why).
QDISCS: dict[str, dict[str, Any]] = {
    "sfb": {
        "kind": "sfb",
        "limit": 200,
        "levels": 2,
        "bins": 23,
        "bin_size": 13,
        "rate_limit": "0.16Mbps",
        "ecn": True,
    },
    "red": {
        "kind": "red",
        "limit": 200,
        "min_th": 5,
        "max_th": 15,
        "max_p": 0.1,
        "w_q": 0.002,
        "mean_pkt_size": 1000,
        "ecn": True,
    },
    "sfred": {"kind": "sfred", "limit": 200, "levels": 2, "bins": 23, "ecn": True},
    # III-B: "46 distinct queues", 414 KB "making each queue equally sized at 9 KB",
    # per-queue RED min_th / max_th 2 KB / 8 KB; 1000-byte packets. max_p, w_q: ns-2.
    "sfq_red": {
        "kind": "sfq",
        "divisor": 46,
        "limit": 414,
        "depth": 9,
        "quantum": 1000,
        "red": True,
        "min_th": 2,
        "max_th": 8,
        "max_p": 0.1,
        "w_q": 0.002,
        "mean_pkt_size": 1000,
        "ecn": True,
    },
}
NAMES = {"sfb": "SFB", "red": "RED", "sfred": "SFRED", "sfq_red": "SFQ+RED"}

#: Fig. 2(b)'s one-way delays (ms) of the access links, as sfb-fig8.toml reads them.
FIG8_LEFT_MS = (1, 5, 5, 1, 5)
FIG8_RIGHT_MS = (5, 20, 20, 20, 20)


def sfq_bin(flow: int, divisor: int, hash_seed: int = 0, generation: int = 1) -> int:
    """The bin of ``flow`` in an ``sfq`` qdisc: ``Sfq::bin_of``, the qdisc's own
    hash through the extension (level 0 of key generation ``generation``)."""
    return _aqmlab.flow_hash(_aqmlab.hash_key(hash_seed, generation, 0), flow) % divisor


def rate(mbps: float) -> str:
    """One spelling per rate, so equal points hash (and cache) equally."""
    return f"{round(mbps * 1000)}kbit"


def with_bottleneck(scenario: Mapping[str, Any], **qdisc: Any) -> dict[str, Any]:
    """A copy of ``scenario`` whose A->B link has the queue ``qdisc``."""
    out = copy.deepcopy(dict(scenario))
    for link in out["topology"]["links"]:
        if (link["from"], link["to"]) == ("A", "B"):
            link["qdisc"] = dict(qdisc)
            return out
    raise KeyError(f"scenario {out.get('name')!r} has no link A -> B")


def sfb(**extra: Any) -> dict[str, Any]:
    return {**QDISCS["sfb"], **extra}


def without_ecn(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """Diagnostic only (no experiment uses it): TCP flows that are not ECN-capable
    and a bottleneck that drops instead of marking, as the experiments were before
    they read the paper as marking (REPRODUCTION.md)."""
    out = copy.deepcopy(dict(scenario))
    for spec in out["flows"]:
        if spec["kind"] == "tcp":
            spec["ecn"] = False
    for link in out["topology"]["links"]:
        if "qdisc" in link:
            link["qdisc"]["ecn"] = False
    return out


def table1_diagnostic(
    transform, *, qdiscs=("sfb", "red", "sfred"), seeds=(1, 2, 3), jobs: int | None = None
) -> pd.DataFrame:
    """Table I's points with ``transform`` (scenario -> scenario) applied, simulated
    (uncached) and averaged over ``seeds``: loss and throughput in Mbit/s, and the
    share of the non-responsive flow's drops that were ``rate_limit`` (pmin = 1).
    For the diagnostics in REPRODUCTION.md, e.g. ``table1_diagnostic(without_ecn)``."""
    import pandas as pd

    from aqmlab.repro._core import load_scenario, run_all, run_key

    points = [
        p for p in _table1_points({"sfb-fig2b": load_scenario("sfb-fig2b")}) if p.label["qdisc"] in qdiscs
    ]
    jobs_in = [(transform(p.scenario), s) for p in points for s in seeds]
    results, _, _ = run_all(jobs_in, None, jobs=jobs, progress=False, fail_fast=True)
    rows = []
    for p in points:
        for seed in seeds:
            r = results[run_key(transform(p.scenario), seed)]
            n = _numbers(p.label, r)
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


# ---- measurements -----------------------------------------------------------------


def _numbers(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    """Loss rates (Mbit/s of dropped packets over the measured interval), throughput
    across A->B (Mbit/s), and per-flow throughput (kbit/s, ``flow<id>_kbps``)."""
    import numpy as np

    run = result.run.iloc[0]
    seconds = float(run["duration_s"]) - float(run["warmup_s"])
    lf = result.link_flows
    lf = lf[lf["link"] == BOTTLENECK].set_index("flow")
    f = result.flows.set_index("id")
    f["mbps"] = lf["throughput_bps"].reindex(f.index).fillna(0.0) / 1e6
    f["loss_mbps"] = f["drops_total"] * PACKET_BITS / seconds / 1e6
    tcp = f[f["kind"] == "tcp"]
    nr = f[f["group"] == "nonresp"]
    osc = f[f["group"] == "osc"]
    fair = LINK_MBPS / len(f)  # the paper's "Fair Share" line: the link over all flows
    out = {
        "seconds": seconds,
        "loss_total_mbps": float(f["loss_mbps"].sum()),
        "loss_tcp_mbps": float(tcp["loss_mbps"].sum()),
        "loss_nonresp_mbps": float(nr["loss_mbps"].sum()),
        "loss_osc_mbps": float(osc["loss_mbps"].sum()),
        "nonresp_mbps": float(nr["mbps"].sum()),
        "osc_mbps": float(osc["mbps"].sum()),
        "tcp_mbps": float(tcp["mbps"].sum()),
        "tcp_mean_mbps": float(tcp["mbps"].mean()),
        "fair_mbps": fair,
        "tcp_jain": float(result.fairness["tcp"]["jain"]),
        # Misclassified: TCP flows the queue rate-limited (pmin = 1 at an arrival).
        "tcp_rate_limited": float((tcp["drops_rate_limit"] > 0).sum()),
        # Shut out: below a tenth of the fair share.
        "tcp_shut_out": float((tcp["mbps"] < 0.1 * fair).sum()),
        "tcp_above_half_fair_pct": 100.0 * float((tcp["mbps"] >= 0.5 * fair).mean()),
    }
    if str(label.get("net", "")) == "fig8":
        rtt = []
        for group in tcp["group"]:
            src, dst = int(group[4]), int(group[5]) - 5
            rtt.append(2 * (FIG8_LEFT_MS[src] + 20 + FIG8_RIGHT_MS[dst]))
        rtt = np.asarray(rtt, dtype=float)
        thr = tcp["mbps"].to_numpy(dtype=float)
        out["rtt_corr"] = float(np.corrcoef(rtt, thr)[0, 1])
        out["tcp_short_rtt_mbps"] = float(thr[rtt == rtt.min()].mean())
        out["tcp_long_rtt_mbps"] = float(thr[rtt == rtt.max()].mean())
    for fid, row in f.iterrows():
        out[f"flow{fid}_kbps"] = float(row["mbps"]) * 1e3
    return out


def _mean_sd(runs: pd.DataFrame, column: str, **where: Any) -> tuple[float, float]:
    sel = runs
    for k, v in where.items():
        sel = sel[sel[k] == v]
    if sel.empty:
        raise KeyError(f"no runs with {where}")
    values = sel[column].astype(float)
    return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0


def _loose(
    quantity: str,
    source: str,
    paper: float,
    runs: pd.DataFrame,
    column: str,
    rel: float,
    floor: float,
    **where,
) -> Check:
    """Paper value ± max(rel x paper, floor) Mbit/s."""
    m, sd = _mean_sd(runs, column, **where)
    width = max(rel * abs(paper), floor)
    return band(
        quantity,
        source,
        f"{paper:g} Mbit/s",
        m,
        paper - width,
        paper + width,
        "Mbit/s",
        f"±{rel * 100:g}% or ±{floor:g} Mbit/s",
        sd=sd,
        paper_value=paper,
    )


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _flow_panels(
    runs: pd.DataFrame, path: Path, panels: list[tuple[str, dict[str, Any]]], title: str
) -> None:
    """One panel per (caption, selection): every TCP flow's throughput (kbit/s, seed
    1) against its flow number, the fair share, and the non-responsive total."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, (caption, where) in zip(axes[0], panels):
        sel = runs
        for k, v in where.items():
            sel = sel[sel[k] == v]
        if sel.empty:
            ax.set_title(f"{caption}: no runs")
            continue
        row = sel.sort_values("seed").iloc[0]
        thr = [row[f"flow{i}_kbps"] / 1e3 for i in range(N_TCP)]
        ax.plot(range(N_TCP), thr, ".", ms=3)
        ax.axhline(row["fair_mbps"], color="r", lw=1, label="fair share")
        ax.set_title(f"{caption}\nnon-responsive: {row['nonresp_mbps']:.2f} Mbit/s", fontsize=9)
        ax.set_xlabel("flow number")
        ax.set_ylabel("throughput (Mbit/s)")
        ax.set_ylim(0, max(0.3, 1.2 * max(thr)))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


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
            with_bottleneck(with_flows(base, "nonresp", rate=rate(r)), **QDISCS[kind]),
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
                m, sd = _mean_sd(runs, col, **where)
                checks.append(within(q, src, p, m, 0.1, "Mbit/s", sd=sd))
            else:
                checks.append(_loose(q, src, p, runs, col, 0.3, 0.3, **where))
    return checks


def _table1_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = _plt()
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
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


register(
    Experiment(
        id="sfb-table1",
        paper=PAPER,
        title="Loss rates with one non-responsive flow: SFB, RED, SFRED, SFQ+RED",
        source="Table I, section III-B",
        scenarios=("sfb-fig2b",),
        points=_table1_points,
        measure=_numbers,
        checks=_table1_checks,
        plot=_table1_plot,
        seeds=3,
    )
)


FIG3_NONRESP = {"sfb": 0.16, "red": 34.68, "sfred": 4.76, "sfq_red": 0.10}


def _fig3_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 3"
    where45 = {"rate_mbps": 45.0}
    m, sd = _mean_sd(runs, "nonresp_mbps", qdisc="sfb", **where45)
    checks = [within("SFB: non-responsive throughput", src, 0.16, m, 0.1, "Mbit/s", sd=sd)]
    for kind in ("red", "sfred", "sfq_red"):
        checks.append(
            _loose(
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
    m, sd = _mean_sd(runs, "tcp_above_half_fair_pct", qdisc="sfb", **where45)
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
    red_tcp, _ = _mean_sd(runs, "tcp_mean_mbps", qdisc="red", **where45)
    sfb_tcp, _ = _mean_sd(runs, "tcp_mean_mbps", qdisc="sfb", **where45)
    checks.append(
        trend(
            "RED: mean TCP throughput < half of SFB's",
            src + "(b)",
            "throughput of all TCP flows suffers considerably",
            red_tcp < 0.5 * sfb_tcp,
        )
    )
    sfred_loss, _ = _mean_sd(runs, "loss_tcp_mbps", qdisc="sfred", **where45)
    sfb_loss, _ = _mean_sd(runs, "loss_tcp_mbps", qdisc="sfb", **where45)
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
    jain, _ = _mean_sd(runs, "tcp_jain", **where)
    sfb_jain, _ = _mean_sd(runs, "tcp_jain", qdisc="sfb", rate_mbps=45.0)
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
    _flow_panels(runs, path, panels, "SFB Fig. 3: TCP throughput, 45 Mbit/s non-responsive flow (seed 1)")


register(
    Experiment(
        id="sfb-fig3",
        paper=PAPER,
        title="Throughput of the 400 TCP flows, 45 Mbit/s non-responsive flow",
        source="Fig. 3, section III-B",
        scenarios=("sfb-fig2b",),
        points=lambda bases: _table1_points(bases, rates=(45.0,)),
        measure=_numbers,
        checks=_fig3_checks,
        plot=_fig3_plot,
        seeds=3,
    )
)


# ---- Fig. 4: eq. (1), and the real qdisc's misclassification drawn over it ---------


def misclassification(levels: int, bins: int, nonresponsive: int) -> float:
    """Eq. (1): [1 - (1 - 1/B)^M]^L (as ``aqmlab model sfb-misclass``)."""
    return (1.0 - (1.0 - 1.0 / bins) ** nonresponsive) ** levels


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
    out = copy.deepcopy(dict(base))
    link_kbps = _aqmlab.parse_rate(out["topology"]["bottleneck"]["rate"]) / 1e3
    out = with_flows(out, "nonresp", count=m, rate=f"{round(4 * link_kbps / m)}kbit")
    out["qdisc"] = {
        **out["qdisc"],
        "levels": levels,
        "bins": total // levels,
        "limit": max(100, 8 * m),
        "hash_seed": hash_seed,
    }
    return out


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


def _fig4_numbers(label: Mapping[str, Any], result: Result) -> dict[str, float]:
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

    plt = _plt()
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
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


register(
    Experiment(
        id="sfb-fig4",
        paper=PAPER,
        title="Probability of misclassification vs non-responsive flows, 90 and 900 bins, L = 1-3",
        source="Fig. 4, eq. (1), section III-C",
        scenarios=("sfb-fig4",),
        points=_fig4_points,
        measure=_fig4_numbers,
        checks=_fig4_checks,
        plot=_fig4_plot,
        seeds=1,
        notes="Each point is one hash seed (seeds 1-5); open-loop traffic, see scenarios/sfb-fig4.toml.",
    )
)


# ---- Fig. 5: 4 and 8 non-responsive flows, misclassification ------------------------

HASH_SEEDS = (1, 2, 3, 4, 5)


def _fig5_point(base: Mapping[str, Any], m: int, hash_seed: int, **qdisc: Any) -> dict[str, Any]:
    scenario = with_flows(base, "nonresp", count=m, rate=rate(5.0))
    return with_bottleneck(scenario, **sfb(hash_seed=hash_seed, **qdisc))


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
        mean, sd = _mean_sd(runs, "tcp_rate_limited", nonresp=m)
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
        mean, sd = _mean_sd(runs, "nonresp_mbps", nonresp=m)
        checks.append(within(f"{m} non-responsive: their throughput", src, thr, mean, 0.1, "Mbit/s", sd=sd))
    return checks


def _fig5_plot(runs: pd.DataFrame, path: Path) -> None:
    panels = [
        (f"({c}) {m} non-responsive (hash seed 1)", {"nonresp": m, "hash_seed": 1})
        for c, m in (("a", 4), ("b", 8))
    ]
    _flow_panels(runs, path, panels, "SFB Fig. 5: TCP throughput with 5 Mbit/s non-responsive flows")


register(
    Experiment(
        id="sfb-fig5",
        paper=PAPER,
        title="SFB with 4 and 8 non-responsive flows: misclassified TCP flows vs eq. (1)",
        source="Fig. 5, section III-C",
        scenarios=("sfb-fig2b",),
        points=_fig5_points,
        measure=_numbers,
        checks=_fig5_checks,
        plot=_fig5_plot,
        seeds=1,
        notes="Each point is one hash seed (the bins' mapping); the mean is over hash seeds 1-5.",
    )
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
    m, sd = _mean_sd(runs, "nonresp_mbps", hash="moving")
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
    m, sd = _mean_sd(runs, "nonresp_mbps", hash="double_buffered")
    checks.append(
        within("double-buffered: non-responsive throughput", src + "(b)", 0.19, m, 0.1, "Mbit/s", sd=sd)
    )
    for h, name, paper in (
        ("moving", "moving hash", "none of the TCP-friendly flows are shut out"),
        ("double_buffered", "double-buffered", "a very high level of protection"),
    ):
        m, sd = _mean_sd(runs, "tcp_shut_out", hash=h)
        checks.append(band(f"{name}: TCP flows shut out", src, paper, m, 0, 4, "flows", "<= 4 (1%)", sd=sd))
    fixed, _ = _mean_sd(runs, "tcp_shut_out", hash="fixed")
    moving, _ = _mean_sd(runs, "tcp_shut_out", hash="moving")
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
    _flow_panels(runs, path, panels, "SFB Fig. 6: 8 non-responsive flows, hash changed every 2 s")


register(
    Experiment(
        id="sfb-fig6",
        paper=PAPER,
        title="SFB with moving and double-buffered hashes, 8 non-responsive flows",
        source="Fig. 6, section III-D",
        scenarios=("sfb-fig2b",),
        points=_fig6_points,
        measure=_numbers,
        checks=_fig6_checks,
        plot=_fig6_plot,
        seeds=3,
    )
)


# ---- Table II and Fig. 7: the oscillating flow --------------------------------------

PERIODS = ((10, 30), (30, 50), (50, 70))
TABLE2 = {  # period -> (TCP, non-responsive, oscillating, total) loss in Mbit/s
    (10, 30): (0.402, 4.866, 4.871, 10.139),
    (30, 50): (0.358, 4.849, 0.025, 5.232),
    (50, 70): (0.260, 4.898, 4.845, 10.003),
}
#: The per-flow series' interval: every period's ends are multiples of it.
SERIES_S = 10


def table2_scenario(base: Mapping[str, Any]) -> dict[str, Any]:
    """One 5 Mbit/s non-responsive flow (n2 -> n7) and the oscillating flow (n1 ->
    n8): 5 Mbit/s from 10 to 30 s and from 50 to 70 s, 0.1 Mbit/s otherwise. Each
    flow's drops are recorded per 10 s (``[monitor] flow_series``) at the monitored
    link directions, A->B and B->A, so one run gives every period's loss."""
    s = with_bottleneck(with_flows(base, "nonresp", rate=rate(5.0)), **QDISCS["sfb"])
    low, high = rate(0.1), rate(5.0)
    s["flows"].append(
        {
            "name": "osc",
            "kind": "cbr",
            "rate": low,
            "count": 1,
            "from": "n1",
            "to": "n8",
            "packet_size": 1000,
            "schedule": [
                {"at": "10s", "rate": high},
                {"at": "30s", "rate": low},
                {"at": "50s", "rate": high},
                {"at": "70s", "rate": low},
            ],
        }
    )
    s["monitor"] = {**s.get("monitor", {}), "flow_series": f"{SERIES_S}s"}
    return s


def period_losses(result: Result, t0: float, t1: float) -> dict[str, float]:
    """Loss (Mbit/s of dropped packets) of the TCP, non-responsive and oscillating
    flows and in total over [t0, t1), from the run's per-flow series (``t0`` and
    ``t1`` multiples of its interval); NaN when the run ends before ``t1``."""
    import numpy as np

    keys = ("loss_tcp_mbps", "loss_nonresp_mbps", "loss_osc_mbps", "loss_total_mbps")
    names = [f"{k}_{t0:g}_{t1:g}" for k in keys]
    if float(result.run["duration_s"].iloc[0]) < t1 - 1e-9:
        return dict.fromkeys(names, float("nan"))
    fs = result.flow_series
    if fs.empty:
        raise ValueError("period_losses needs [monitor] flow_series (table2_scenario sets it)")
    period = round(float(fs["dt_s"].max()) * 1e9)
    if round(t0 * 1e9) % period or round(t1 * 1e9) % period:
        raise ValueError(f"period {t0:g}-{t1:g} s does not tile the series' {period / 1e9:g} s intervals")
    # Interval starts in whole nanoseconds, so 30.000000001 s is not "before 30 s".
    start = np.rint(fs["t_s"].to_numpy(dtype=float) * 1e9)
    inside = fs[(start >= round(t0 * 1e9)) & (start < round(t1 * 1e9))]
    flows = result.flows.set_index("id")
    drops = inside.groupby("flow")["drops"].sum().reindex(flows.index, fill_value=0)
    loss = drops.astype(float) * PACKET_BITS / (t1 - t0) / 1e6
    values = (
        loss[flows["kind"] == "tcp"].sum(),
        loss[flows["group"] == "nonresp"].sum(),
        loss[flows["group"] == "osc"].sum(),
        loss.sum(),
    )
    return {n: float(v) for n, v in zip(names, values)}


def _table2_numbers(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    """The whole measured run's numbers (Fig. 7: 20-100 s) and each period's loss."""
    out = _numbers(label, result)
    for t0, t1 in PERIODS:
        out.update(period_losses(result, t0, t1))
    return out


def _table2_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    # One run per seed: the periods come from its series, Fig. 7 from its totals.
    return [Point({"qdisc": "sfb"}, table2_scenario(bases["sfb-fig2b"]))]


def _table2_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Table II"
    checks = []
    cols = ("loss_tcp_mbps", "loss_nonresp_mbps", "loss_osc_mbps", "loss_total_mbps")
    names = ("TCP flows", "non-responsive", "oscillating", "total")
    tols = (0.3, 0.15, 0.15, 0.5)
    for (t0, t1), paper in TABLE2.items():
        for col, name, p, tol in zip(cols, names, paper, tols):
            m, sd = _mean_sd(runs, f"{col}_{t0:g}_{t1:g}")
            note = "the run ends before this period (--duration)" if m != m else ""
            checks.append(within(f"{t0}-{t1} s: loss, {name}", src, p, m, tol, "Mbit/s", sd=sd, note=note))
    m, sd = _mean_sd(runs, "nonresp_mbps")
    checks.append(
        within("Fig. 7: non-responsive throughput", f"{CITE}, Fig. 7", 0.23, m, 0.1, "Mbit/s", sd=sd)
    )
    return checks


def _table2_plot(runs: pd.DataFrame, path: Path) -> None:
    _flow_panels(runs, path, [("Fig. 7 (20-100 s)", {})], "SFB Fig. 7 / Table II: oscillating flow")


register(
    Experiment(
        id="sfb-table2",
        paper=PAPER,
        title="Loss per period with one non-responsive and one oscillating flow (and Fig. 7)",
        source="Table II, Fig. 7, section III-D",
        scenarios=("sfb-fig2b",),
        points=_table2_points,
        measure=_table2_numbers,
        checks=_table2_checks,
        plot=_table2_plot,
        seeds=3,
        notes="One run per seed: each period's loss from its per-flow series (10 s), "
        "Fig. 7 from the run's totals; a period beyond a shortened run (--duration) is OPEN.",
    )
)


# ---- Fig. 8: varying round-trip times -----------------------------------------------


def _fig8_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = bases["sfb-fig8"]
    return [Point({"net": "fig8", "qdisc": k}, with_bottleneck(base, **QDISCS[k])) for k in ("red", "sfb")]


def _fig8_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 8 / III-E"
    checks = []
    for k in ("red", "sfb"):
        corr, _ = _mean_sd(runs, "rtt_corr", qdisc=k)
        short, _ = _mean_sd(runs, "tcp_short_rtt_mbps", qdisc=k)
        long_, _ = _mean_sd(runs, "tcp_long_rtt_mbps", qdisc=k)
        checks.append(
            trend(
                f"{NAMES[k]}: shorter round trips get more",
                src,
                "biases towards connections with smaller round-trip times",
                corr < 0 and short > long_,
                note=f"corr(RTT, throughput) {corr:.2f}; 52 ms flows {short:.3f}, 90 ms {long_:.3f} Mbit/s",
            )
        )
        m, sd = _mean_sd(runs, "tcp_jain", qdisc=k)
        checks.append(
            band(
                f"{NAMES[k]}: Jain's index over TCP flows",
                src,
                "unfairness is limited",
                m,
                0.75,
                1.0,
                "",
                ">= 0.75",
                sd=sd,
            )
        )
    return checks


def _fig8_plot(runs: pd.DataFrame, path: Path) -> None:
    panels = [("(a) RED", {"qdisc": "red"}), ("(b) SFB", {"qdisc": "sfb"})]
    _flow_panels(runs, path, panels, "SFB Fig. 8: TCP throughput over varying round-trip times")


register(
    Experiment(
        id="sfb-fig8",
        paper=PAPER,
        title="TCP flows over varying round-trip times, RED and SFB",
        source="Fig. 8, section III-E",
        scenarios=("sfb-fig8",),
        points=_fig8_points,
        measure=_numbers,
        checks=_fig8_checks,
        plot=_fig8_plot,
        seeds=3,
    )
)
