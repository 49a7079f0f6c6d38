"""Runs `ns peer.tcl` on a spec and reads its output into the tables of an aqmlab
`Result` (run, flows, groups, links, link_flows, queue, flow_series, fairness),
with the same column names and units, so the code that measures an aqmlab run
measures an ns-2 run unchanged. What ns-2 does not count (drops by reason, RTT,
fast recoveries, a flow's share of the queue) is NaN, so nothing derived from it
passes for a number.
"""

from __future__ import annotations

import math
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from spec import Spec

HERE = Path(__file__).resolve().parent
PEER = HERE / "peer.tcl"
#: The drop and mark reasons of aqmlab's tables (`drops_<reason>` columns).
REASONS = (
    "overflow",
    "front_drop",
    "early",
    "forced",
    "choke_match",
    "rate_limit",
    "heavy_hitter",
    "unresponsive",
    "push_out",
    "sojourn",
)


def run_ns(sp: Spec, *, timeout: float = 3600) -> tuple[str, float]:
    """The output of `ns peer.tcl` on `sp` and its wall seconds."""
    with tempfile.NamedTemporaryFile("w", suffix=".tcl", delete=False) as f:
        f.write(sp.text)
        path = f.name
    try:
        t0 = time.perf_counter()
        p = subprocess.run(
            ["nice", "-n", "10", "ns", str(PEER), path], capture_output=True, text=True, timeout=timeout
        )
        wall = time.perf_counter() - t0
    finally:
        Path(path).unlink(missing_ok=True)
    if p.returncode != 0 or "RESULT run" not in p.stdout:
        raise RuntimeError(f"ns failed ({p.returncode}): {p.stderr[-2000:]}{p.stdout[-500:]}")
    return p.stdout, wall


def _kv(words: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for w in words:
        k, v = w.split("=", 1)
        try:
            out[k] = float(v)
        except ValueError:
            out[k] = v
    return out


class Ns2Result:
    """One ns-2 run in the shape of `aqmlab.Result` (the tables the reproductions
    and the harness read)."""

    def __init__(self, sp: Spec, stdout: str, seed: int, wall: float):
        import pandas as pd

        self.wall = wall
        T = sp.duration - sp.warmup
        links, lf, flows, queue, series = [], [], {}, [], []
        for line in stdout.splitlines():
            w = line.split()
            if not w:
                continue
            if w[0] == "RESULT" and w[1] == "link":
                links.append(_kv(w[2:]))
            elif w[0] == "RESULT" and w[1] == "linkflow":
                lf.append(_kv(w[2:]))
            elif w[0] == "RESULT" and w[1] == "flow":
                d = _kv(w[2:])
                flows[int(d["id"])] = d
            elif w[0] == "QUEUE":
                queue.append(
                    {"link": w[1], "t_s": float(w[2]), "packets": int(float(w[3])), "bytes": math.nan}
                )
            elif w[0] == "SERIES":
                nums = [float(x) for x in w[3:]]
                for i in range(0, len(nums), 5):
                    series.append((w[1], float(w[2]), int(nums[i]), *nums[i + 1 : i + 5]))
        size = {f.id: f.packet_size for f in sp.flows}
        self.run = pd.DataFrame(
            [
                {
                    "scenario": "ns-2.35",
                    "seed": seed,
                    "duration_s": sp.duration,
                    "warmup_s": sp.warmup,
                    "events": math.nan,
                    "wall_seconds": wall,
                    "sim_seconds": sp.duration,
                }
            ]
        )
        rows = []
        for f in sp.flows:
            d = flows.get(f.id, {})
            if f.kind == "tcp":
                delivered = d.get("ack_", 0.0)
                sent = d.get("ndatapack_", 0.0)
            else:
                delivered = d.get("npkts_", 0.0)
                sent = delivered + d.get("nlost_", 0.0)
            drops = sum(x["pdrops_"] for x in lf if int(x["flow"]) == f.id)
            marks = sum(x["pmarks_"] for x in lf if int(x["flow"]) == f.id)
            row = {
                "id": f.id,
                "group": f.group,
                "kind": f.kind,
                "goodput_bps": delivered * f.packet_size * 8 / T,
                "fair_share_bps": math.nan,
                "sent": sent,
                "delivered": delivered,
                "drops_total": drops,
                **{f"drops_{r}": math.nan for r in REASONS},
                "marks": marks,
                "rtt_mean_s": math.nan,
                "retransmits": d.get("nrexmitpack_", 0.0) if f.kind == "tcp" else 0.0,
                "timeouts": d.get("nrexmit_", 0.0) if f.kind == "tcp" else 0.0,
                "fast_recoveries": math.nan,
            }
            rows.append(row)
        self.flows = pd.DataFrame(rows)
        lrows = []
        for x in links:
            rate = float(x["rate_bps"])
            name = x["name"]
            # Bytes from per-flow counts (ns-2's aggregate byte counter is 32 bits).
            nbytes = sum(y["bdepartures_"] for y in lf if y["link"] == name)
            lrows.append(
                {
                    "name": name,
                    "from": name.split("->")[0],
                    "to": name.split("->")[1],
                    "rate_bps": rate,
                    "delay_s": math.nan,
                    "qdisc": "",
                    "utilization": nbytes * 8 / T / rate,
                    "throughput_bps": nbytes * 8 / T,
                    "tx_packets": x["pdepartures_"],
                    "arrivals": x["parrivals_"],
                    "drops_total": x["pdrops_"],
                    **{f"drops_{r}": math.nan for r in REASONS},
                    "marks_total": x["pmarks_"],
                    "mean_queue_packets": x["mean_queue"],
                    "max_queue_packets": math.nan,
                }
            )
        self.links = pd.DataFrame(lrows)
        self.link_flows = pd.DataFrame(
            [
                {
                    "link": y["link"],
                    "flow": int(y["flow"]),
                    "throughput_bps": y["bdepartures_"] * 8 / T,
                    "packets": y["pdepartures_"],
                    "mean_queue_packets": math.nan,
                }
                for y in lf
            ],
            columns=["link", "flow", "throughput_bps", "packets", "mean_queue_packets"],
        )
        self.queue = pd.DataFrame(queue, columns=["link", "t_s", "packets", "bytes"])
        self.flow_series = _series(series, size)
        g = self.flows.groupby("group", sort=True)
        self.groups = pd.DataFrame(
            {
                "kind": g["kind"].first(),
                "count": g.size(),
                "goodput_bps": g["goodput_bps"].sum(),
                "goodput_mean_bps": g["goodput_bps"].mean(),
                "drops_total": g["drops_total"].sum(),
                "marks": g["marks"].sum(),
                "jain": g["goodput_bps"].apply(jain),
                "cov": g["goodput_bps"].apply(cov),
            }
        )
        self.groups.index.name = "group"

    @property
    def fairness(self) -> dict[str, Any]:
        tcp = self.flows[self.flows["kind"] == "tcp"]["goodput_bps"]
        every = self.flows["goodput_bps"]
        out: dict[str, Any] = {
            "tcp": {"n": len(tcp), "jain": jain(tcp), "cov": cov(tcp)},
            "all": {"n": len(every), "jain": jain(every), "cov": cov(every)},
            "groups": {},
        }
        for name, row in self.groups.iterrows():
            out["groups"][name] = {"n": int(row["count"]), "jain": row["jain"], "cov": row["cov"]}
        return out


def _series(rows: list[tuple], size: dict[int, int]):
    """Per-interval rows from the cumulative per-flow counters at each tick."""
    import pandas as pd

    cols = ["link", "t_s", "dt_s", "flow", "packets", "bytes", "throughput_bps", "drops", "marks"]
    if not rows:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(rows, columns=["link", "t", "flow", "pkts", "bytes", "drops", "marks"])
    out = []
    for (link, flow), g in df.groupby(["link", "flow"], sort=True):
        g = g.sort_values("t")
        prev = None
        for r in g.itertuples():
            if prev is not None:
                dt = r.t - prev.t
                nbytes = r.bytes - prev.bytes
                out.append(
                    (
                        link,
                        prev.t,
                        dt,
                        flow,
                        r.pkts - prev.pkts,
                        nbytes,
                        nbytes * 8 / dt,
                        r.drops - prev.drops,
                        r.marks - prev.marks,
                    )
                )
            prev = r
    return pd.DataFrame(out, columns=cols)


def jain(xs) -> float:
    xs = [float(x) for x in xs]
    s2 = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * s2) if s2 > 0 else math.nan


def cov(xs) -> float:
    xs = [float(x) for x in xs]
    if len(xs) < 2:
        return math.nan
    m = sum(xs) / len(xs)
    var = sum((x - m) ** 2 for x in xs) / len(xs)
    return math.sqrt(var) / m if m > 0 else math.nan


def run(sp: Spec, seed: int) -> Ns2Result:
    out, wall = run_ns(sp)
    return Ns2Result(sp, out, seed, wall)
