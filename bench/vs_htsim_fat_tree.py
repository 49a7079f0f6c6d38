#!/usr/bin/env python3
"""aqmlab against htsim on Days's benchmark E5: a k-ary fat tree, ECMP, one
1 MiB Reno flow per host across the core (`bench/fat_tree.py` writes aqmlab's
scenario, `bench/htsim/htsim_fat_tree.cpp` builds the same tree in htsim).

The figure is time per delivered data packet (never per event: the two count
events differently), each simulator's event loop over the data packets its
receivers got in order. The two run alternately, htsim then aqmlab, `--pairs`
times. htsim is not installed by this script: point it at a checkout (the
commit measured is 841d9e7be46bb968eece766aa4b6c044c7799f67), as for
`bench/vs_htsim.py`; without one it says so and exits 0.

    HTSIM_SRC=~/csg-htsim python3 bench/vs_htsim_fat_tree.py --k 16 --pairs 3 --aqmlab target/release/aqmlab
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import fat_tree  # noqa: E402
import vs_htsim  # noqa: E402

MAIN = vs_htsim.HERE / "htsim_fat_tree.cpp"
HARNESS = vs_htsim.HARNESS


def build(sim: Path) -> Path:
    """libhtsim.a with htsim's own Makefile, then the fat-tree main at -O3."""
    vs_htsim.run(["nice", "-n", "10", "make", "-C", str(sim), "-j2", "libhtsim.a"], stdout=subprocess.DEVNULL)
    vs_htsim.BUILD.mkdir(parents=True, exist_ok=True)
    exe = vs_htsim.BUILD / "htsim_fat_tree"
    lib = sim / "libhtsim.a"
    newest_input = max(p.stat().st_mtime for p in (MAIN, HARNESS, lib))
    if not exe.exists() or exe.stat().st_mtime < newest_input:
        vs_htsim.run(["nice", "-n", "10", "g++", "-Wall", "-std=c++11", "-g", "-O3", f"-I{sim}", str(MAIN),
                      "-o", str(exe), f"-L{sim}", "-lhtsim"])  # fmt: skip
    return exe


def htsim_once(exe: Path, k: int, out: Path) -> dict:
    args = [str(exe), "-k", str(k), "-rate_gbps", "100", "-delay_us", "1", "-qpkts", "200", "-dur_s", "5",
            "-pkt", str(fat_tree.PACKET), "-flow_pkts", str(fat_tree.OBJECT), "-seed", "1"]  # fmt: skip
    r = vs_htsim.timed(args, out)
    s = json.loads(out.read_text().rsplit("SUMMARY ", 1)[1])
    return {**r, "loop_s": s["loop_wall_s"], "delivered": s["tcp_delivered_pkts"], "events": s["events"],
            "finished": s["finished"], "flows": s["flows"]}  # fmt: skip


def aqmlab_once(exe: Path, scenario: Path, out: Path) -> dict:
    r = vs_htsim.timed([str(exe), "run", str(scenario), "--json", "-q"], out)
    d = json.loads(out.read_text())
    delivered = sum(f["delivered"] for f in d["flows"])
    finished = sum(1 for f in d["flows"] if f["delivered"] >= fat_tree.OBJECT)
    return {**r, "loop_s": d["wall_seconds"], "delivered": delivered, "events": d["events"],
            "finished": finished, "flows": len(d["flows"])}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--k", type=int, default=16)
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--aqmlab", type=Path, required=True)
    p.add_argument("--htsim-src", type=Path, default=os.environ.get("HTSIM_SRC"))
    a = p.parse_args()
    sim = vs_htsim.htsim_sim_dir(a.htsim_src) if a.htsim_src else None
    if sim is None:
        print("no htsim checkout (--htsim-src or HTSIM_SRC): skipped")
        return
    exe = build(sim)
    with tempfile.TemporaryDirectory() as tmp:
        scenario = Path(tmp) / f"e5_k{a.k}.toml"
        scenario.write_text(fat_tree.scenario(a.k))
        rows = {"htsim": [], "aqmlab": []}
        for _ in range(a.pairs):
            rows["htsim"].append(htsim_once(exe, a.k, Path(tmp) / "htsim.out"))
            rows["aqmlab"].append(aqmlab_once(a.aqmlab, scenario, Path(tmp) / "aqmlab.json"))
    print(f"k = {a.k}: {a.k**3 // 4} hosts, {a.pairs} pairs, htsim then aqmlab in turn\n")
    print("| simulator | flows finished | data packets delivered | events | event loop s | us per packet |")
    print("|---|---:|---:|---:|---:|---:|")
    per = {}
    for name, runs in rows.items():
        loops = [r["loop_s"] for r in runs]
        per[name] = [r["loop_s"] / r["delivered"] * 1e6 for r in runs]
        r = runs[0]
        print(
            f"| {name} | {r['finished']} of {r['flows']} | {r['delivered']:,} | {r['events']:,} "
            f"| {min(loops):.2f}-{max(loops):.2f} | {statistics.median(per[name]):.2f} |"
        )
    ratios = [h / q for h, q in zip(per["htsim"], per["aqmlab"])]
    print(f"\nhtsim / aqmlab per delivered packet, pair by pair: {', '.join(f'{x:.2f}x' for x in ratios)}")


if __name__ == "__main__":
    main()
