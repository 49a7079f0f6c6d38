"""The simulator's TCP held against the kernel's, through the same qdisc (needs root).

    sudo python3 bench/emulation/kernel_tcp.py --bin target/release/aqmlab > grid.md
    sudo python3 bench/emulation/kernel_tcp.py --variants cubic --flows 8 --cbr yes
    python3 bench/emulation/kernel_tcp.py --against \
        bench/results/kernel-tcp-{8flows-cbr,8flows-nocbr,1-32flows-cbr,bbr-8flows}.md

Each cell is one scenario run twice by ``aqmlab emulate --compare --json``: the
kernel's TCP through aqmlab's qdisc (emulated) and aqmlab's TCP with
``profile = "linux"`` through the same qdisc (simulated), means over ``--seeds``.
The grid: TCP ``reno`` (SACK), ``cubic``, ``bbr``, and BBR against CUBIC, under
DropTail at 0.2, 1 and 4 bandwidth-delay products, RED, CHOKe, SFB, FQ-CoDel, PIE
and DualPI2, with 1, 8 and 32 TCP flows, with and without a CBR flow at 40% of
the bottleneck. Prints a Markdown table with the kernel's version, each metric as
simulated / emulated, the emulator's p99 lateness, and PASS or MISS against the
tolerances below; a row whose emulation did not keep time (p99 lateness above a
packet time) is LATE and left out of the count, since it measures the machine.

The tolerances were fixed before any run and are never changed to fit a result:
shares (the UDP flow's, BBR's of the TCP goodput) within 15% relative, as the
kernel's own ``multipath_eval`` compares shares, or 0.03 absolute, whichever is
larger; utilization within 2 points; Jain's index among TCP flows within 0.03;
drop rate and mean queue within 15% relative (or 0.002 and one packet absolute,
for rates and queues near zero).

``--spread`` (with ``--seeds`` above 1) adds, per row, the range of the
kernel's Jain index and drop rate over its seeds: how far one seed can fall
from another, against the tolerance.

``--against FILE...`` takes the kernel's column from tables this script printed
before and runs only the simulated side (no root, no emulation): the kernel's
TCP does not change when the simulator does, so a change to the simulator's
TCP is held against the same real runs, row for row.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile

RATE_MBPS = 20
RTT_MS = 40
PACKET = 1500
BDP = RATE_MBPS * 1e6 * RTT_MS / 1e3 / 8 / PACKET  # 66.7 packets

QDISCS = {
    "droptail-0.2bdp": f'{{ kind = "droptail", limit = {round(0.2 * BDP)} }}',
    "droptail-1bdp": f'{{ kind = "droptail", limit = {round(BDP)} }}',
    "droptail-4bdp": f'{{ kind = "droptail", limit = {round(4 * BDP)} }}',
    "red": '{ kind = "red", limit = 200, min_th = 15, max_th = 45, mean_pkt_size = 1500 }',
    "choke": '{ kind = "choke", limit = 200, min_th = 15, max_th = 45, mean_pkt_size = 1500 }',
    "sfb": '{ kind = "sfb", limit = 200 }',
    "fq_codel": '{ kind = "fq_codel" }',
    "pie": '{ kind = "pie", limit = 200 }',
    "dualpi2": '{ kind = "dualpi2", limit = 200 }',
}

# variant set -> its TCP groups: (name, variant)
VARIANTS = {
    "reno": [("tcp", "sack")],
    "cubic": [("tcp", "cubic")],
    "bbr": [("tcp", "bbr")],
    "bbr-vs-cubic": [("bbr", "bbr"), ("cubic", "cubic")],
}

TOLERANCE = {
    "udp_share": ("share", 0.15, 0.03),
    "bbr_share": ("share", 0.15, 0.03),
    "utilization": ("abs", 0.02, 0.02),
    "jain": ("abs", 0.03, 0.03),
    "drop_rate": ("rel", 0.15, 0.002),
    "mean_queue": ("rel", 0.15, 1.0),
}


def scenario(
    qdisc: str, variant: str, flows: int, cbr: bool, duration: str, warmup: str, jitter: str = "0s"
) -> str:
    access_delay = '"5ms"' if jitter == "0s" else f'{{ mean = "5ms", jitter = "{jitter}" }}'
    lines = [
        f'name = "kernel-{variant}-{qdisc}-{flows}{"-cbr" if cbr else ""}"',
        f'duration = "{duration}"',
        f'warmup = "{warmup}"',
        f"qdisc = {QDISCS[qdisc]}",
        "[topology]",
        'kind = "dumbbell"',
        f'access = {{ rate = "100Mbps", delay = {access_delay} }}',
        f'bottleneck = {{ rate = "{RATE_MBPS}Mbps", delay = "{RTT_MS / 2 - 10:g}ms" }}',
    ]
    groups = VARIANTS[variant]
    # BBR against CUBIC: half each (one each for a single flow).
    counts = [flows] if len(groups) == 1 else [max(1, flows // 2), max(1, flows - flows // 2)]
    for (name, v), count in zip(groups, counts):
        lines += [
            "[[flows]]",
            f'name = "{name}"',
            'kind = "tcp"',
            f'variant = "{v}"',
            'profile = "linux"',
            f"count = {count}",
            f"packet_size = {PACKET}",
            "max_window = 2000",
        ]
    if cbr:
        lines += [
            "[[flows]]",
            'name = "udp"',
            'kind = "cbr"',
            f'rate = "{0.4 * RATE_MBPS:g}Mbps"',
            f"packet_size = {PACKET}",
        ]
    return "\n".join(lines) + "\n"


def metrics(r: dict) -> dict:
    groups = r["groups"]
    link = r["links"][0]
    goodput = {g: v.get("goodput_bps", 0.0) for g, v in groups.items()}
    total = sum(goodput.values())
    tcp = sum(v for g, v in goodput.items() if g != "udp")
    out = {
        "utilization": link["utilization"],
        "jain": r["fairness"]["tcp"]["jain"],
        "drop_rate": link["drops_total"] / max(1, link["arrivals"]),
        "mean_queue": link["mean_queue_packets"],
    }
    if "udp" in goodput and total:
        out["udp_share"] = goodput["udp"] / total
    if "bbr" in goodput and tcp:
        out["bbr_share"] = goodput["bbr"] / tcp
    return out


def within(key: str, sim: float, emu: float) -> bool:
    kind, rel, floor = TOLERANCE[key]
    diff = abs(sim - emu)
    if kind == "abs":
        return diff <= rel
    return diff <= max(rel * abs(emu), floor)


def simulate(binary: str, text: str, seed: int) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
    try:
        out = subprocess.run(
            [binary, "run", f.name, "--json", "--seed", str(seed)],
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        os.unlink(f.name)
    return metrics(json.loads(out.stdout))


def recorded_rows(paths: list[str]) -> tuple[str, list[tuple[tuple[str, str, int, str], dict]]]:
    """The kernel's side of earlier tables: (variant, qdisc, flows, cbr) and the
    emulated value of each metric, with the header line naming the kernel."""
    header, rows = "", []
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.startswith("Kernel "):
                    header = header or line.strip()
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if len(cells) != 6 or cells[0] in ("TCP", "---") or cells[1] not in QDISCS:
                    continue
                emu = {}
                for cell in cells[4].split(";"):
                    words = cell.split()
                    if len(words) == 4 and words[0] in TOLERANCE and words[2] == "/":
                        emu[words[0]] = float(words[3])
                rows.append(((cells[0], cells[1], int(cells[2]), cells[3]), emu))
    return header, rows


def against(a: argparse.Namespace) -> None:
    header, rows = recorded_rows(a.against)
    jittered = f", access-link jitter {a.sim_jitter}" if a.sim_jitter != "0s" else ""
    print(f"{header} The kernel's column as recorded; simulated again with seeds 1-{a.seeds}{jittered}.\n")
    print("| TCP | qdisc | flows | CBR | metric (sim / emu) | verdict |")
    print("|---|---|---|---|---|---|")
    passed = 0
    rows = [r for r in rows if r[0][0] in a.variants and r[0][1] in a.qdiscs]
    for (variant, qdisc, flows, cbr), emu in rows:
        text = scenario(qdisc, variant, flows, cbr == "yes", a.duration, a.warmup, a.sim_jitter)
        sim = mean([simulate(a.bin, text, seed) for seed in range(1, a.seeds + 1)])
        cells, misses = [], []
        for k in TOLERANCE:
            if k in sim and k in emu:
                cells.append(f"{k} {sim[k]:.3f} / {emu[k]:.3f}")
                if not within(k, sim[k], emu[k]):
                    misses.append(k)
        passed += not misses
        verdict = "PASS" if not misses else "MISS: " + ", ".join(misses)
        print(f"| {variant} | {qdisc} | {flows} | {cbr} | {'; '.join(cells)} | {verdict} |", flush=True)
    print(f"\n{passed} of {len(rows)} rows within every tolerance.")


def run(binary: str, text: str, seed: int) -> tuple[dict, dict, dict]:
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
    try:
        out = subprocess.run(
            [binary, "emulate", f.name, "--compare", "--json", "--seed", str(seed)],
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        os.unlink(f.name)
    both = json.loads(out.stdout)
    return metrics(both["simulated"]), metrics(both["emulated"]), both["emulated"]["emulation"]


def mean(rows: list[dict]) -> dict:
    keys = set.intersection(*(set(r) for r in rows))
    return {k: sum(r[k] for r in rows) / len(rows) for k in keys}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default="target/release/aqmlab")
    p.add_argument("--duration", default="20s")
    p.add_argument("--warmup", default="5s")
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    p.add_argument("--qdiscs", nargs="+", default=list(QDISCS), choices=list(QDISCS))
    p.add_argument("--flows", type=int, nargs="+", default=[1, 8, 32])
    p.add_argument("--cbr", nargs="+", default=["no", "yes"], choices=["no", "yes"])
    p.add_argument("--against", nargs="+", metavar="FILE", help="re-simulate the rows of earlier tables")
    p.add_argument("--spread", action="store_true", help="also print the kernel's range over --seeds")
    p.add_argument(
        "--sim-jitter",
        default="0s",
        metavar="DUR",
        help="with --against: jitter the simulated access links' delay by DUR (uniform), to stand in "
        "for the real path's timing noise; the recorded grid is simulated without it",
    )
    a = p.parse_args()
    if a.sim_jitter != "0s" and not a.against:
        p.error("--sim-jitter: only with --against (an emulation would jitter the real packets too)")
    if a.against:
        against(a)
        return
    if os.geteuid() != 0:
        sys.exit("needs root (aqmlab emulate makes network namespaces)")
    print(f"Kernel {platform.release()}; {a.duration} with {a.warmup} warm-up; seeds 1-{a.seeds}.\n")
    print("| TCP | qdisc | flows | CBR | metric (sim / emu) | verdict |")
    print("|---|---|---|---|---|---|")
    passed = total = untimed = 0
    for variant, qdisc, flows, cbr in itertools.product(a.variants, a.qdiscs, a.flows, a.cbr):
        text = scenario(qdisc, variant, flows, cbr == "yes", a.duration, a.warmup)
        try:
            pairs = [run(a.bin, text, seed) for seed in range(1, a.seeds + 1)]
        except subprocess.CalledProcessError as e:
            print(
                f"| {variant} | {qdisc} | {flows} | {cbr} | error: {e.stderr.strip()[:80]} | ERROR |",
                flush=True,
            )
            continue
        sim, emu = mean([s for s, _, _ in pairs]), mean([e for _, e, _ in pairs])
        # A run that did not keep time is not a measurement: said in its row,
        # and left out of the count.
        late = [t for _, _, t in pairs if not t["kept_time"]]
        cells, misses = [], []
        for k in TOLERANCE:
            if k not in sim or k not in emu:
                continue
            cells.append(f"{k} {sim[k]:.3f} / {emu[k]:.3f}")
            if not within(k, sim[k], emu[k]):
                misses.append(k)
        if a.spread and len(pairs) > 1:
            for k in ("jain", "drop_rate"):
                seen = [e[k] for _, e, _ in pairs]
                cells.append(f"{k} over the kernel's seeds {min(seen):.3f}-{max(seen):.3f}")
        p99 = max(t["lateness_p99_s"] for _, _, t in pairs)
        cells.append(f"p99 lateness {p99 * 1e6:.0f} us")
        verdict = "PASS" if not misses else "MISS: " + ", ".join(misses)
        if late:
            untimed += 1
            verdict = f"LATE ({len(late)} of {len(pairs)} runs did not keep time; {verdict})"
        else:
            total += 1
            passed += not misses
        print(f"| {variant} | {qdisc} | {flows} | {cbr} | {'; '.join(cells)} | {verdict} |", flush=True)
    print(f"\n{passed} of {total} rows within every tolerance.")
    if untimed:
        print(f"{untimed} rows did not keep time and are not counted (LATE): run them again.")


if __name__ == "__main__":
    main()
