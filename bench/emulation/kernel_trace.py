"""One row of the kernel grid, traced: the simulator's TCP beside the kernel's, flow by flow.

    sudo python3 bench/emulation/kernel_trace.py --variant bbr --qdisc pie --flows 1 --cbr yes

Runs the scenario of ``kernel_tcp.py``'s row with ``[monitor] tcp_trace`` twice:
``aqmlab emulate`` (the kernel's TCP, its ``TCP_INFO`` sampled) and ``aqmlab
run`` (``profile = "linux"``). Prints, per TCP group and for the link, the
means over the measured interval of what sets a flow's footprint: cwnd,
ssthresh, smoothed RTT and packets in flight (the trace), the medians of the
pacing rate and of BBR's bandwidth and minimum-RTT estimates (the kernel's
``TCP_CC_INFO``), the flows' retransmissions, timeouts and fast recoveries, and the
link's drop rate and mean queue, simulated beside emulated (the kernel's fast
recoveries are polled, and undercounted on a busy machine: the run's warnings
say so). A row of the grid that misses is explained when these say which side
sends more, and from what.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from kernel_tcp import QDISCS, VARIANTS, scenario


def run(binary: str, command: str, text: str, seed: int, out: Path) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
    try:
        args = [
            binary,
            command,
            f.name,
            "--json",
            "-q",
            "--seed",
            str(seed),
            "--out",
            str(out),
            "--format",
            "csv",
        ]
        done = subprocess.run(args, capture_output=True, text=True, check=True)
    finally:
        os.unlink(f.name)
    return json.loads(done.stdout)


# Read as medians: a flow with no RTT sample yet paces at its initial rate
# (Linux's, from a 1 ms RTT), hundreds of times the others', and would swamp a
# mean. BBR's estimates: bandwidth (packets a second) and minimum RTT.
MEDIANS = ("pacing_rate_pps", "bbr_bw_pps", "bbr_min_rtt_s")


def trace_means(out: Path, warmup_s: float, group_of: dict[int, str]) -> dict[str, dict[str, float]]:
    sums: dict[str, dict[str, float]] = {}
    counts: dict[tuple[str, str], int] = {}
    rates: dict[tuple[str, str], list[float]] = {}
    with open(out / "tcp_trace.csv") as f:
        for row in csv.DictReader(f):
            if float(row["t_s"]) < warmup_s:
                continue
            g = group_of.get(int(row["flow"]), "?")
            acc = sums.setdefault(g, {})
            for key in ("cwnd", "ssthresh", "srtt_s", "in_flight"):
                value = float(row.get(key) or "nan")
                if math.isfinite(value):
                    acc[key] = acc.get(key, 0.0) + value
                    counts[(g, key)] = counts.get((g, key), 0) + 1
            for key in MEDIANS:
                if row.get(key):
                    rates.setdefault((g, key), []).append(float(row[key]))
    means = {g: {k: v / counts[(g, k)] for k, v in acc.items()} for g, acc in sums.items()}
    for (g, key), values in rates.items():
        means.setdefault(g, {})[key] = statistics.median(values)
    return means


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default="target/release/aqmlab")
    p.add_argument("--variant", choices=list(VARIANTS), required=True)
    p.add_argument("--qdisc", choices=list(QDISCS), required=True)
    p.add_argument("--flows", type=int, default=8)
    p.add_argument("--cbr", choices=["no", "yes"], default="no")
    p.add_argument("--duration", default="20s")
    p.add_argument("--warmup", default="5s")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (aqmlab emulate makes network namespaces)")
    text = scenario(a.qdisc, a.variant, a.flows, a.cbr == "yes", a.duration, a.warmup)
    text = text.replace("[topology]", '[monitor]\ntcp_trace = "100ms"\n[topology]', 1)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for side, command in (("simulated", "run"), ("emulated", "emulate")):
            out = Path(tmp) / side
            r = run(a.bin, command, text, a.seed, out)
            group_of = {f["id"]: f["group"] for f in r["flows"]}
            link = r["links"][0]
            rows[side] = {
                "trace": trace_means(out, r["warmup_s"], group_of),
                "drop_rate": link["drops_total"] / max(1, link["arrivals"]),
                "mean_queue": link["mean_queue_packets"],
                "goodput": {g: v["goodput_bps"] / 1e6 for g, v in r["groups"].items()},
                "events": {
                    g: {
                        k: sum(f.get(k, 0) for f in r["flows"] if f["group"] == g)
                        for k in ("retransmits", "timeouts", "fast_recoveries")
                    }
                    for g in r["groups"]
                },
            }
    sim, emu = rows["simulated"], rows["emulated"]
    print(f"{a.variant}, {a.qdisc}, {a.flows} flows, CBR {a.cbr}; seed {a.seed}; simulated / emulated\n")
    print(f"link: drop rate {sim['drop_rate']:.4f} / {emu['drop_rate']:.4f}; ", end="")
    print(f"mean queue {sim['mean_queue']:.1f} / {emu['mean_queue']:.1f} packets")
    for g in sorted(set(sim["goodput"]) | set(emu["goodput"])):
        print(f"{g}: goodput {sim['goodput'].get(g, 0):.2f} / {emu['goodput'].get(g, 0):.2f} Mbit/s", end="")
        st, et = sim["trace"].get(g, {}), emu["trace"].get(g, {})
        for key in ("cwnd", "ssthresh", "in_flight", "srtt_s", *MEDIANS):
            if key in st and key in et:
                print(f"; {key} {st[key]:.3f} / {et[key]:.3f}", end="")
        se, ee = sim["events"].get(g, {}), emu["events"].get(g, {})
        for key in ("retransmits", "timeouts", "fast_recoveries"):
            if se.get(key) or ee.get(key):
                print(f"; {key} {se.get(key, 0)} / {ee.get(key, 0)}", end="")
        print()


if __name__ == "__main__":
    main()
