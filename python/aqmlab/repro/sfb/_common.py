"""What the SFB paper's experiments share: the network's constants, each scheme's
queue at the bottleneck, eq. (1), and the numbers every run is measured by (loss,
throughput, per-flow rates), with the helpers that check and draw them. The
package's docstring gives the setup and why every scheme marks.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab import _aqmlab
from aqmlab.repro._core import Check, band
from aqmlab.repro._helpers import mean_sd, pyplot, save

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result


PAPER = "sfb"
CITE = "Feng et al. 2001"
BOTTLENECK = "A->B"
#: The bottleneck's ends, as :func:`~aqmlab.repro._helpers.with_qdisc` names a link.
BOTTLENECK_ENDS = ("A", "B")
LINK_MBPS = 45.0
PACKET_BITS = 8 * 1000
N_TCP = 400

#: The bottleneck's queue for each scheme. SFB and SFRED per section III-B; RED's
#: thresholds, max_p and w_q are ns-2's defaults (the paper states none). Every
#: scheme marks ECN-capable packets (the package's docstring says why).
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


def sfb(**extra: Any) -> dict[str, Any]:
    """SFB's queue of section III-B with ``extra`` keys changed."""
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


def misclassification(levels: int, bins: int, nonresponsive: int) -> float:
    """Eq. (1): [1 - (1 - 1/B)^M]^L (as ``aqmlab model sfb-misclass``)."""
    return (1.0 - (1.0 - 1.0 / bins) ** nonresponsive) ** levels


# ---- measurements -----------------------------------------------------------------


def run_numbers(label: Mapping[str, Any], result: Result) -> dict[str, float]:
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


def loose(
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
    m, sd = mean_sd(runs, column, **where)
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


def flow_panels(runs: pd.DataFrame, path: Path, panels: list[tuple[str, dict[str, Any]]], title: str) -> None:
    """One panel per (caption, selection): every TCP flow's throughput (kbit/s, seed
    1) against its flow number, the fair share, and the non-responsive total."""
    plt = pyplot()
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
    save(fig, path)
