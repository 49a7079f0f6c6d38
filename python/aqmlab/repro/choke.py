"""The CHOKe paper's experiments (seed 002).

Pan, Prabhakar & Psounis, *CHOKe: a stateless active queue management scheme for
approximating fair bandwidth allocation*, INFOCOM 2000, section III (Figs. 3-10 and
Table I; section IV-C adds three drop percentages of Fig. 5).

The network of Fig. 2 (``scenarios/choke-fig3.toml``, ``choke-fig5.toml``,
``choke-fig9.toml``): m TCP and n UDP sources on 10 Mbps access links, a 1 Mbps
bottleneck, 1 ms on every link, TCP max window 300, 1000-byte packets, a
300-packet buffer. Fig. 7's chain of five routers is ``choke-table1.toml``.
Parameters the paper leaves out are ns-2's defaults of the time (max_p 0.1, w_q
0.002); each is written in the scenario files and in REPRODUCTION.md.

Every tolerance below was fixed before looking at our numbers; REPRODUCTION.md
gives the reasons.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import (
    Check,
    Experiment,
    Point,
    band,
    register,
    trend,
    with_flows,
    with_qdisc,
    within,
)

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result

PAPER = "choke"
CITE = "Pan et al. 2000"
BOTTLENECK = "left->right"
LINK_KBPS = 1000.0

#: UDP rates of the Fig. 5/6 sweep, Mbit/s (100 kbit/s to 10 Mbit/s, section III-A;
#: the paper's points are not listed, so a log-spaced set including every rate the
#: text quotes a number for: 0.1, 0.5, 1, 3 and 10).
FIG5_RATES = (0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0)

#: Rate of each of the five UDP flows in the Fig. 9/10 sweep, Mbit/s (the paper's
#: axis is not in our copy; assumed per flow).
FIG9_RATES = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0)

# ns-2's RED defaults of the time, for the parameters the paper does not state.
RED_DEFAULTS = {"max_p": 0.1, "w_q": 0.002, "mean_pkt_size": 1000}


def rate(mbps: float) -> str:
    """One spelling per rate, so equal points hash (and cache) equally."""
    return f"{round(mbps * 1000)}kbit"


def _qdisc(kind: str, min_th: int, max_th: int, **extra: Any) -> dict[str, Any]:
    if kind == "droptail":
        return {"kind": "droptail", "limit": 300}
    q = {"kind": kind, "limit": 300, "min_th": min_th, "max_th": max_th, **RED_DEFAULTS}
    if kind == "choke":
        q["candidates"] = 1
    q.update(extra)
    return q


# ---- measurements -----------------------------------------------------------------


def _link_by_flow(result: Result, link: str = BOTTLENECK) -> pd.DataFrame:
    """Per-flow rows of ``link``: throughput (kbit/s), packets across it, group,
    kind, drops by reason."""
    lf = result.link_flows
    lf = lf[lf["link"] == link].set_index("flow")
    flows = result.flows.set_index("id")
    out = flows.copy()
    out["kbps"] = lf["throughput_bps"].reindex(flows.index).fillna(0.0) / 1e3
    out["tx"] = lf["packets"].reindex(flows.index).fillna(0).astype(int)
    out["queued"] = lf["mean_queue_packets"].reindex(flows.index).fillna(0.0)
    return out


def _bottleneck_numbers(result: Result) -> dict[str, float]:
    f = _link_by_flow(result)
    udp = f[f["kind"] == "cbr"]
    tcp = f[f["kind"] == "tcp"]
    link = result.links.set_index("name").loc[BOTTLENECK]
    udp_sent = float(udp["sent"].sum())
    return {
        "udp_kbps": float(udp["kbps"].sum()),
        "tcp_kbps": float(tcp["kbps"].sum()),
        "tcp_mean_kbps": float(tcp["kbps"].mean()),
        "udp_flow_max_kbps": float(udp["kbps"].max()),
        "tcp_flow_max_kbps": float(tcp["kbps"].max()),
        "udp_drop_pct": 100 * float(udp["drops_total"].sum()) / udp_sent if udp_sent else float("nan"),
        "udp_match_pct_of_drops": _pct(udp["drops_choke_match"].sum(), udp["drops_total"].sum()),
        "tcp_match_pct_of_drops": _pct(tcp["drops_choke_match"].sum(), tcp["drops_total"].sum()),
        "mean_queue": float(link["mean_queue_packets"]),
        "utilization": float(link["utilization"]),
        # The UDP flows' share of the time-averaged queue (measured per flow).
        "udp_qshare": _pct(udp["queued"].sum(), link["mean_queue_packets"]) / 100,
    }


def _pct(part: float, whole: float) -> float:
    return 100 * float(part) / float(whole) if whole else float("nan")


def _mean_sd(runs: pd.DataFrame, column: str, **where: Any) -> tuple[float, float]:
    sel = runs
    for k, v in where.items():
        sel = sel[sel[k] == v]
    if sel.empty:
        raise KeyError(f"no runs with {where}")
    values = sel[column].astype(float)
    return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0


def _means(runs: pd.DataFrame, by: str, column: str, **where: Any) -> pd.Series:
    sel = runs
    for k, v in where.items():
        sel = sel[sel[k] == v]
    return sel.groupby(by)[column].mean().sort_index()


def _increasing(values) -> bool:
    v = list(values)
    return all(b > a for a, b in zip(v, v[1:]))


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# ---- Fig. 3: UDP throughput under DropTail, RED and CHOKe -----------------------------


def _fig3_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = bases["choke-fig3"]
    return [
        Point({"qdisc": kind}, with_qdisc(base, **_qdisc(kind, 100, 200)))
        for kind in ("droptail", "red", "choke")
    ]


def _fig3_measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    return _bottleneck_numbers(result)


def _fig3_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 3 / III-A"
    checks = []
    for kind, name in (("droptail", "DropTail"), ("red", "RED")):
        m, sd = _mean_sd(runs, "udp_kbps", qdisc=kind)
        checks.append(
            band(
                f"{name}: UDP throughput",
                src,
                "> 95% of 1 Mbit/s",
                m,
                900,
                LINK_KBPS,
                "kbit/s",
                ">= 900 (-5 pp)",
                sd=sd,
                paper_value=950,
            )
        )
        m, sd = _mean_sd(runs, "tcp_kbps", qdisc=kind)
        checks.append(
            band(
                f"{name}: all TCP throughput",
                src,
                "50 kbit/s (the rest)",
                m,
                0,
                100,
                "kbit/s",
                "<= 100 (+50)",
                sd=sd,
                paper_value=50,
            )
        )
    m, sd = _mean_sd(runs, "udp_kbps", qdisc="choke")
    checks.append(within("CHOKe: UDP throughput", src, 250, m, 100, "kbit/s", sd=sd))
    m, sd = _mean_sd(runs, "tcp_kbps", qdisc="choke")
    checks.append(within("CHOKe: all TCP throughput", src, 750, m, 100, "kbit/s", sd=sd))
    return checks


def _fig3_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = _plt()
    order = ["droptail", "red", "choke"]
    g = runs.groupby("qdisc")
    mean, sd = g[["udp_kbps", "tcp_kbps"]].mean().loc[order], g[["udp_kbps", "tcp_kbps"]].std().loc[order]
    fig, ax = plt.subplots(figsize=(6, 4))
    x = range(len(order))
    ax.bar([i - 0.2 for i in x], mean["udp_kbps"], 0.4, yerr=sd["udp_kbps"], label="UDP (ours)")
    ax.bar([i + 0.2 for i in x], mean["tcp_kbps"], 0.4, yerr=sd["tcp_kbps"], label="32 TCP (ours)")
    ax.plot([0, 1, 2], [950, 950, 250], "k*", ms=10, label="UDP (paper)")
    ax.set_xticks(list(x), ["DropTail", "RED", "CHOKe"])
    ax.set_ylabel("throughput at the bottleneck (kbit/s)")
    ax.set_title("CHOKe Fig. 3: 32 TCP + 1 UDP (2 Mbit/s) over 1 Mbit/s")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


register(
    Experiment(
        id="choke-fig3",
        paper=PAPER,
        title="UDP throughput under DropTail, RED and CHOKe",
        source="Fig. 3, section III-A",
        scenarios=("choke-fig3",),
        points=_fig3_points,
        measure=_fig3_measure,
        checks=_fig3_checks,
        plot=_fig3_plot,
    )
)


# ---- Fig. 4: per-flow throughput and the share of drops due to matches ------------


def _fig4_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = bases["choke-fig3"]
    return [Point({"qdisc": "choke"}, with_qdisc(base, **_qdisc("choke", 100, 200)))]


def _fig4_measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    out = _bottleneck_numbers(result)
    f = _link_by_flow(result)
    tcp = f[f["kind"] == "tcp"]
    out["tcp_over_fair"] = float((tcp["kbps"] * 1e3 / tcp["fair_share_bps"]).mean())
    for fid, row in f.iterrows():
        out[f"flow{fid}_kbps"] = float(row["kbps"])
        out[f"flow{fid}_fair_kbps"] = float(row["fair_share_bps"]) / 1e3
    return out


def _fig4_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 4 / III-A"
    udp_m, udp_sd = _mean_sd(runs, "udp_match_pct_of_drops")
    tcp_m, tcp_sd = _mean_sd(runs, "tcp_match_pct_of_drops")
    ratio, ratio_sd = _mean_sd(runs, "tcp_over_fair")
    udp, _ = _mean_sd(runs, "udp_flow_max_kbps")
    tcp_max, _ = _mean_sd(runs, "tcp_flow_max_kbps")
    return [
        within("UDP drops due to matches", src, 85, udp_m, 10, "%", sd=udp_sd),
        within(
            "TCP drops due to matches",
            src,
            30,
            tcp_m,
            10,
            "%",
            sd=tcp_sd,
            paper_text="30 % (70 % random discard)",
        ),
        within(
            "TCP throughput / fair share, mean over flows",
            f"{CITE}, Figs. 3-4 (derived)",
            0.77,
            ratio,
            0.15,
            "",
            sd=ratio_sd,
            paper_text="0.77 (750/32 vs 1000/33 kbit/s)",
            note="derived from Fig. 3's 750 kbit/s; Fig. 4 says 'relatively close to its fair share'",
        ),
        trend("UDP (flow 33) above every TCP flow", src, "still higher than the rest", udp > tcp_max),
    ]


def _fig4_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = _plt()
    ids = sorted(
        int(c[4:-5])
        for c in runs.columns
        if c.startswith("flow") and c.endswith("_kbps") and not c.endswith("_fair_kbps")
    )
    thr = [runs[f"flow{i}_kbps"].mean() for i in ids]
    fair = [runs[f"flow{i}_fair_kbps"].mean() for i in ids]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar([i + 1 for i in ids], thr, label="throughput (ours, mean over seeds)")
    ax.plot([i + 1 for i in ids], fair, "r-", label="max-min fair share")
    ax.set_xlabel("flow (1-32 TCP, 33 UDP)")
    ax.set_ylabel("kbit/s")
    ax.set_title("CHOKe Fig. 4: throughput per flow")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


register(
    Experiment(
        id="choke-fig4",
        paper=PAPER,
        title="Throughput per flow vs fair share; drops due to matches",
        source="Fig. 4, section III-A",
        scenarios=("choke-fig3",),
        points=_fig4_points,
        measure=_fig4_measure,
        checks=_fig4_checks,
        plot=_fig4_plot,
    )
)


# ---- Figs. 5 and 6: a UDP rate sweep, CHOKe vs RED, min_th 30, max_th 60 -----------


def _fig5_points(bases: Mapping[str, dict[str, Any]], kinds=("choke", "red")) -> list[Point]:
    base = bases["choke-fig5"]
    pts = []
    for kind in kinds:
        q = with_qdisc(base, **_qdisc(kind, 30, 60))
        for mbps in FIG5_RATES:
            pts.append(Point({"qdisc": kind, "udp_mbps": mbps}, with_flows(q, "udp", rate=rate(mbps))))
    return pts


FIG5_DROPS = (  # (UDP Mbit/s, % of UDP packets dropped, where the paper says it)
    (0.1, 23.0, "III-A"),
    (0.5, 57.3, "IV-C"),
    (1.0, 74.1, "IV-C"),
    (3.0, 92.4, "IV-C"),
    (10.0, 98.3, "III-A"),
)


def _fig5_checks(runs: pd.DataFrame) -> list[Check]:
    checks = []
    for mbps, pct, where in FIG5_DROPS:
        m, sd = _mean_sd(runs, "udp_drop_pct", qdisc="choke", udp_mbps=mbps)
        checks.append(
            within(
                f"CHOKe: UDP dropped at {mbps:g} Mbit/s", f"{CITE}, Fig. 5 / {where}", pct, m, 10, "%", sd=sd
            )
        )
    m, sd = _mean_sd(runs, "udp_kbps", qdisc="choke", udp_mbps=1.0)
    checks.append(
        within(
            "CHOKe: UDP throughput at 1 Mbit/s",
            f"{CITE}, Fig. 5 / IV-C",
            280,
            m,
            100,
            "kbit/s",
            sd=sd,
            paper_text="about 280 kbit/s",
        )
    )
    tcp = _means(runs, "udp_mbps", "tcp_mean_kbps", qdisc="choke")
    spread = float(tcp.max() / tcp.min())
    checks.append(
        band(
            "CHOKe: mean TCP throughput, max/min over loads",
            f"{CITE}, Fig. 5 / III-A",
            "'stays almost constant'",
            spread,
            1.0,
            1.5,
            "ratio",
            "<= 1.5",
        )
    )
    m, sd = _mean_sd(runs, "udp_kbps", qdisc="red", udp_mbps=10.0)
    checks.append(
        band(
            "RED: UDP throughput at 10 Mbit/s",
            f"{CITE}, Fig. 5 / III-A",
            "'use up all the network bandwidth'",
            m,
            900,
            LINK_KBPS,
            "kbit/s",
            ">= 900",
            sd=sd,
        )
    )
    m, sd = _mean_sd(runs, "tcp_kbps", qdisc="red", udp_mbps=10.0)
    checks.append(
        band(
            "RED: all TCP throughput at 10 Mbit/s",
            f"{CITE}, Fig. 5 / III-A",
            "'starve out the well-behaving flows'",
            m,
            0,
            100,
            "kbit/s",
            "<= 100",
            sd=sd,
        )
    )
    checks.append(
        trend(
            "CHOKe: UDP drop share rises with the UDP rate",
            f"{CITE}, Fig. 5 / III-A",
            "goes up",
            _increasing(_means(runs, "udp_mbps", "udp_drop_pct", qdisc="choke")),
        )
    )
    return checks


def _fig5_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = _plt()
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for kind, style in (("choke", "o-"), ("red", "s--")):
        sel = runs[runs["qdisc"] == kind].groupby("udp_mbps")
        a.errorbar(
            sel["udp_kbps"].mean().index,
            sel["udp_kbps"].mean(),
            sel["udp_kbps"].std(),
            fmt=style,
            label=f"{kind.upper() if kind == 'red' else 'CHOKe'} UDP",
        )
        a.plot(
            sel["tcp_mean_kbps"].mean().index,
            sel["tcp_mean_kbps"].mean(),
            style,
            alpha=0.5,
            label=f"{'RED' if kind == 'red' else 'CHOKe'} mean TCP flow",
        )
        b.errorbar(
            sel["udp_drop_pct"].mean().index,
            sel["udp_drop_pct"].mean(),
            sel["udp_drop_pct"].std(),
            fmt=style,
            label="RED" if kind == "red" else "CHOKe",
        )
    b.plot([r for r, _, _ in FIG5_DROPS], [p for _, p, _ in FIG5_DROPS], "k*", ms=10, label="paper (CHOKe)")
    for ax in (a, b):
        ax.set_xscale("log")
        ax.set_xlabel("UDP arrival rate (Mbit/s)")
        ax.legend(fontsize=8)
    a.set_ylabel("throughput (kbit/s)")
    b.set_ylabel("UDP packets dropped (%)")
    fig.suptitle("CHOKe Fig. 5: 32 TCP + 1 UDP, min_th 30, max_th 60")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


register(
    Experiment(
        id="choke-fig5",
        paper=PAPER,
        title="UDP throughput and drop percentage vs UDP rate, CHOKe and RED",
        source="Fig. 5, sections III-A, IV-C",
        scenarios=("choke-fig5",),
        points=_fig5_points,
        measure=_fig3_measure,
        checks=_fig5_checks,
        plot=_fig5_plot,
    )
)


def _fig6_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 6 / III-A"
    checks = []
    for mbps in (0.1, 1.0, 10.0):
        m, sd = _mean_sd(runs, "mean_queue", udp_mbps=mbps)
        checks.append(
            band(
                f"mean queue at {mbps:g} Mbit/s",
                src,
                "controlled 'as RED does'",
                m,
                30,
                60,
                "packets",
                "in [min_th, max_th] = [30, 60]",
                sd=sd,
            )
        )
    share = _means(runs, "udp_mbps", "udp_qshare")
    loads = [0.1, 1.0, 10.0]
    checks.append(
        trend(
            "UDP share of the queue rises with its rate",
            src,
            "increases",
            _increasing(share.loc[loads]),
            note="over 0.1, 1 and 10 Mbit/s",
        )
    )
    m, sd = _mean_sd(runs, "udp_qshare", udp_mbps=10.0)
    checks.append(
        within(
            "UDP share of the queue at 10 Mbit/s",
            f"{CITE}, IV-C footnote 10",
            50,
            100 * m,
            15,
            "%",
            paper_text="'half the buffer space'",
            sd=100 * sd,
        )
    )
    return checks


def _fig6_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = _plt()
    g = runs.groupby("udp_mbps")
    q, share = g["mean_queue"].mean(), g["udp_qshare"].mean()
    x = range(len(q))
    fig, ax = plt.subplots(figsize=(7, 4))
    udp = q * share
    ax.bar(x, q - udp, label="TCP (ours)")
    ax.bar(x, udp, bottom=q - udp, label="UDP (ours)")
    ax.set_xticks(list(x), [f"{r:g}" for r in q.index])
    ax.set_xlabel("UDP arrival rate (Mbit/s)")
    ax.set_ylabel("mean queue (packets)")
    ax.set_title("CHOKe Fig. 6: time-averaged queue split between UDP and TCP")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


register(
    Experiment(
        id="choke-fig6",
        paper=PAPER,
        title="Queue occupancy of the UDP flow vs its rate (CHOKe)",
        source="Fig. 6, sections III-A, IV-C",
        scenarios=("choke-fig5",),
        points=lambda bases: _fig5_points(bases, kinds=("choke",)),
        measure=_fig3_measure,
        checks=_fig6_checks,
        plot=_fig6_plot,
    )
)


# ---- Table I: five routers in a chain ---------------------------------------------

#: Table I, kbit/s: flow id -> (R2-R3, R3-R4, R4-R5); None where the flow is absent.
TABLE1 = {
    0: (107.715, None, None), 1: (117.993, None, None), 2: (108.149, None, None),
    3: (114.630, None, None), 4: (114.277, None, None),
    5: (33.654, 32.244, None), 6: (34.603, 33.328, None), 7: (33.464, 31.674, None),
    8: (35.715, 34.576, None), 9: (33.789, 32.569, None), 10: (34.088, 32.216, None),
    11: (37.396, 36.094, None), 12: (37.884, 36.637, None), 13: (33.979, 32.488, None),
    14: (35.010, 33.193, None),
    15: (33.898, 32.352, 32.352), 16: (33.518, 31.837, 31.837), 17: (34.169, 32.569, 32.569),
    18: (34.820, 32.949, 32.949), 19: (34.820, 33.437, 33.437), 20: (35.362, 34.359, 34.359),
    21: (35.823, 34.494, 34.494), 22: (34.955, 33.138, 33.138), 23: (33.816, 32.379, 32.379),
    24: (36.013, 34.522, 34.522), 25: (740.311, 332.854, 332.854),
}  # fmt: skip
TABLE1_LINKS = ("R2->R3", "R3->R4", "R4->R5")
TABLE1_GROUPS = (  # (name, flow ids)
    ("TCP 0-4", range(0, 5)),
    ("TCP 5-14", range(5, 15)),
    ("TCP 15-24", range(15, 25)),
    ("UDP 25", range(25, 26)),
)


def _table1_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    return [Point({"topology": "chain"}, bases["choke-table1"])]


def _table1_measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    lf = result.link_flows
    out: dict[str, float] = {}
    for _, row in lf.iterrows():
        if row["link"] in TABLE1_LINKS:
            out[f"f{int(row['flow'])}@{row['link']}"] = float(row["throughput_bps"]) / 1e3
    return out


def _table1_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Table I"
    checks = []
    for name, ids in TABLE1_GROUPS:
        for li, link in enumerate(TABLE1_LINKS):
            paper = [TABLE1[i][li] for i in ids]
            if paper[0] is None:
                continue
            cols = [f"f{i}@{link}" for i in ids]
            per_seed = runs[cols].mean(axis=1)
            what = "throughput" if len(paper) == 1 else "mean throughput per flow"
            checks.append(
                within(
                    f"{name}: {what} on {link}",
                    src,
                    sum(paper) / len(paper),
                    float(per_seed.mean()),
                    0.2,
                    "kbit/s",
                    relative=True,
                    sd=float(per_seed.std(ddof=1)) if len(runs) > 1 else None,
                )
            )
    return checks


def _table1_flows(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    import pandas as pd

    rows = []
    for fid, paper in TABLE1.items():
        row: dict[str, Any] = {"flow": fid}
        for li, link in enumerate(TABLE1_LINKS):
            col = f"f{fid}@{link}"
            row[f"paper {link}"] = paper[li]
            row[f"ours {link}"] = round(float(runs[col].mean()), 3) if col in runs and paper[li] else None
        rows.append(row)
    return {"flows": pd.DataFrame(rows).set_index("flow")}


def _table1_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for li, (ax, link) in enumerate(zip(axes, TABLE1_LINKS)):
        ids = [i for i, p in TABLE1.items() if p[li] is not None]
        ours = [runs[f"f{i}@{link}"].mean() for i in ids]
        ax.bar(ids, ours, label="ours")
        ax.plot(ids, [TABLE1[i][li] for i in ids], "k*", label="paper")
        ax.set_yscale("log")
        ax.set_title(link)
        ax.set_xlabel("flow (25 = UDP)")
    axes[0].set_ylabel("throughput (kbit/s)")
    axes[0].legend()
    fig.suptitle("CHOKe Table I: throughput of each flow on each link")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


register(
    Experiment(
        id="choke-table1",
        paper=PAPER,
        title="Each flow's throughput at each link of a five-router chain",
        source="Table I and Fig. 7, section III-B",
        scenarios=("choke-table1",),
        points=_table1_points,
        measure=_table1_measure,
        checks=_table1_checks,
        plot=_table1_plot,
        extra_tables=_table1_flows,
    )
)


# ---- Fig. 8: more drop candidates, one UDP flow ------------------------------------

#: "CHOKe with drop m" has m - 1 candidates (section III-C): drop 2, 3, 4.
FIG8_CANDIDATES = (1, 2, 3)


def _fig8_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = with_flows(bases["choke-fig5"], "udp", rate=rate(2.0))
    return [
        Point({"drops": m + 1}, with_qdisc(base, **_qdisc("choke", 30, 60, candidates=m)))
        for m in FIG8_CANDIDATES
    ]


def _fig8_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 8 / III-C"
    udp = _means(runs, "drops", "udp_kbps")
    tcp = _means(runs, "drops", "tcp_kbps")
    gain23, gain34 = udp[2] - udp[3], udp[3] - udp[4]
    return [
        trend(
            "UDP throughput falls from drop 2 to 3 to 4",
            src,
            "better control with more drops",
            _increasing(list(udp)[::-1]),
        ),
        trend("all-TCP throughput rises from drop 2 to 3 to 4", src, "(implied)", _increasing(list(tcp))),
        trend(
            "drop 3 -> 4 gains less than drop 2 -> 3",
            f"{CITE}, III-C footnote 8",
            "improvement 3 -> 4 'very small'",
            gain34 < gain23,
            note=f"UDP falls {gain23:.0f} then {gain34:.0f} kbit/s",
        ),
    ]


def _fig8_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = _plt()
    g = runs.groupby("drops")
    fig, ax = plt.subplots(figsize=(6, 4))
    for col, label in (("udp_kbps", "UDP"), ("tcp_kbps", "32 TCP")):
        ax.errorbar(g[col].mean().index, g[col].mean(), g[col].std(), fmt="o-", label=label)
    ax.set_xticks(list(g["udp_kbps"].mean().index))
    ax.set_xlabel("CHOKe with drop m (m - 1 candidates)")
    ax.set_ylabel("throughput (kbit/s)")
    ax.set_title("CHOKe Fig. 8: multiple drops, UDP at 2 Mbit/s")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


register(
    Experiment(
        id="choke-fig8",
        paper=PAPER,
        title="CHOKe with drop 2, 3 and 4 (1-3 candidates), one 2 Mbit/s UDP flow",
        source="Fig. 8, section III-C",
        scenarios=("choke-fig5",),
        points=_fig8_points,
        measure=lambda label, result: _bottleneck_numbers(result),
        checks=_fig8_checks,
        plot=_fig8_plot,
    )
)


# ---- Figs. 9 and 10: five UDP flows -------------------------------------------------

FIG9_VARIANTS = {
    "basic": {"candidates": 1},  # drop 2
    "drop5": {"candidates": 4},  # "CHOKe with 5 drops"
    # m = 2i candidates in region i of k = 2 (the paper gives no k; 2 makes the
    # largest m = 4, the same as "5 drops" of Fig. 9).
    "self-adjusting": {"candidates": 1, "adaptive_candidates": True, "regions": 2},
}


def _fig9_points(bases: Mapping[str, dict[str, Any]], variants=("basic", "drop5")) -> list[Point]:
    base = bases["choke-fig9"]
    pts = []
    for v in variants:
        q = with_qdisc(base, **_qdisc("choke", 30, 60, **FIG9_VARIANTS[v]))
        for mbps in FIG9_RATES:
            pts.append(Point({"variant": v, "udp_mbps": mbps}, with_flows(q, "udp", rate=rate(mbps))))
    return pts


def _fig9_measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    out = _bottleneck_numbers(result)
    # five UDP flows of equal rate: each holds a fifth of their total share.
    out["udp_qshare_each"] = out["udp_qshare"] / 5
    return out


def _fig9_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 9 / III-C"
    top = max(FIG9_RATES)
    basic_udp = _means(runs, "udp_mbps", "udp_kbps", variant="basic")
    checks = [
        trend(
            "basic: all-UDP throughput rises with the UDP rate",
            src,
            "goes up monotonically",
            _increasing(basic_udp),
        ),
    ]
    m, sd = _mean_sd(runs, "tcp_kbps", variant="basic", udp_mbps=top)
    checks.append(
        band(
            f"basic: all-TCP throughput at {top:g} Mbit/s per UDP flow",
            src,
            "'almost no bandwidth left'",
            m,
            0,
            100,
            "kbit/s",
            "<= 100 (10% of link)",
            sd=sd,
        )
    )
    m, sd = _mean_sd(runs, "udp_qshare_each", variant="basic", udp_mbps=top)
    checks.append(
        within(
            f"basic: queue share of each UDP flow at {top:g} Mbit/s",
            src,
            20,
            100 * m,
            10,
            "%",
            paper_text="'around 20% of the queue'",
            sd=100 * sd,
        )
    )
    basic = _means(runs, "udp_mbps", "tcp_kbps", variant="basic")
    drop5 = _means(runs, "udp_mbps", "tcp_kbps", variant="drop5")
    rates = [r for r in FIG9_RATES if r >= 0.5]
    checks.append(
        trend(
            "drop 5: all-TCP throughput above basic at every rate >= 0.5 Mbit/s",
            src,
            "boosts the throughput of the TCP flows",
            all(drop5[r] > basic[r] for r in rates),
        )
    )
    return checks


def _fig9_plot(runs: pd.DataFrame, path: Path, title: str = "CHOKe Fig. 9: 32 TCP + 5 UDP") -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    for v in [v for v in FIG9_VARIANTS if v in set(runs["variant"])]:
        g = runs[runs["variant"] == v].groupby("udp_mbps")
        ax.errorbar(
            g["udp_kbps"].mean().index,
            g["udp_kbps"].mean(),
            g["udp_kbps"].std(),
            fmt="o-",
            label=f"{v}: 5 UDP",
        )
        ax.errorbar(
            g["tcp_kbps"].mean().index,
            g["tcp_kbps"].mean(),
            g["tcp_kbps"].std(),
            fmt="s--",
            label=f"{v}: 32 TCP",
        )
    ax.set_xscale("log")
    ax.set_xlabel("arrival rate of each UDP flow (Mbit/s)")
    ax.set_ylabel("aggregate throughput (kbit/s)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


register(
    Experiment(
        id="choke-fig9",
        paper=PAPER,
        title="Five UDP flows: basic CHOKe vs CHOKe with 5 drops",
        source="Fig. 9, section III-C",
        scenarios=("choke-fig9",),
        points=_fig9_points,
        measure=_fig9_measure,
        checks=_fig9_checks,
        plot=_fig9_plot,
    )
)


def _fig10_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 10 / III-C"
    basic = _means(runs, "udp_mbps", "tcp_kbps", variant="basic")
    adaptive = _means(runs, "udp_mbps", "tcp_kbps", variant="self-adjusting")
    basic_udp = _means(runs, "udp_mbps", "udp_kbps", variant="basic")
    adaptive_udp = _means(runs, "udp_mbps", "udp_kbps", variant="self-adjusting")
    rates = [r for r in FIG9_RATES if r >= 0.5]
    top = max(FIG9_RATES)
    return [
        trend(
            "self-adjusting: all-TCP throughput above basic at every rate >= 0.5 Mbit/s",
            src,
            "'works well' with multiple unresponsive flows",
            all(adaptive[r] > basic[r] for r in rates),
        ),
        trend(
            f"self-adjusting: all-UDP throughput at {top:g} Mbit/s below basic",
            src,
            "UDP regulated",
            adaptive_udp[top] < basic_udp[top],
            note=f"{adaptive_udp[top]:.0f} vs {basic_udp[top]:.0f} kbit/s",
        ),
    ]


register(
    Experiment(
        id="choke-fig10",
        paper=PAPER,
        title="Five UDP flows: self-adjusting CHOKe (m = 2i over k = 2 regions)",
        source="Fig. 10, section III-C",
        scenarios=("choke-fig9",),
        points=lambda bases: _fig9_points(bases, variants=("basic", "self-adjusting")),
        measure=_fig9_measure,
        checks=_fig10_checks,
        plot=lambda runs, path: _fig9_plot(runs, path, "CHOKe Fig. 10: self-adjusting, 32 TCP + 5 UDP"),
    )
)
