"""The ``aqmlab`` command of the Python package: the binary's own command line.

The command line is declared once, in Rust (``crates/command``), and the
arguments given here are parsed by that very parser through the extension
(``_aqmlab.command_line``), so help, errors, suggestions and completion scripts
are the binary's, byte for byte. The subcommands that only print (``scenarios``,
``qdiscs``, ``tc``, ``model``, ``queue-lab``, ``completions``) run in the
extension too. Python runs the others with the values the parser gives it, named
as the flags are (``--seed-list`` is ``seed_list``):

- ``sweep``, ``repro`` and ``plot``, which are written in Python;
- ``run`` and ``emulate``, whose simulation is the extension's and whose tables
  are written by pyarrow and progress shown by tqdm (the extension has neither
  Parquet nor a progress bar).

Adding a subcommand: its variant in ``crates/command``; a handler in
:data:`HANDLERS` only if Python runs it.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from argparse import Namespace
from pathlib import Path
from typing import Callable


class UsageError(Exception):
    """A problem with the command line: one line on stderr, exit status 2."""


class OutputError(Exception):
    """Standard output could not be written: one line on stderr, exit status 1."""


#: The values that are paths: a path that is not UTF-8 comes as a list of its bytes.
_PATH_KEYS = ("scenario", "out", "dir")


def _paths(values: dict) -> dict:
    """The handoff's values, each path that came as bytes as ``os.fsdecode`` gives it."""
    for key in _PATH_KEYS:
        if isinstance(values.get(key), list):
            values[key] = os.fsdecode(bytes(values[key]))
    return values


def _print(text: str) -> None:
    """Writes ``text`` to stdout and flushes it, so a write that fails (a full disk,
    a reader that went away) is found here and reported, not lost at exit."""
    if sys.stdout is None:  # started with stdout closed (`>&-`)
        raise OutputError("standard output is closed")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as e:
        raise OutputError(f"writing to standard output: {e.strerror or e}") from None


# ---- the subcommands Python runs ---------------------------------------------------------


def _run(ns: Namespace) -> int:
    from aqmlab import _aqmlab
    from aqmlab._io import allow_foreign_out, check_folder, write_folder
    from aqmlab._run_bar import run_with_bar
    from aqmlab.result import Result

    allow_foreign_out(ns.allow_foreign_out)
    sets = _aqmlab.parse_sets(ns.sets)
    if ns.out is not None:
        ns.out = Path(ns.out)
        # Found out now, not after the whole simulation.
        tables = _aqmlab.table_names()
        check_folder(ns.out, names=[f"{t}.{ns.format}" for t in tables] + ["summary.json"], known=tables)
    pcap = None
    if ns.pcap is not None:
        pcap = (ns.pcap, str(ns.out if ns.out is not None else Path(".")))
    finished = run_with_bar(
        False if ns.quiet else None,
        lambda bar: _aqmlab.run_builtin_or_path(
            ns.scenario, ns.seed, ns.duration, ns.warmup, pcap, bar, sets
        ),
    )
    sys.stderr.write(finished.warnings())
    if ns.out is not None:
        result = Result._from_finished(finished)
        tables = {name: result.arrow(name) for name in result.table_names}
        write_folder(
            ns.out, tables, ns.format, summary=finished.summary_json(pretty=True), known=_aqmlab.table_names()
        )
    _print(finished.summary_json() + "\n" if ns.json else finished.text())
    return 0


def _emulate(ns: Namespace) -> int:
    from aqmlab import _aqmlab
    from aqmlab._io import allow_foreign_out, check_folder, write_folder
    from aqmlab._run import late_run
    from aqmlab.result import Result

    if ns.calibrate:
        calibration, summary = _aqmlab.emulate_calibrate(ns.duration)
        _print(calibration + "\n" if ns.json else summary)
        return 0
    allow_foreign_out(ns.allow_foreign_out)
    if ns.app is not None and ns.compare:
        _error(
            f"--app {ns.app} with --compare: a program's connections have no simulated counterpart "
            f'(the simulation would run group "{ns.app}" as the scenario declares it); compare without --app'
        )
        return 2
    sets = _aqmlab.parse_sets(ns.sets)
    if ns.out is not None:
        ns.out = Path(ns.out)
        check_folder(ns.out)
    try:
        finished = _aqmlab.emulate_builtin_or_path(
            ns.scenario,
            ns.seed,
            ns.duration,
            ns.warmup,
            sets,
            app=ns.app,
            command=ns.command or None,
            receiver_cmd=ns.receiver_cmd,
        )
    except KeyboardInterrupt:
        # As the binary: stopped at once, everything it made gone, status 130.
        sys.stderr.write("error: interrupted; the emulation's namespaces and devices are removed\n")
        return 130
    sys.stderr.write(finished.warnings())
    late = late_run(finished)
    if ns.strict and late:
        _error(f"--strict: {late}; its results are discarded")
        return 1
    if ns.out is not None:
        result = Result._from_finished(finished)
        tables = {name: result.arrow(name) for name in result.table_names}
        write_folder(
            ns.out, tables, ns.format, summary=finished.summary_json(pretty=True), known=_aqmlab.table_names()
        )
    if ns.compare:
        simulated = _aqmlab.run_builtin_or_path(ns.scenario, ns.seed, ns.duration, ns.warmup, sets=sets)
        if ns.json:
            both = {
                "simulated": json.loads(simulated.summary_json()),
                "emulated": json.loads(finished.summary_json()),
            }
            _print(json.dumps(both) + "\n")
        else:
            _print(_aqmlab.compare_text(simulated, finished))
        return 0
    _print(finished.summary_json() + "\n" if ns.json else finished.text())
    return 0


def _sweep(ns: Namespace) -> int:
    from aqmlab._io import allow_foreign_out
    from aqmlab._sweep_cli import main

    allow_foreign_out(ns.allow_foreign_out)
    ns.out = Path(ns.out)
    return main(ns)


def _repro(ns: Namespace) -> int:
    from aqmlab._io import allow_foreign_out
    from aqmlab.repro._cli import main

    allow_foreign_out(ns.allow_foreign_out)
    ns.out = Path(ns.out)
    ns.peer = [Path(p) for p in ns.peer]
    return main(ns)


def _plot(ns: Namespace) -> int:
    from aqmlab.plot import main

    return main(ns)


#: The handlers of the subcommands Python runs, by name.
HANDLERS: dict[str, Callable[[Namespace], int]] = {
    "run": lambda ns: _run(ns),
    "emulate": lambda ns: _emulate(ns),
    "sweep": _sweep,
    "repro": _repro,
    "plot": _plot,
}


# ---- running ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Runs ``aqmlab`` with ``argv`` (``sys.argv`` by default, program name first)
    and returns its exit status: 0, 2 for a usage error (one line on stderr), 1 for
    anything else."""
    from aqmlab import _aqmlab

    args = list(sys.argv if argv is None else argv)[1:]
    try:
        if argv is None:
            # What runs in Rust runs without the GIL, so Python's SIGINT handler
            # would see Ctrl-C only after it; let the signal end the process, as it
            # ends the binary. Python's own subcommands get the handler back.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        status, out, err, handoff = _aqmlab.command_line(["aqmlab", *args])
        if argv is None and (handoff is None or handoff[0] != "run"):
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if handoff is None:
            if out:
                _print(out)
            if err and sys.stderr is not None:
                sys.stderr.write(err)
                sys.stderr.flush()
            return status
        name, values = handoff
        if sys.stdout is not None:
            sys.stdout.flush()
        try:
            status = HANDLERS[name](Namespace(**_paths(json.loads(values))))
            _print("")  # flushes what the command printed, so a failed write is seen
        except BrokenPipeError as e:  # from a plain print() of sweep or repro
            raise OutputError(f"writing to standard output: {e.strerror or e}") from None
        return status
    except (UsageError, ValueError) as e:
        _error(str(e))
        return 2
    except OutputError as e:
        _error(str(e))
        _drop_stdout()
        return 1
    except KeyboardInterrupt:
        # Ctrl-C in sweep or repro (run ends by the signal itself): the workers
        # are stopped, and every file was written whole or not at all.
        _error("interrupted")
        return 130
    except (RuntimeError, OSError) as e:
        _error(str(e))
        return 1


def _error(message: str) -> None:
    """One line on stderr, if there is a stderr to write to."""
    try:
        if sys.stderr is not None:
            print(f"error: {message}", file=sys.stderr, flush=True)
    except OSError:
        pass


def _drop_stdout() -> None:
    """Points stdout at the null device, so the interpreter's flush at exit does not
    fail a second time (and print a traceback) on what could not be written."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        if sys.stdout is not None:
            os.dup2(null, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
