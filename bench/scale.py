#!/usr/bin/env python3
"""How aqmlab's cost and memory grow with the number of flows (issue #5's scale targets).

Four measurements, each a fresh `aqmlab run` process whose CPU time and peak
resident memory come from the kernel (wait4's rusage), not from aqmlab itself:

- flows:   events per CPU second at 10, 100, 1,000, 10,000 and 100,000 TCP flows
           through one 1 Gbit/s dumbbell bottleneck (DropTail of 2,500 packets, about
           a bandwidth-delay product), 10 simulated seconds, so every row simulates
           about the same number of packets and only the flow count changes.
- big:     100,000 TCP flows over a 10 Gbit/s bottleneck for 10 simulated seconds.
- million: one million concurrent TCP flows (all started within the first second)
           over 10 Gbit/s for 2 simulated seconds: peak memory and bytes per flow.
- queue:   bytes per queued packet: a 20 Gbit/s CBR flow into a 10 Gbit/s link whose
           DropTail holds up to 1,000,000 packets, against the same run with 1,000.

Every run's flows are NewReno with 1000-byte packets; access links are 1 Gbit/s,
1 ms (10 ms for the bottleneck). The table goes to stdout and, with everything
measured, to bench/results/scale.json (written atomically).

    python3 bench/scale.py                       # everything (about 10 minutes)
    python3 bench/scale.py flows --flows 10,100,1000
    python3 bench/scale.py million --aqmlab target/release/aqmlab
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import vs_ns3  # the sibling harness: builds aqmlab, describes the machine

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results" / "scale.json"


def dumbbell(
    name: str, bottleneck: str, duration: str, warmup: str, limit: int, flows: str, access: str = "1Gbps"
) -> str:
    """A dumbbell scenario: 1 ms access links, a 10 ms bottleneck with DropTail(limit)."""
    return f"""name = "{name}"
duration = "{duration}"
warmup = "{warmup}"
seed = 1

[topology]
kind = "dumbbell"
access = {{ rate = "{access}", delay = "1ms" }}
bottleneck = {{ rate = "{bottleneck}", delay = "10ms" }}

[qdisc]
kind = "droptail"
limit = {limit}

{flows}"""


def tcp_flows(count: int) -> str:
    return f"""[[flows]]
name = "tcp"
kind = "tcp"
variant = "newreno"
count = {count}
max_window = 100000
"""


#: Reads a run's --json output and prints the few figures this script uses.
EXTRACT = """
import json, sys
d = json.load(open(sys.argv[1]))
link = next(link for link in d["links"] if link["name"] == "left->right")
keep = ("tx_packets", "max_queue_packets", "utilization")
print(json.dumps({"events": d["events"], "bottleneck": {k: link[k] for k in keep}}))
"""


def measured_run(aqmlab: Path, toml: str) -> dict:
    """Runs one scenario; returns aqmlab's JSON figures plus the kernel's CPU and RSS."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "scenario.toml"
        path.write_text(toml)
        out = Path(d) / "out.json"
        with out.open("w") as sink:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                [str(aqmlab), "run", str(path), "--json"], stdout=sink, stderr=subprocess.PIPE
            )
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"aqmlab failed on\n{toml}\n{stderr[-3000:]}")
        # Parsed in a child: a million flows' JSON takes over a GB in Python, and a
        # process this one starts later would inherit that as its peak RSS (Linux
        # counts the parent's pages mapped at exec time in the child's ru_maxrss).
        summary = json.loads(
            subprocess.run(
                [sys.executable, "-c", EXTRACT, str(out)], check=True, capture_output=True, text=True
            ).stdout
        )
    bottleneck = summary["bottleneck"]
    cpu = usage.ru_utime + usage.ru_stime
    return dict(
        events=summary["events"],
        wall=wall,
        cpu=cpu,
        events_per_cpu_s=summary["events"] / cpu if cpu else float("nan"),
        bottleneck_packets=bottleneck["tx_packets"],
        max_queue_packets=bottleneck["max_queue_packets"],
        utilization=bottleneck["utilization"],
        max_rss_bytes=usage.ru_maxrss * 1024,  # Linux reports KiB
    )


def flows_table(aqmlab: Path, counts: list[int]) -> list[dict]:
    rows = []
    for n in counts:
        r = measured_run(aqmlab, dumbbell(f"scale-{n}", "1Gbps", "10s", "2s", 2500, tcp_flows(n)))
        r["flows"] = n
        rows.append(r)
        print(
            f"{n:>8} flows: {r['events']:>11,} events, {r['cpu']:7.2f} CPU s, "
            f"{r['events_per_cpu_s'] / 1e6:5.2f} M events/CPU s, util {r['utilization']:.3f}, "
            f"peak RSS {r['max_rss_bytes'] / 2**20:8.1f} MiB",
            flush=True,
        )
    return rows


def big(aqmlab: Path) -> dict:
    r = measured_run(aqmlab, dumbbell("scale-100k-10g", "10Gbps", "10s", "2s", 25_000, tcp_flows(100_000)))
    print(
        f"100,000 flows over 10 Gbit/s, 10 s: {r['events']:,} events in {r['wall']:.1f} s wall, "
        f"{r['cpu']:.1f} CPU s ({r['events_per_cpu_s'] / 1e6:.2f} M/CPU s), "
        f"{r['bottleneck_packets']:,} packets across the bottleneck, util {r['utilization']:.3f}, "
        f"peak RSS {r['max_rss_bytes'] / 2**20:.0f} MiB",
        flush=True,
    )
    return r


def million(aqmlab: Path) -> dict:
    n = 1_000_000
    r = measured_run(aqmlab, dumbbell("scale-1m", "10Gbps", "2s", "1s", 25_000, tcp_flows(n)))
    small = measured_run(aqmlab, dumbbell("scale-1m-base", "10Gbps", "2s", "1s", 25_000, tcp_flows(10)))
    r["flows"] = n
    r["bytes_per_flow"] = (r["max_rss_bytes"] - small["max_rss_bytes"]) / n
    print(
        f"1,000,000 flows, 2 s: peak RSS {r['max_rss_bytes'] / 2**30:.2f} GiB "
        f"({r['bytes_per_flow']:,.0f} bytes per flow over a 10-flow run's "
        f"{small['max_rss_bytes'] / 2**20:.0f} MiB), {r['cpu']:.1f} CPU s",
        flush=True,
    )
    return r


def queue(aqmlab: Path) -> dict:
    def run(limit: int) -> dict:
        # A CBR flow at twice the bottleneck's rate fills the queue in 0.8 s.
        cbr = '[[flows]]\nname = "udp"\nkind = "cbr"\nrate = "20Gbps"\ncount = 1\nstart_spread = "0s"\n'
        toml = dumbbell(f"scale-queue-{limit}", "10Gbps", "1s", "100ms", limit, cbr, access="40Gbps")
        return measured_run(aqmlab, toml)

    full, base = run(1_000_000), run(1_000)
    grown = full["max_queue_packets"] - base["max_queue_packets"]
    r = dict(
        queued_packets=full["max_queue_packets"],
        max_rss_bytes=full["max_rss_bytes"],
        base_rss_bytes=base["max_rss_bytes"],
        bytes_per_queued_packet=(full["max_rss_bytes"] - base["max_rss_bytes"]) / grown,
    )
    print(
        f"queue of {full['max_queue_packets']:,} packets: {r['bytes_per_queued_packet']:.0f} bytes "
        f"per queued packet (peak RSS {full['max_rss_bytes'] / 2**20:.0f} MiB against "
        f"{base['max_rss_bytes'] / 2**20:.0f} MiB with a queue of {base['max_queue_packets']:,})",
        flush=True,
    )
    return r


def write_atomically(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "parts", nargs="*", default=["flows", "big", "million", "queue"], help="flows, big, million, queue"
    )
    p.add_argument("--flows", default="10,100,1000,10000,100000", help="flow counts of the flows table")
    p.add_argument("--aqmlab", type=Path, help="the aqmlab binary (default: build it)")
    a = p.parse_args()
    unknown = set(a.parts) - {"flows", "big", "million", "queue"}
    if unknown:
        p.error(f"unknown part(s): {', '.join(sorted(unknown))}")
    try:
        counts = [int(x) for x in a.flows.split(",")]
    except ValueError:
        p.error(f"--flows: {a.flows!r} is not a comma-separated list of whole numbers")
    aqmlab = a.aqmlab or vs_ns3.build_aqmlab()
    if not aqmlab.exists():
        p.error(f"--aqmlab: {aqmlab} does not exist")
    results: dict = dict(machine=vs_ns3.machine())
    if RESULTS.exists():  # keep the parts not re-measured
        results = {**json.loads(RESULTS.read_text()), "machine": results["machine"]}
    if "flows" in a.parts:
        results["flows"] = flows_table(aqmlab, counts)
    if "big" in a.parts:
        results["big"] = big(aqmlab)
    if "million" in a.parts:
        results["million"] = million(aqmlab)
    if "queue" in a.parts:
        results["queue"] = queue(aqmlab)
    write_atomically(RESULTS, results)
    print(f"written: {RESULTS.relative_to(BENCH.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
