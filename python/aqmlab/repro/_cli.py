"""``aqmlab repro``: the command line face of :mod:`aqmlab.repro`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

USAGE = """\
aqmlab repro ID... [--out DIR] [--seeds N] [--jobs J] [--duration D] [--no-cache] [-q]
       aqmlab repro all [...]
       aqmlab repro --list"""

DESCRIPTION = """\
Reproduces experiments of the seed papers: runs the simulations (in parallel, each
run cached under DIR/cache so an interrupted sweep resumes), writes ID.csv (the
paper's numbers against ours), ID-runs.csv and ID.png under DIR, and prints the
table with PASS, MISS or OPEN (undecided: our value is only bounded) per row. A
MISS is a finding, not an error: the exit status is 0 unless the arguments are
bad (2)."""


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        raise _UsageError(message)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def _parser() -> _Parser:
    p = _Parser(prog="aqmlab repro", usage=USAGE, description=DESCRIPTION)
    p.add_argument("ids", nargs="*", metavar="ID", help='experiment ids, a paper ("choke") or "all"')
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    p.add_argument("--out", type=Path, default=Path("repro-out"), help="output folder (default repro-out)")
    p.add_argument("--seeds", type=_positive, help="seeds per point (default: each experiment's own)")
    p.add_argument("--jobs", "-j", type=_positive, help="worker processes (default: every core)")
    p.add_argument("--duration", help='shorten every run, e.g. "20s" (quick look; not the paper\'s runs)')
    p.add_argument("--no-cache", action="store_true", help="neither read nor write DIR/cache")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    return p


def main(args: list[str]) -> int:
    """Runs ``aqmlab repro ARGS``; returns the exit status."""
    from aqmlab import repro as R
    from aqmlab.repro._core import parse_seconds

    try:
        ns = _parser().parse_args(args)
    except _UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except SystemExit as e:  # --help
        return int(e.code or 0)

    if ns.list:
        if ns.ids:
            print("error: --list takes no experiment ids", file=sys.stderr)
            return 2
        for e in R.EXPERIMENTS.values():
            print(f"{e.id:<14} {e.source:<28} {e.title}")
        for paper, what in R.NOT_YET.items():
            print(f"{paper + '-*':<14} {'(not yet reproduced)':<28} {what}")
        return 0
    if not ns.ids:
        print("error: name an experiment (see `aqmlab repro --list`) or `all`", file=sys.stderr)
        return 2
    try:
        chosen = R.resolve(ns.ids)
        if ns.duration is not None:
            parse_seconds(ns.duration)
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
    )
    from aqmlab.repro._core import format_table

    for e in chosen:
        print(format_table(e, table[table["experiment"] == e.id]))
        print()
    misses = int((table["verdict"] == "MISS").sum())
    undecided = int((table["verdict"] == "OPEN").sum())
    a = table.attrs
    print(
        f"{int(table['pass'].sum())}/{len(table)} rows within tolerance, {misses} missed, {undecided} open; "
        f"runs: {a['simulated']} simulated, {a['cached']} from cache, {a['seconds']:.1f} s; "
        f"tables and figures in {ns.out}/"
    )
    if ns.duration is not None:
        print(f"note: runs shortened to {ns.duration}; the paper's numbers are for the full runs")
    return 0
