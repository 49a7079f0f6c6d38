"""CHOKe paper, Fig. 4 (section III-A): each flow's throughput against its fair
share, and the share of drops due to matches.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, trend, within
from aqmlab.repro._helpers import mean_sd, pyplot, save, with_qdisc
from aqmlab.repro.choke._common import CITE, PAPER, bottleneck_numbers, link_by_flow, qdisc

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result


# ---- Fig. 4: per-flow throughput and the share of drops due to matches ------------


def _fig4_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = bases["choke-fig3"]
    return [Point({"qdisc": "choke"}, with_qdisc(base, **qdisc("choke", 100, 200)))]


def _fig4_measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    out = bottleneck_numbers(result)
    f = link_by_flow(result)
    tcp = f[f["kind"] == "tcp"]
    out["tcp_over_fair"] = float((tcp["kbps"] * 1e3 / tcp["fair_share_bps"]).mean())
    for fid, row in f.iterrows():
        out[f"flow{fid}_kbps"] = float(row["kbps"])
        out[f"flow{fid}_fair_kbps"] = float(row["fair_share_bps"]) / 1e3
    return out


def _fig4_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Fig. 4 / III-A"
    udp_m, udp_sd = mean_sd(runs, "udp_match_pct_of_drops")
    tcp_m, tcp_sd = mean_sd(runs, "tcp_match_pct_of_drops")
    ratio, ratio_sd = mean_sd(runs, "tcp_over_fair")
    udp, _ = mean_sd(runs, "udp_flow_max_kbps")
    tcp_max, _ = mean_sd(runs, "tcp_flow_max_kbps")
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
    plt = pyplot()
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
    save(fig, path)


EXP_FIG4 = Experiment(
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
