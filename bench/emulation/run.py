"""Emulation figures for BENCHMARKS.md and docs/emulation.md (needs root).

    sudo python3 bench/emulation/run.py rate --bin target/release/aqmlab
    sudo python3 bench/emulation/run.py validate --bin target/release/aqmlab

``rate``: 4 CUBIC flows through a DropTail (or ``--qdisc fq_codel``) bottleneck at rising rates: utilization,
lateness p50/p99/max against one packet time, TUN drops, and the data plane's CPU
time per packet (the process's CPU time, from ``/usr/bin/time``-like rusage, over
the packets the bottleneck carried in both directions). ``--bin A B`` compares
binaries run by run in turn; ``--runs N`` makes each cell the median of N runs,
with the load average (1 min) before them.

``validate``: every qdisc family on two dumbbells, simulated and emulated
(``aqmlab emulate --compare --json``): a CHOKe-style one (8 TCP flows and a CBR
flow at twice the bottleneck) and a many-flow TCP one (32 flows, SACK).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

RATE = """
name = "rate-{mbps}"
duration = "{duration}"
warmup = "{warmup}"
qdisc = {qdisc}
[topology]
kind = "dumbbell"
access = {{ rate = "10Gbps", delay = "0ms" }}
bottleneck = {{ rate = "{mbps}Mbps", delay = "5ms" }}
[[flows]]
name = "bulk"
kind = "tcp"
count = 4
variant = "cubic"
packet_size = 1500
max_window = 100000
start_spread = "0s"
[monitor]
queue_interval = "0s"
"""

CHOKE_STYLE = """
name = "choke-style-{kind}"
duration = "{duration}"
warmup = "{warmup}"
qdisc = {qdisc}
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "10Mbps", delay = "5ms" }}
[[flows]]
name = "tcp"
kind = "tcp"
variant = "sack"
count = 8
max_window = 200
[[flows]]
name = "udp"
kind = "cbr"
rate = "20Mbps"
"""

MANY_TCP = """
name = "many-tcp-{kind}"
duration = "{duration}"
warmup = "{warmup}"
qdisc = {qdisc}
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "2ms" }}
bottleneck = {{ rate = "20Mbps", delay = "10ms" }}
[[flows]]
name = "tcp"
kind = "tcp"
variant = "sack"
count = 32
max_window = 300
"""

FAMILIES = {
    "droptail": '{ kind = "droptail", limit = 200 }',
    "red": '{ kind = "red", limit = 200, min_th = 20, max_th = 60 }',
    "choke": '{ kind = "choke", limit = 200, min_th = 20, max_th = 60 }',
    "sfb": '{ kind = "sfb" }',
    "breathe": '{ kind = "breathe" }',
    "codel": '{ kind = "codel" }',
    "fq_codel": '{ kind = "fq_codel" }',
    "pie": '{ kind = "pie" }',
    "drr": '{ kind = "drr" }',
    "afd": '{ kind = "afd" }',
}


def emulate(binary: str, text: str, compare: bool) -> tuple[dict, float]:
    env = dict(os.environ, AQMLAB_EMULATE_ANY_RATE="1")
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    args = [binary, "emulate", f.name, "--json"] + (["--compare"] if compare else [])
    out = subprocess.run(args, capture_output=True, text=True, check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    os.unlink(f.name)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(out.stdout), cpu


def rate_once(binary: str, mbps: int, a: argparse.Namespace) -> dict:
    """One run at `mbps`: utilization, lateness, CPU per packet, the load average before it."""
    # A buffer of about one bandwidth-delay product (10 ms round trip).
    limit = max(50, int(mbps * 1e6 * 0.010 / 8 / 1500))
    qdisc = {"droptail": f'{{ kind = "droptail", limit = {limit} }}', "fq_codel": '{ kind = "fq_codel" }'}
    text = RATE.format(mbps=mbps, duration=a.duration, warmup=a.warmup, qdisc=qdisc[a.qdisc])
    load = os.getloadavg()[0]
    r, cpu = emulate(binary, text, False)
    e = r["emulation"]
    packets = sum(link["tx_packets"] for link in r["links"])
    # CPU over the whole run (warm-up included), per packet of the measured part
    # scaled to the whole: packets * duration / measured.
    measured = r["duration_s"] - r["warmup_s"]
    return {
        "util": r["links"][0]["utilization"],
        "p50": e["lateness_p50_s"] * 1e6,
        "p99": e["lateness_p99_s"] * 1e6,
        "max": e["lateness_max_s"] * 1e6,
        "packet_time": e["packet_time_s"] * 1e6,
        "tun_drops": e["tun_drops"],
        "cpu": cpu / max(1, packets * r["duration_s"] / measured) * 1e6,
        "load": load,
    }


def rate(a: argparse.Namespace) -> None:
    """Each rate `--runs` times per binary, the binaries taking turns run by run so
    that all see the same load; each cell the median of its runs."""
    bins = a.bin
    many = len(bins) > 1 or a.runs > 1
    binary = len(bins) > 1
    cols = " utilization | lateness p50 | p99 | max | packet time | TUN drops | CPU/packet |"
    print("| bottleneck |" + (" binary |" if binary else "") + cols + (" load |" if many else ""))
    rule = "---:|---:|---:|---:|---:|---:|---:|"
    print("|---:|" + ("---|" if binary else "") + rule + ("---:|" if many else ""))
    for mbps in a.rates:
        runs: dict[str, list[dict]] = {b: [] for b in bins}
        for _ in range(a.runs):
            for b in bins:
                runs[b].append(rate_once(b, mbps, a))
        for b in bins:
            med = {k: statistics.median(r[k] for r in runs[b]) for k in runs[b][0]}
            loads = [r["load"] for r in runs[b]]
            drops = max(r["tun_drops"] for r in runs[b])
            print(
                f"| {mbps} Mbit/s |"
                + (f" {b} |" if binary else "")
                + f" {med['util']:.3f} | {med['p50']:.0f} us | {med['p99']:.0f} us | {med['max']:.0f} us"
                f" | {med['packet_time']:.1f} us | {drops} | {med['cpu']:.1f} us |"
                + (f" {min(loads):.1f}-{max(loads):.1f} |" if many else ""),
                flush=True,
            )


def row(r: dict) -> dict:
    groups = r["groups"]
    tcp = groups.get("tcp", {}).get("goodput_bps", 0.0)
    udp = groups.get("udp", {}).get("goodput_bps", 0.0)
    link = r["links"][0]
    rtts = [f["rtt_mean_s"] for f in r["flows"] if f.get("rtt_mean_s")]
    return {
        "tcp": tcp / 1e6,
        "udp_share": udp / (tcp + udp) if tcp + udp else 0.0,
        "jain": r["fairness"]["tcp"]["jain"],
        "queue": link["mean_queue_packets"],
        "drop": link["drops_total"] / max(1, link["arrivals"]),
        "rtt": 1e3 * sum(rtts) / len(rtts) if rtts else float("nan"),
        "util": link["utilization"],
    }


def validate(a: argparse.Namespace) -> None:
    for title, template in (("CHOKe-style dumbbell", CHOKE_STYLE), ("many-flow TCP dumbbell", MANY_TCP)):
        print(f"\n{title} (simulated / emulated)\n")
        print("| qdisc | TCP goodput Mb/s | UDP share | Jain (TCP) | mean queue | drop rate | RTT ms |")
        print("|---|---|---|---|---|---|---|")
        for kind, qdisc in FAMILIES.items():
            text = template.format(kind=kind, qdisc=qdisc, duration=a.duration, warmup=a.warmup)
            both, _ = emulate(a.bin, text, True)
            s, e = row(both["simulated"]), row(both["emulated"])
            cells = [
                f"{s[k]:.{p}f} / {e[k]:.{p}f}"
                for k, p in (("tcp", 2), ("udp_share", 3), ("jain", 3), ("queue", 1), ("drop", 4), ("rtt", 1))
            ]
            print(f"| {kind} | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    r = sub.add_parser("rate")
    r.add_argument("--rates", type=int, nargs="+", default=[10, 50, 100, 200, 300, 500, 800, 1000])
    r.add_argument("--qdisc", choices=["droptail", "fq_codel"], default="droptail")
    r.add_argument("--bin", nargs="+", default=["target/release/aqmlab"], help="one binary, or several")
    r.add_argument("--runs", type=int, default=1, help="runs per rate and binary; cells are their medians")
    v = sub.add_parser("validate")
    v.add_argument("--bin", default="target/release/aqmlab")
    for q in (r, v):
        q.add_argument("--duration", default="10s")
        q.add_argument("--warmup", default="3s")
    a = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root")
    {"rate": rate, "validate": validate}[a.what](a)


if __name__ == "__main__":
    main()
