#!/usr/bin/env python3
"""How much faster `aqmlab sweep` is on every core than on one.

Runs the same sweep of independent runs (default: the SFB paper's 400-flow
scenario, 20 seeds, 60 simulated seconds each, 1 s of it warm-up) with --jobs 1 and --jobs N
alternately (1 N 1 N ...), without the cache, and prints each pair's wall times and
speed-up, then the median. Pairs are measured side by side because the machine is
shared: a neighbour's load hits both halves of a pair alike.

    python3 bench/sweep_speedup.py                      # 3 pairs, N = every core
    python3 bench/sweep_speedup.py --pairs 5 --runs 20 --scenario sfb-fig2b --duration 60s
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def sweep_seconds(scenario: str, runs: int, duration: str, jobs: int) -> float:
    with tempfile.TemporaryDirectory() as out:
        cmd = [
            sys.executable,
            "-m",
            "aqmlab",
            "sweep",
            scenario,
            "--seeds",
            str(runs),
            "--duration",
            duration,
            "--set",
            "warmup=1s",
            "--jobs",
            str(jobs),
            "--no-cache",
            "-q",
            "--out",
            out,
        ]
        started = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return elapsed


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", default=str(ROOT / "scenarios" / "sfb-fig2b.toml"))
    p.add_argument("--runs", type=int, default=20, help="independent runs (seeds) per sweep")
    p.add_argument("--duration", default="60s", help="simulated time per run")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="workers of the parallel half")
    p.add_argument("--pairs", type=int, default=3)
    a = p.parse_args()
    print(
        f"sweep of {a.runs} runs of {Path(a.scenario).name} for {a.duration} each; "
        f"--jobs 1 vs --jobs {a.jobs} on {os.cpu_count()} cores"
    )
    ratios = []
    for i in range(a.pairs):
        one = sweep_seconds(a.scenario, a.runs, a.duration, 1)
        many = sweep_seconds(a.scenario, a.runs, a.duration, a.jobs)
        ratios.append(one / many)
        print(f"pair {i + 1}: jobs=1 {one:7.2f} s   jobs={a.jobs} {many:7.2f} s   speed-up {one / many:.2f}x")
    print(f"median speed-up {statistics.median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
