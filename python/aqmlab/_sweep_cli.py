"""``aqmlab sweep``: the command line face of :func:`aqmlab.sweep` (its flags are
parsed by ``aqmlab._cli``): the grid from ``--set``, the runs on the local pool or
the Dask cluster of ``--scheduler``, the tables into ``--out``, a table of means
per point on stdout."""

from __future__ import annotations

import json
import warnings
from typing import Any

from aqmlab._runner import RunFailed
from aqmlab._sweep import Sweep, parse_assignment, sweep


def _summary_table(result: Sweep) -> str:
    runs = result.runs
    keys = [result.columns[k] for k in result.keys]
    goodputs = [c for c in runs.columns if c.endswith("_goodput_bps")]
    # A wide table is unreadable on a terminal; the runs table has every group.
    value_cols = (goodputs if len(goodputs) <= 6 else []) + ["jain_tcp", "jain_all"]
    if keys:
        means = runs.groupby(keys, sort=False)[value_cols].mean().reset_index()
    else:
        means = runs[value_cols].mean().to_frame().T
    for c in value_cols:
        if c.endswith("_goodput_bps"):
            means[c] = means[c] / 1e3
            means = means.rename(columns={c: c.replace("_goodput_bps", " kbit/s")})
    return means.to_string(index=False, float_format=lambda x: f"{x:.3f}" if abs(x) < 10 else f"{x:.1f}")


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
        else:
            seeds = ns.seeds if ns.seeds is not None else 1
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
    failed = f", {len(result.failed)} failed" if result.failed else ""
    print(
        f"{len(result.runs_done)} runs ({result.simulated} simulated, {result.cached} from cache{failed}) "
        f"in {result.seconds:.1f} s; tables in {', '.join(str(p) for p in written)}"
    )
    return status
