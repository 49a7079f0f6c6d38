"""BBR against CUBIC under every fair AQM: does the scheme protect CUBIC?

    python3 bench/bbr_vs_cubic.py --bin target/release/aqmlab --seeds 3
    python3 bench/bbr_vs_cubic.py --bin target/release/aqmlab --seeds 3 --variant bbr3

Runs the built-in scenario ``bbr-vs-cubic`` (4 BBR and 4 CUBIC flows, both
``profile = "linux"``, 20 Mbit/s, 40 ms) under each qdisc at a deep (2 BDP, 133
packets) and a shallow (0.2 BDP, 13 packets) buffer, and prints BBR's share of
the TCP goodput and Jain's index over the eight flows, means over seeds. The
RED-family qdiscs (CHOKe, BREATHe, AFD) keep thresholds that a 13-packet buffer
cannot hold, and say so; their shallow cells are marked. ``--variant bbr3``
runs BBRv3 in the BBR group instead of BBR v1.
"""

from __future__ import annotations

import argparse
import json
import subprocess

QDISCS = ["droptail", "choke", "sfb", "breathe", "afd", "sfred", "fq_codel", "cake", "pie", "dualpi2"]
LIMITS = {"deep": 133, "shallow": 13}


def run(binary: str, variant: str, qdisc: str, limit: int, seed: int) -> tuple[float, float] | None:
    args = [binary, "run", "bbr-vs-cubic", "--json", "-q", "--seed", str(seed)]
    args += ["--set", f"qdisc.kind={qdisc}", "--set", f"qdisc.limit={limit}"]
    args += ["--set", f"flows.bbr.variant={variant}"]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        return None
    r = json.loads(out.stdout)
    g = {k: v["goodput_bps"] for k, v in r["groups"].items()}
    return g["bbr"] / (g["bbr"] + g["cubic"]), r["fairness"]["tcp"]["jain"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default="target/release/aqmlab")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--variant", default="bbr", choices=["bbr", "bbr3"], help="the BBR group's variant")
    a = p.parse_args()
    print("| qdisc | BBR share, 133 packets | Jain | BBR share, 13 packets | Jain |")
    print("|---|---|---|---|---|")
    for q in QDISCS:
        cells = []
        for limit in LIMITS.values():
            runs = [run(a.bin, a.variant, q, limit, seed) for seed in range(1, a.seeds + 1)]
            if any(r is None for r in runs):
                cells += ["refused (thresholds above the limit)", ""]
                continue
            share = sum(r[0] for r in runs) / len(runs)
            jain = sum(r[1] for r in runs) / len(runs)
            cells += [f"{share:.2f}", f"{jain:.3f}"]
        print(f"| {q} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
