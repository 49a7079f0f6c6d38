"""``aqmlab sweep``: the command line face of :func:`aqmlab.sweep` (its flags are
parsed by the command line's one declaration, through ``aqmlab._cli``): the grid
from ``--set``, the runs on the local pool or the Dask cluster of
``--scheduler``, the tables into ``--out``, a table of means per point on
stdout."""

from __future__ import annotations

import json
import warnings
from typing import Any

from aqmlab._runner import RunFailed
from aqmlab._sweep import Sweep, checked_seeds, parse_assignment, sweep


def _summary_table(result: Sweep) -> str:
    from aqmlab._campaign_cli import summary_table

    return summary_table(result)


def main(ns) -> int:
    """Runs ``aqmlab sweep`` with its parsed arguments (``aqmlab._cli``); returns
    the exit status (2 for bad arguments or a bad scenario point)."""
    import sys

    from aqmlab._io import check_folder

    try:
        grid: dict[str, list[Any]] = {}
        for text in ns.sets:
            key, values = parse_assignment(text)
            if key in grid:
                raise ValueError(f"--set {key}: given twice (list every value in one --set)")
            grid[key] = values
        if ns.seed_list is not None:
            seeds: int | list[int] = []
            for part in ns.seed_list.split(","):
                try:
                    seeds.append(int(part))
                except ValueError:
                    raise ValueError(f"--seed-list: {part.strip()!r} is not an integer") from None
            try:
                checked_seeds(seeds)
            except ValueError as e:
                raise ValueError(f"--seed-list {ns.seed_list}: {e}") from None
        else:
            seeds = ns.seeds if ns.seeds is not None else 1
        from aqmlab._campaign_cli import parse_baseline

        baseline = parse_baseline(ns.baseline, grid)
        check_folder(
            ns.out, names=[f"{t}.{ns.format}" for t in Sweep.TABLES] + ["summary.json"], known=Sweep.TABLES
        )
        with warnings.catch_warnings():
            # Printed below as the command's own lines, not as Python warnings.
            warnings.simplefilter("ignore", RuntimeWarning)
            result = sweep(
                ns.scenario,
                grid,
                seeds=seeds,
                duration=ns.duration,
                warmup=ns.warmup,
                jobs=ns.jobs,
                cache_dir=None if ns.no_cache else ns.out / "cache",
                progress=not ns.quiet,
                client=ns.scheduler,
                fail_fast=ns.fail_fast,
                baseline=baseline,
                precision=ns.precision,
                max_seeds=ns.max_seeds,
                emulate=ns.emulate,
            )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except RunFailed as e:
        cached = "" if ns.no_cache else f" (the runs that finished are in {ns.out / 'cache'})"
        print(f"error: {e}; stopped (--fail-fast){cached}", file=sys.stderr)
        return 1
    for message in result.warnings:
        print(f"warning: {message}", file=sys.stderr)
    for failure in result.failed:
        print(f"error: run failed: {failure}", file=sys.stderr)
    written = result.write(ns.out, ns.format)
    status = 1 if result.failed else 0
    if ns.json:
        print(
            json.dumps(
                {
                    "keys": result.keys,
                    "runs": json.loads(result.runs.to_json(orient="records")),
                    "stats": json.loads(result.stats.to_json(orient="records")),
                    "paired": json.loads(result.paired.to_json(orient="records")),
                    "stopped": result.summary()["stopped"],
                    "simulated": result.simulated,
                    "cached": result.cached,
                    "failed": result.summary()["failed"],
                    "seconds": result.seconds,
                    "files": [str(p) for p in written],
                }
            )
        )
        return status
    if result.runs_done:
        print(_summary_table(result))
    if result.stopped is not None:
        from aqmlab._campaign_cli import stopped_table

        print(stopped_table(result))
    failed = f", {len(result.failed)} failed" if result.failed else ""
    print(
        f"{len(result.runs_done)} runs ({result.simulated} simulated, {result.cached} from cache{failed}) "
        f"in {result.seconds:.1f} s; tables in {', '.join(str(p) for p in written)}"
    )
    return status
