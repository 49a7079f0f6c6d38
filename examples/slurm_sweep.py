#!/usr/bin/env python3
"""A sweep on a SLURM cluster: dask-jobqueue submits the Dask workers as batch
jobs, aqmlab sends them the runs. Run it on the login node (or in a small job of
its own); see docs/cluster.md. Not run by the tests.

    pip install -c constraints.txt target/wheels/aqmlab-*.whl'[dask]' dask-jobqueue   # docs/cluster.md
    python examples/slurm_sweep.py --out campaign --jobs 10

Stop it at any moment and start it again: the runs already in campaign/cache are
not run again.
"""

from __future__ import annotations

import argparse

from dask.distributed import Client
from dask_jobqueue import SLURMCluster

import aqmlab


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="campaign")
    ap.add_argument("--jobs", type=int, default=10, help="SLURM jobs (nodes) of workers")
    ap.add_argument("--queue", default=None, help="the partition (#SBATCH -p)")
    ap.add_argument("--account", default=None, help="the account (#SBATCH -A)")
    args = ap.parse_args()

    # One single-threaded worker process per core: one run uses one core, and a
    # 400-flow run needs tens of MB, so 2 GB per core is ample.
    cluster = SLURMCluster(
        queue=args.queue,
        account=args.account,
        cores=32,
        processes=32,
        memory="64GB",
        walltime="02:00:00",
        job_extra_directives=["--exclusive"],
        log_directory=f"{args.out}/slurm-logs",
    )
    cluster.scale(jobs=args.jobs)
    # Or grow and shrink with the queue: cluster.adapt(minimum_jobs=1, maximum_jobs=args.jobs)
    print(cluster.job_script())

    with Client(cluster) as client:
        sweep = aqmlab.sweep(
            "sfb-fig2b",  # 400 TCP flows and an unresponsive one over 45 Mbit/s
            {
                "qdisc.kind": ["sfb", "red", "choke", "fq_codel"],
                "flows.nonresp.rate": ["10Mbps", "45Mbps", "100Mbps"],
            },
            seeds=100,
            duration="60s",
            warmup="10s",
            client=client,
            cache_dir=f"{args.out}/cache",  # read and written by this process only
            progress=True,
        )
        written = sweep.write(args.out)
    for failure in sweep.failed:
        print(f"run failed: {failure}")
    print(f"{len(sweep.runs_done)} runs ({sweep.simulated} simulated, {sweep.cached} from the cache)")
    print("tables:", ", ".join(str(p) for p in written))
    cluster.close()


if __name__ == "__main__":
    main()
