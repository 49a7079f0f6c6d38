#!/usr/bin/env python3
"""Sweeps of many short runs through the local pool and a two-worker Dask cluster:
wall time, the parent's peak memory against the number of runs, the cost per run.

Each (executor, N) is a fresh process running ``aqmlab.sweep`` of N seeds of one
point (default: the SFB paper's 400-flow scenario, 0.5 simulated seconds, a few
tens of milliseconds per run) into a run store, then ``Sweep.write`` of its four
tables, as ``aqmlab sweep`` does. It prints one JSON line per measurement:

- ``run_s``, ``write_s``: wall time of the runs and of writing the tables;
- ``peak_rss_mib_runs``, ``peak_rss_mib``: the measured process's peak resident
  memory after the runs and after writing (``ru_maxrss``; the pool's workers and
  the cluster are other processes, not counted);
- ``engine_ms``: the engine's own time per run (the runs' ``wall_seconds``);
- ``overhead_ms``: per run, what the executor adds: 2 x run_s / N - engine_ms
  (two workers in both cases).

The Dask cluster (scheduler and two single-threaded worker processes) is a
separate process, as on a real cluster, so the sweep's process holds only the
client.

    python3 bench/sweep_cluster.py                       # N = 250 500 1000 2000
    python3 bench/sweep_cluster.py --runs 100 200 --executors local
    python3 bench/sweep_cluster.py --scenario choke-fig3 --duration 10ms --warmup 0s \
        --runs 10000 --executors local dask dask-per-run      # short runs: batches

``dask`` sends runs in batches sized from their times (``aqmlab._runner.batch``);
``dask-per-run`` one task per run, as before batches. ``stored`` counts the run
store's whole entries and ``runs_sha`` hashes the runs table, to check that every
executor stored every run and gave the same results.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

MEASURE = r"""
import json, resource, sys, time
import aqmlab

scenario, n, duration, warmup, cache, out, address, per_task = sys.argv[1:9]
n = int(n)
kwargs = {"client": address} if address != "-" else {"jobs": 2}
if per_task == "one":  # a task per run, as before batches
    from aqmlab._runner.dask import DaskCluster
    DaskCluster.results = DaskCluster._one_run_per_task
t0 = time.monotonic()
sw = aqmlab.sweep(scenario, {}, seeds=n, duration=duration, warmup=warmup, cache_dir=cache, **kwargs)
t1 = time.monotonic()
rss_runs = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
sw.write(out)
t2 = time.monotonic()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
sample = [sw.runs_done[i][2].run.loc[0, "wall_seconds"] for i in range(0, n, max(1, n // 50))]
import hashlib, pathlib
from aqmlab._runner import Store
store = Store(cache)
stored = sum(1 for p in pathlib.Path(cache).glob("*.parquet") if store.has(p.stem))
runs_sha = hashlib.sha256(sw.runs.to_csv(index=False).encode()).hexdigest()[:16]
print(json.dumps({
    "runs": len(sw.runs_done), "simulated": sw.simulated, "failed": len(sw.failed),
    "stored": stored, "runs_sha": runs_sha,
    "run_s": round(t1 - t0, 2), "write_s": round(t2 - t1, 2),
    "peak_rss_mib_runs": round(rss_runs, 1), "peak_rss_mib": round(rss, 1),
    "engine_ms": round(1e3 * sum(sample) / len(sample), 2),
}))
"""

CLUSTER = r"""
import sys, time
import distributed
cluster = distributed.LocalCluster(
    n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", host="127.0.0.1"
)
print(cluster.scheduler_address, flush=True)
sys.stdin.read()  # until the benchmark closes our stdin
cluster.close()
"""


def measure(executor: str, n: int, scenario: str, duration: str, warmup: str, address: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            "-c",
            MEASURE,
            scenario,
            str(n),
            duration,
            warmup,
            f"{tmp}/cache",
            f"{tmp}/out",
            address,
            "one" if executor == "dask-per-run" else "batch",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        row = json.loads(proc.stdout.strip().splitlines()[-1])
    row["overhead_ms"] = round(2e3 * row["run_s"] / n - row["engine_ms"], 2)
    return {"executor": executor, "n": n, **row}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, nargs="+", default=[250, 500, 1000, 2000])
    ap.add_argument(
        "--executors", nargs="+", default=["local", "dask"], choices=["local", "dask", "dask-per-run"]
    )
    ap.add_argument("--scenario", default="sfb-fig2b")
    ap.add_argument("--duration", default="0.5s")
    ap.add_argument("--warmup", default="0.1s")
    args = ap.parse_args()
    cluster = None
    address = "-"
    if any(e.startswith("dask") for e in args.executors):
        cluster = subprocess.Popen(
            [sys.executable, "-c", CLUSTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        address = cluster.stdout.readline().strip()
        time.sleep(1.0)  # the workers register
    try:
        for n in args.runs:
            for executor in args.executors:
                where = address if executor.startswith("dask") else "-"
                row = measure(executor, n, args.scenario, args.duration, args.warmup, where)
                print(json.dumps(row), flush=True)
    finally:
        if cluster is not None:
            cluster.stdin.close()
            cluster.wait(timeout=60)


if __name__ == "__main__":
    main()
