"""What the SFRED / NLRED paper's experiments share: the networks of Fig. 12
(section 5) and Fig. 1 (section 3), each scheme's queue, what a run is measured
by (the bottleneck's throughput and queue; section 3's per-flow series and web
transfers), and the helpers that check and draw them. The package's docstring
gives the setup.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Point
from aqmlab.repro._helpers import pyplot, save, select, with_qdisc

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result


PAPER = "sfred-nlred"
CITE = "Wang et al. 2009"

# ---- section 5: the network of Fig. 12 ---------------------------------------------

FIG12 = "sfred-nlred-fig12"
BOTTLENECK = "left->right"
LINK_MBPS = 10.0
#: N, the long-lived TCP flows (the paper: "from 5 to 120"; its points are lost).
NS = (5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 120)
#: max_p of Figs. 13-16 ("from 0.02 to 0.5"; the text names 0.075, 0.1 and 0.15).
MAX_PS = (0.02, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5)
#: Packet sizes of Fig. 21, bytes ("from 100 bytes to 2500 bytes").
SIZES = (100, 250, 500, 1000, 1500, 2000, 2500)
#: The grid's shortened runs (see the package's docstring).
GRID_DURATION, GRID_WARMUP = "100s", "50s"
RED_BAND = {"limit": 120, "min_th": 5, "max_th": 15, "w_q": 0.002, "mean_pkt_size": 1000}


def _gred(max_p: float) -> dict[str, Any]:
    return {"kind": "red", "gentle": True, "max_p": max_p, **RED_BAND}


def _nlred(max_p: float) -> dict[str, Any]:
    return {"kind": "nlred", "max_p": max_p, **RED_BAND}


def _rem(byte_mode: bool = False) -> dict[str, Any]:
    # ns-2's defaults (the qdisc's own), the paper's 120-packet buffer.
    q: dict[str, Any] = {"kind": "rem", "limit": 120}
    if byte_mode:
        q["byte_mode"] = True
    return q


def scheme_qdisc(name: str, max_p: float = 0.1, byte_mode: bool = False) -> dict[str, Any]:
    """Section 5's queue of a scheme: ``gred``, ``nlred``, ``rem`` or ``droptail``."""
    if name == "gred":
        return _gred(max_p)
    if name == "nlred":
        return _nlred(max_p)
    if name == "rem":
        return _rem(byte_mode)
    if name == "droptail":
        return {"kind": "droptail", "limit": 120}
    raise ValueError(name)


def fig12_scenario(
    base: Mapping[str, Any],
    n: int,
    qdisc: Mapping[str, Any],
    *,
    size: int = 1000,
    short: bool = False,
    queue_interval: str | None = None,
) -> dict[str, Any]:
    """Fig. 12's network with ``n`` TCP flows of ``size``-byte packets and
    ``qdisc`` at the bottleneck (``short``: the grid's shorter runs)."""
    s = with_qdisc(base, qdisc)
    flow = s["flows"][0]
    flow["count"] = n
    flow["packet_size"] = size
    # A receiver window above the bandwidth-delay product at every size (200 KB).
    flow["max_window"] = math.ceil(200_000 / size)
    if short:
        s["duration"], s["warmup"] = GRID_DURATION, GRID_WARMUP
    if queue_interval is not None:
        s["monitor"] = {**s.get("monitor", {}), "queue_interval": queue_interval}
    return s


def bottleneck_numbers(result: Result) -> dict[str, float]:
    """Throughput, utilization and the queue (mean, spread) at the bottleneck."""
    link = result.links.set_index("name").loc[BOTTLENECK]
    q = result.queue
    q = q[(q["link"] == BOTTLENECK) & (q["t_s"] >= float(result.run["warmup_s"].iloc[0]))]
    return {
        "throughput_mbps": float(link["throughput_bps"]) / 1e6,
        "utilization": float(link["utilization"]),
        "avg_queue": float(link["mean_queue_packets"]),
        # Byte-mode REM's queue "normalized to packets" of the 1000-byte reference.
        "avg_queue_norm": float(q["bytes"].mean()) / 1000 if len(q) else float("nan"),
        "queue_sd": float(q["packets"].std()) if len(q) > 1 else float("nan"),
    }


# ---- section 3: the network of Fig. 1 ----------------------------------------------

FIG1 = "sfred-nlred-fig1"
G0G1 = "G0->G1"
#: Its ends, as :func:`~aqmlab.repro._helpers.with_qdisc` names a link.
G0G1_ENDS = ("G0", "G1")
FAIR_SCHEMES = ("red", "mrul", "lru_red")
NAMES = {"red": "RED", "mrul": "SFRED", "lru_red": "LRU-RED"}
#: Section 3's RED setting; SFRED and LRU-RED keep their own defaults beside it
#: (the same RED setting, alpha = beta = 0.1, D_w = 10).
RED3 = {"limit": 50, "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002, "mean_pkt_size": 1000}
#: Measurements of section 3 skip the first 50 s (start-up).
SKIP_S = 50.0


def _fig1(
    base: Mapping[str, Any],
    scheme: str,
    *,
    web: bool = False,
    cbr: bool = False,
) -> dict[str, Any]:
    s = with_qdisc(base, {"kind": scheme, **RED3}, link=G0G1_ENDS)
    for link in s["topology"]["links"]:
        if web and (link["from"], link["to"]) == ("G1", "R"):
            link["delay"] = "3ms"  # Figs. 4-6: tau_r = 3 ms
    if web:
        s["duration"] = "2000s"
        s["monitor"] = {**s["monitor"], "objects": True}
        # 30 web-like flows at 10 ms: 10-packet objects back to back (the object
        # size is lost; 10 = D_w, the packets SFRED protects a new flow for);
        # window 2 x BDP (46 ms round trip: 17 packets).
        s["flows"].append(
            {
                "name": "web",
                "kind": "web",
                "variant": "reno",
                "from": "W",
                "to": "R",
                "count": 30,
                "packet_size": 1000,
                "max_window": 17,
                "object_size": 10,
                "start_spread": "5s",
            }
        )
    if cbr:
        # UDP1: 1 KB every 10 ms from the 10 ms sender; UDP2: 500 B every 5 ms
        # from the 100 ms sender (0.8 Mbit/s each).
        s["flows"].append(
            {"name": "udp1", "kind": "cbr", "from": "S1", "to": "R", "packet_size": 1000, "rate": "800kbit"}
        )
        s["flows"].append(
            {"name": "udp2", "kind": "cbr", "from": "S2", "to": "R", "packet_size": 500, "rate": "800kbit"}
        )
    return s


def _per_flow(result: Result) -> tuple[pd.DataFrame, dict[int, str]]:
    """The flow series across G0 -> G1 (kbit/s per 10 s) and each flow's group."""
    fs = result.flow_series
    fs = fs[fs["link"] == G0G1].copy()
    fs["kbps"] = fs["throughput_bps"] / 1e3
    groups = dict(zip(result.flows["id"], result.flows["group"]))
    return fs, groups


def _jain(xs: list[float]) -> float:
    s, q = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * q) if q > 0 else float("nan")


def fair_measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    """Section 3's numbers of a run: each named flow's 10 s series and mean rate,
    Jain's index, and the web transfers' times when there are web flows."""
    fs, groups = _per_flow(result)
    out: dict[str, float] = {}
    named = [g for g in ("ftp1", "ftp2", "udp1", "udp2") if g in groups.values()]
    means = {}
    for g in named:
        fid = next(f for f, grp in groups.items() if grp == g)
        series = fs[fs["flow"] == fid].sort_values("t_s")
        for t, v in zip(series["t_s"], series["kbps"]):
            out[f"{g}_t{int(t)}"] = float(v)
        means[g] = float(series[series["t_s"] >= SKIP_S]["kbps"].mean())
        out[f"{g}_kbps"] = means[g]
    ftp = [means["ftp1"], means["ftp2"]]
    out["ftp_jain"] = _jain(ftp)
    out["ftp_gap_kbps"] = abs(ftp[0] - ftp[1])
    if "udp1" in means:
        out["tcp_kbps"] = sum(ftp)
        out["udp_kbps"] = means["udp1"] + means["udp2"]
        out["all_jain"] = _jain([means[g] for g in named])
    web_ids = [f for f, g in groups.items() if g == "web"]
    if web_ids:
        n = len(groups)
        fair = 1500.0 / n
        out["fair_kbps"] = fair
        ftp_series = fs[
            (fs["flow"].isin([k for k, g in groups.items() if g in ("ftp1", "ftp2")])) & (fs["t_s"] >= SKIP_S)
        ]
        out["ftp_dev_from_fair"] = float((ftp_series["kbps"] - fair).abs().mean() / fair)
        obj = result.objects
        obj = obj[obj["start_s"] >= SKIP_S]["transfer_s"].astype(float)
        out["web_objects"] = float(len(obj))
        out["web_mean_s"] = float(obj.mean())
        out["web_var_s2"] = float(obj.var(ddof=1))
        out["web_within_2s"] = float((obj <= 2.0).mean())
        for x in (0.25, 0.5, 1, 1.5, 2, 3, 4, 6, 8, 10):
            out[f"cdf_{x:g}"] = float((obj <= x).mean())
    return out


def series_plot(
    runs: pd.DataFrame, path: Path, groups: tuple[str, ...], title: str, fair: bool = False
) -> None:
    """The 10 s throughput series of ``groups`` under each scheme (seed 1)."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(FAIR_SCHEMES), figsize=(15, 4), sharey=True)
    for ax, scheme in zip(axes, FAIR_SCHEMES):
        row = select(runs, scheme=scheme, seed=1).iloc[0]
        for g in groups:
            cols = sorted(
                (c for c in runs.columns if c.startswith(f"{g}_t")), key=lambda c: int(c.split("_t")[1])
            )
            t = [int(c.split("_t")[1]) + 5 for c in cols]
            ax.plot(t, [row[c] for c in cols], marker=".", label=g)
        if fair:
            ax.axhline(row["fair_kbps"], ls="-.", color="k", label="fair rate")
        ax.set_title(f"{NAMES[scheme]} (seed 1)")
        ax.set_xlabel("time (s)")
    axes[0].set_ylabel("throughput at G0 -> G1, 10 s averages (kbit/s)")
    axes[0].legend()
    fig.suptitle(title)
    save(fig, path)


def fair_points(bases: Mapping[str, dict[str, Any]], **kind: bool) -> list[Point]:
    """One point per scheme of section 3 on Fig. 1's network."""
    return [Point({"scheme": s}, _fig1(bases[FIG1], s, **kind)) for s in FAIR_SCHEMES]
