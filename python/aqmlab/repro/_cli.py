"""``aqmlab repro``: the command line face of :mod:`aqmlab.repro` (its flags are
parsed by the command line's one declaration, through ``aqmlab._cli``)."""

from __future__ import annotations

import json
import sys


def main(ns) -> int:
    """Runs ``aqmlab repro`` with its parsed arguments; returns the exit status."""
    from importlib import import_module

    R = import_module("aqmlab.repro")  # the package (aqmlab.repro is its function)
    from aqmlab._io import check_folder
    from aqmlab.repro._core import format_table, load_peer, parse_nanos

    if ns.list:
        if ns.ids:
            print("error: --list takes no experiment ids", file=sys.stderr)
            return 2
        # Columns as wide as their longest entry, so that every title lines up.
        ids = [e.id for e in R.EXPERIMENTS.values()] + [p + "-*" for p in R.NOT_YET]
        w_id = max([14, *map(len, ids)])
        w_src = max([28, *(len(e.source) for e in R.EXPERIMENTS.values())])
        for e in R.EXPERIMENTS.values():
            print(f"{e.id:<{w_id}} {e.source:<{w_src}} {e.title}")
        for paper, what in R.NOT_YET.items():
            print(f"{paper + '-*':<{w_id}} {'(not yet reproduced)':<{w_src}} {what}")
        return 0
    if not ns.ids:
        print("error: name an experiment (see `aqmlab repro --list`) or `all`", file=sys.stderr)
        return 2
    try:
        check_folder(ns.out)
        chosen = R.resolve(ns.ids)
        if ns.duration is not None:
            parse_nanos(ns.duration)
        for path in ns.peer:
            load_peer(path)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    table = R.repro(
        [e.id for e in chosen],
        out=ns.out,
        seeds=ns.seeds,
        jobs=ns.jobs,
        duration=ns.duration,
        progress=not ns.quiet,
        cache=not ns.no_cache,
        fmt=ns.format,
        client=ns.scheduler,
        fail_fast=ns.fail_fast,
        peers=ns.peer,
    )
    a = table.attrs
    if ns.json:
        print(
            json.dumps(
                {
                    "experiments": [e.id for e in chosen],
                    "checks": json.loads(table.to_json(orient="records")),
                    "simulated": a["simulated"],
                    "cached": a["cached"],
                    "seconds": a["seconds"],
                    "out": str(ns.out),
                }
            )
        )
        return 0
    for e in chosen:
        print(format_table(e, table[table["experiment"] == e.id]))
        print()
    misses = int((table["verdict"] == "MISS").sum())
    undecided = int((table["verdict"] == "OPEN").sum())
    print(
        f"{int(table['pass'].sum())}/{len(table)} rows within tolerance, {misses} missed, {undecided} open; "
        f"runs: {a['simulated']} simulated, {a['cached']} from cache, {a['seconds']:.1f} s; "
        f"tables and figures in {ns.out}/"
    )
    if ns.duration is not None:
        print(f"note: runs shortened to {ns.duration}; the paper's numbers are for the full runs")
    return 0
