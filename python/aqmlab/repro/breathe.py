"""The BREATHe paper's experiments (seed 001).

Chang & Lin, *A simple mechanism for throttling high-bandwidth flows*, EURASIP
JWCN 2008, section 4 (Figs. 2 and 3; the abstract's numbers in section 1).

One network (``scenarios/breathe-fig2.toml``): 1000 TCP flows and 30 UDP flows
(10 at 10 kbit/s, 5 at 100 kbit/s, 5 at 500 kbit/s, 5 at 1 Mbit/s, 5 at 10 Mbit/s)
over a 1 Mbit/s bottleneck with a 300-packet buffer, 1000-byte packets, 1000 s.
The text of section 4 and Fig. 2's caption give the same 30 flows (the caption
lists "5 groups" with counts 10, 5, 5, 5, 5; the text calls the last ten "10
malicious flows (5 at 1 Mbps, 5 at 10 Mbps)"). The ideal fair rate is 1 Mbit/s /
1030 = 0.97 kbit/s.

Two experiments over the same runs (the cache shares them):
- ``breathe-fig2``: protection ability, the TCP flows' mean throughput as a
  percentage of the fair rate, per scheme, and each UDP group's throughput.
- ``breathe-fig3``: the distribution of the 1000 TCP flows' rates.

Schemes, with what the paper leaves out (each written down, with its source):
- DropTail and RED (100/200 packets, ns-2's max_p 0.1 and w_q 0.002: the CHOKe
  paper's setting on the same network); CHOKe with 1 and 10 candidates (same
  thresholds); SFQ with 16 buckets of 300/16 = 18 packets each, arrivals dropped
  when their bucket is full (section 4: "divide the FIFO single queue (300 pkts)
  to 16 buckets (300/16 pkts)"); AFD with a 30,000-entry shadow buffer (section 4),
  every arrival sampled, the AFD paper's gains and 160 Hz, a target of 100
  packets (not stated); BREATHe on RED's thresholds above.
- BREATHe's K, which the paper does not state for its runs. Algorithm 1 sizes it
  as K = C / r_limit, r_limit being the rate above which a flow is to be caught
  ("if we want to find flows with throughput more than r_limit ... we just need
  C/r_limit counters instead of implementing N (total number of flows)
  counters", 3.1), and section 4 names the rate above which a UDP flow stops
  being "small": 100 kbit/s, "based on the assumption of the bottleneck
  bandwidth being 1 Mbps". So r_limit = 100 kbit/s and K = 10 is the reading the
  text supports (``breathe``). Two other readings run beside it as findings, not
  checks: K = 100 (r_limit = 10 kbit/s, the smallest UDP rate; ``breathe-k100``)
  and K = C / fair rate = 1031 (``breathe-fair``), which the issue measured.

Scale: none needed. The bottleneck carries 125 packets/s, and the 58 Mbit/s the
UDP flows offer are dropped at its queue, so a run of the paper's full 1000 s
(100 s of warm-up) takes 5-20 s of one core; the 45 distinct runs of the three
experiments (3 seeds each) take a few minutes with two jobs. ``--duration``
shortens every run (warm-up a fifth) for a quicker look.

Every tolerance of Figs. 2 and 3 was fixed before the first run of these
experiments. ``breathe-k``, a sweep over K, was added after it, as a finding; its
bands are Figs. 2 and 3's. REPRODUCTION.md gives the reasons and the results.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, band, trend, within
from aqmlab.repro._helpers import mean_sd, pyplot, save, with_qdisc

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result

PAPER = "breathe"
CITE = "Chang & Lin 2008"
BOTTLENECK = "left->right"
#: The ideal fair rate, kbit/s: 1 Mbit/s over 1030 flows (Fig. 2's caption).
FAIR_KBPS = 1000.0 / 1030
#: UDP groups of the scenario: name -> each flow's rate, kbit/s.
UDP_GROUPS = {"udp10k": 10, "udp100k": 100, "udp500k": 500, "udp1m": 1000, "udp10m": 10000}

RED = {"limit": 300, "min_th": 100, "max_th": 200, "max_p": 0.1, "w_q": 0.002, "mean_pkt_size": 1000}

#: The schemes of Figs. 2 and 3: label -> the bottleneck's qdisc.
SCHEMES: dict[str, dict[str, Any]] = {
    "droptail": {"kind": "droptail", "limit": 300},
    "red": {"kind": "red", **RED},
    "choke1": {"kind": "choke", **RED, "candidates": 1},
    "choke10": {"kind": "choke", **RED, "candidates": 10},
    "sfq": {"kind": "sfq", "limit": 300, "divisor": 16, "depth": 300 // 16, "drop": "tail"},
    "afd": {"kind": "afd", "limit": 300, "shadow": 30000, "sample": 1.0, "target": 100.0},
    "breathe": {"kind": "breathe", **RED, "rate_limit": "100kbit"},
    "breathe-k100": {"kind": "breathe", **RED, "counters": 100},
    "breathe-fair": {"kind": "breathe", **RED, "counters": 1031},
}
NAMES = {
    "droptail": "DropTail",
    "red": "RED",
    "choke1": "CHOKe-1",
    "choke10": "CHOKe-10",
    "sfq": "SFQ",
    "afd": "AFD",
    "breathe": "BREATHe (K = 10)",
    "breathe-k100": "BREATHe (K = 100)",
    "breathe-fair": "BREATHe (K = 1031)",
}
#: Percentiles of the TCP rate distribution kept per run (for Fig. 3's CDF).
PERCENTILES = tuple(range(0, 101, 5))


# ---- measurements -----------------------------------------------------------------


def _points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = bases["breathe-fig2"]
    points = []
    for label, q in SCHEMES.items():
        # A fresh table: the file's BREATHe keys stay out.
        points.append(Point({"qdisc": label}, with_qdisc(base, q)))
    return points


def _measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    import numpy as np

    lf = result.link_flows
    lf = lf[lf["link"] == BOTTLENECK].set_index("flow")
    flows = result.flows.set_index("id")
    kbps = lf["throughput_bps"].reindex(flows.index).fillna(0.0) / 1e3
    tcp = kbps[flows["kind"] == "tcp"].to_numpy()
    out: dict[str, float] = {
        "tcp_mean_kbps": float(tcp.mean()),
        "protection_pct": 100 * float(tcp.mean()) / FAIR_KBPS,
        "tcp_in_06_12_pct": 100 * float(((tcp >= 0.6) & (tcp <= 1.2)).mean()),
        "tcp_in_04_12_pct": 100 * float(((tcp >= 0.4) & (tcp <= 1.2)).mean()),
        "tcp_stopped_pct": 100 * float((tcp == 0).mean()),
        "udp_kbps": float(kbps[flows["kind"] == "cbr"].sum()),
        "udp_flow_max_kbps": float(kbps[flows["kind"] == "cbr"].max()),
        "diagnostics": float(len(result.diagnostics)),
    }
    for group in UDP_GROUPS:
        out[f"{group}_kbps"] = float(kbps[flows["group"] == group].mean())
    for p, v in zip(PERCENTILES, np.percentile(tcp, PERCENTILES)):
        out[f"tcp_p{p}"] = float(v)
    return out


# ---- Fig. 2: protection ability ---------------------------------------------------


def _fig2_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 2 / section 4"
    unit = "%"
    checks: list[Check] = []

    def protection(label: str) -> tuple[float, float]:
        return mean_sd(runs, "protection_pct", qdisc=label)

    # "For Drop-Tail and RED ... the TCP flows have nearly zero throughput."
    for label in ("droptail", "red"):
        m, sd = protection(label)
        checks.append(
            band(f"{NAMES[label]}: TCP protection", src, "nearly zero", m, 0, 10, unit, "<= 10%", sd=sd)
        )
    # "CHOCkE 1 cannot protect TCP flows well": below CHOKe-10's 50%.
    m, sd = protection("choke1")
    checks.append(
        band(
            "CHOKe-1: TCP protection",
            src,
            "cannot protect well (below CHOKe-10)",
            m,
            0,
            50,
            unit,
            "< 50%",
            sd=sd,
        )
    )
    # "Even CHOCkE with ... 10 can only provides 50% protection ability."
    m, sd = protection("choke10")
    checks.append(within("CHOKe-10: TCP protection", src, 50, m, 15, unit, sd=sd))
    # "SFQ has zero-protection ability to the TCP users."
    m, sd = protection("sfq")
    checks.append(band("SFQ: TCP protection", src, "zero", m, 0, 10, unit, "<= 10%", sd=sd))
    # "AFD can provide 78% protection ability".
    m, sd = protection("afd")
    checks.append(within("AFD: TCP protection", src, 78, m, 15, unit, sd=sd))
    # "... and still UDP flows grab more bandwidth than TCP users": per flow.
    udp_flow = mean_sd(runs, "udp_kbps", qdisc="afd")[0] / 30
    checks.append(
        trend(
            "AFD: a UDP flow gets more than a TCP flow",
            src,
            "UDP flows grab more bandwidth than TCP users",
            udp_flow > mean_sd(runs, "tcp_mean_kbps", qdisc="afd")[0],
            note=f"mean per UDP flow {udp_flow:.2f} kbit/s",
        )
    )
    # BREATHe "can effectively provide fair bandwidth allocation": better than
    # AFD's 78% and at most what 1000 TCP flows can carry over 1 Mbit/s (103%).
    m, sd = protection("breathe")
    checks.append(
        band(
            "BREATHe (K = 10): TCP protection",
            src,
            "the best (above AFD's 78%)",
            m,
            78,
            104,
            unit,
            "78..104%",
            sd=sd,
        )
    )
    others = [k for k in ("droptail", "red", "choke1", "choke10", "sfq", "afd")]
    best = all(m > mean_sd(runs, "protection_pct", qdisc=k)[0] for k in others)
    checks.append(trend("BREATHe protects TCP best", src, "higher protection than every other scheme", best))
    # "it bounded every flow's throughput just like scheduling algorithms": with
    # r_limit = 100 kbit/s, no UDP flow above it (+10% for the estimate's slack).
    m, sd = mean_sd(runs, "udp_flow_max_kbps", qdisc="breathe")
    checks.append(
        band(
            "BREATHe (K = 10): fastest UDP flow",
            src,
            "every flow's throughput bounded",
            m,
            0,
            110,
            "kbit/s",
            "<= r_limit + 10%",
            sd=sd,
        )
    )
    return checks


def _fig2_groups(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    import pandas as pd

    cols = ["protection_pct", "tcp_mean_kbps", *[f"{g}_kbps" for g in UDP_GROUPS], "udp_kbps", "diagnostics"]
    table = runs.groupby("qdisc")[cols].mean().reindex(list(SCHEMES)).round(3)
    table.index = pd.Index([NAMES[k] for k in table.index], name="scheme")
    return {"schemes": table}


def _fig2_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    order = list(SCHEMES)
    g = runs.groupby("qdisc")
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.5))
    mean, sd = g["protection_pct"].mean().reindex(order), g["protection_pct"].std().reindex(order)
    x = range(len(order))
    ax.bar(list(x), mean, yerr=sd, color="tab:blue", label="ours")
    paper = {"choke10": 50, "sfq": 0, "afd": 78}
    ax.plot([order.index(k) for k in paper], list(paper.values()), "k*", ms=10, label="paper")
    ax.axhline(100, color="grey", lw=0.8, ls=":")
    ax.set_xticks(list(x), [NAMES[k] for k in order], rotation=35, ha="right")
    ax.set_ylabel("TCP throughput, % of the fair rate 0.97 kbit/s")
    ax.set_title("Fig. 2(a): protection ability")
    ax.legend()
    width = 0.8 / len(UDP_GROUPS)
    for i, group in enumerate(UDP_GROUPS):
        vals = g[f"{group}_kbps"].mean().reindex(order)
        bx.bar([j - 0.4 + (i + 0.5) * width for j in x], vals, width, label=group)
    bx.axhline(FAIR_KBPS, color="k", lw=0.8, ls="--", label="fair rate")
    bx.set_yscale("log")
    bx.set_xticks(list(x), [NAMES[k] for k in order], rotation=35, ha="right")
    bx.set_ylabel("throughput per UDP flow (kbit/s)")
    bx.set_title("Fig. 2(b): each UDP group's throughput")
    bx.legend(fontsize=7)
    fig.suptitle("BREATHe Fig. 2: 1000 TCP + 30 UDP over 1 Mbit/s")
    save(fig, path)


EXP_FIG2 = Experiment(
    id="breathe-fig2",
    paper=PAPER,
    title="Protection ability: TCP's share of the fair rate and each UDP group's throughput",
    source="Fig. 2, section 4",
    scenarios=("breathe-fig2",),
    points=_points,
    measure=_measure,
    checks=_fig2_checks,
    plot=_fig2_plot,
    seeds=3,
    extra_tables=_fig2_groups,
)


# ---- Fig. 3: the distribution of the TCP flows' rates -------------------------------


def _fig3_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 3 / section 4"
    s1 = f"{CITE}, section 1"
    checks: list[Check] = []
    m, sd = mean_sd(runs, "tcp_in_06_12_pct", qdisc="breathe")
    checks.append(within("BREATHe (K = 10): TCP flows within 0.6-1.2 kbit/s", src, 70, m, 15, "%", sd=sd))
    m, sd = mean_sd(runs, "tcp_stopped_pct", qdisc="breathe")
    checks.append(
        band(
            "BREATHe (K = 10): TCP flows stopped",
            s1,
            "0.3%",
            m,
            0,
            1.0,
            "%",
            "<= 1% (+0.7 pp)",
            sd=sd,
            paper_value=0.3,
        )
    )
    m, sd = mean_sd(runs, "tcp_in_04_12_pct", qdisc="breathe")
    checks.append(
        band("BREATHe (K = 10): TCP flows within 0.4-1.2 kbit/s", s1, "most", m, 50, 100, "%", "> 50%", sd=sd)
    )
    # "CHOCkE cannot guarantee fairness and neither can AFD": their TCP rates are
    # less concentrated around the fair rate than BREATHe's.
    ours = mean_sd(runs, "tcp_in_06_12_pct", qdisc="breathe")[0]
    for label in ("choke10", "afd"):
        other = mean_sd(runs, "tcp_in_06_12_pct", qdisc=label)[0]
        checks.append(
            trend(
                f"{NAMES[label]}: fewer TCP flows within 0.6-1.2 kbit/s than BREATHe",
                src,
                f"{NAMES[label].split('-')[0]} cannot guarantee fairness",
                other < ours,
                note=f"{other:.1f}% vs {ours:.1f}%",
            )
        )
    return checks


def _fig3_table(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    import pandas as pd

    cols = ["tcp_in_06_12_pct", "tcp_in_04_12_pct", "tcp_stopped_pct", "tcp_p5", "tcp_p50", "tcp_p95"]
    table = runs.groupby("qdisc")[cols].mean().reindex(list(SCHEMES)).round(3)
    table.index = pd.Index([NAMES[k] for k in table.index], name="scheme")
    return {"distribution": table}


def _fig3_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    shown = ("choke1", "choke10", "sfq", "afd", "breathe", "breathe-k100", "breathe-fair")
    cdf = [p / 100 for p in PERCENTILES]
    for label in shown:
        sel = runs[runs["qdisc"] == label]
        rates = [float(sel[f"tcp_p{p}"].mean()) for p in PERCENTILES]
        ax.plot(rates, cdf, label=NAMES[label], lw=2 if label == "breathe" else 1)
    ax.axvline(FAIR_KBPS, color="k", ls="--", lw=0.8, label="fair rate 0.97 kbit/s")
    ax.axvspan(0.6, 1.2, color="grey", alpha=0.15, label="0.6-1.2 kbit/s")
    ax.set_xscale("symlog", linthresh=0.1)
    ax.set_xlabel("TCP flow throughput (kbit/s)")
    ax.set_ylabel("fraction of the 1000 TCP flows")
    ax.set_title("BREATHe Fig. 3: distribution of TCP rates (mean percentiles over seeds)")
    ax.legend(fontsize=7)
    save(fig, path)


EXP_FIG3 = Experiment(
    id="breathe-fig3",
    paper=PAPER,
    title="Fairness: the distribution of the 1000 TCP flows' rates",
    source="Fig. 3, section 4; section 1",
    scenarios=("breathe-fig2",),
    points=_points,
    measure=_measure,
    checks=_fig3_checks,
    plot=_fig3_plot,
    seeds=3,
    extra_tables=_fig3_table,
)


# ---- Which K? BREATHe's counters swept (a finding, added after the first run) ------

#: K of the sweep. 10, 100 and 1031 are the readings above; the others fill the
#: range between a K far below the 1030 flows and one at their number.
K_SWEEP = (10, 30, 100, 150, 200, 300, 500, 1000, 1031)


def _k_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = bases["breathe-fig2"]
    points = []
    for k in K_SWEEP:
        points.append(Point({"k": k}, with_qdisc(base, {"kind": "breathe", **RED, "counters": k})))
    return points


def _k_checks(runs: pd.DataFrame) -> list[Check]:
    """The paper's BREATHe numbers at every K, with the bands of Figs. 2 and 3."""
    src = f"{CITE}, Figs. 2-3"
    checks: list[Check] = []
    for k in K_SWEEP:
        sel = runs[runs["k"] == k]

        m, sd = mean_sd(sel, "protection_pct")
        checks.append(
            band(
                f"K = {k}: TCP protection",
                src,
                "the best (above AFD's 78%)",
                m,
                78,
                104,
                "%",
                "78..104%",
                sd=sd,
            )
        )
        m, sd = mean_sd(sel, "tcp_in_06_12_pct")
        checks.append(within(f"K = {k}: TCP flows within 0.6-1.2 kbit/s", src, 70, m, 15, "%", sd=sd))
        m, sd = mean_sd(sel, "tcp_stopped_pct")
        checks.append(
            band(f"K = {k}: TCP flows stopped", src, "0.3%", m, 0, 1.0, "%", "<= 1% (+0.7 pp)", sd=sd)
        )
    return checks


def _k_table(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    cols = [
        "protection_pct",
        "tcp_in_06_12_pct",
        "tcp_in_04_12_pct",
        "tcp_stopped_pct",
        "udp_flow_max_kbps",
        "udp_kbps",
        "diagnostics",
    ]
    return {"by-k": runs.groupby("k")[cols].mean().round(3)}


def _k_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    g = runs.groupby("k")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for col, name in (
        ("protection_pct", "TCP protection (% of fair rate)"),
        ("tcp_in_06_12_pct", "TCP flows within 0.6-1.2 kbit/s (%)"),
        ("tcp_stopped_pct", "TCP flows stopped (%)"),
    ):
        ax.errorbar(list(g.groups), g[col].mean(), yerr=g[col].std(), marker="o", label=name)
    ax.axhline(78, color="grey", ls=":", lw=0.8, label="AFD in the paper (78%)")
    ax.axhline(70, color="k", ls="--", lw=0.8, label="paper: 70% within 0.6-1.2")
    ax.set_xscale("log")
    ax.set_xlabel("K (counters)")
    ax.set_ylabel("%")
    ax.set_title("BREATHe against K: 1000 TCP + 30 UDP over 1 Mbit/s")
    ax.legend(fontsize=7)
    save(fig, path)


EXP_K = Experiment(
    id="breathe-k",
    paper=PAPER,
    title="Which K: BREATHe's Fig. 2 and 3 numbers against the number of counters",
    source="Figs. 2-3, Algorithm 1 (K unstated)",
    scenarios=("breathe-fig2",),
    points=_k_points,
    measure=_measure,
    checks=_k_checks,
    plot=_k_plot,
    seeds=3,
    extra_tables=_k_table,
    notes="Added after the first full run; the bands are Figs. 2 and 3's, fixed before it.",
)

#: The paper's experiments: Figs. 2 and 3, then the sweep over K.
EXPERIMENTS = (EXP_FIG2, EXP_FIG3, EXP_K)
