"""The ``aqmlab`` command of the Python package: the same tree as the binary.

The binary's command line is clap (``crates/cli``); the Python extension has no
clap, so this module is argparse over the extension. The two stay one program:

- every subcommand, flag and help text is declared once, in ``crates/cli``;
  ``_face.json`` (generated from it, checked by a Rust test) holds the help texts
  and completion scripts this module prints, so ``--help``, ``help X`` and
  ``completions`` print exactly what the binary prints;
- the parsers below declare the same flags, and ``tests/python/test_face.py``
  compares their tree (every command, its arguments) with ``_face.json``;
- the commands that run Rust (``run``, ``model``, ``queue-lab``, ...) call the same
  core functions through the extension, so they print the same output.

Adding a subcommand: its clap variant in ``crates/cli`` (``make face`` regenerates
``_face.json``), and one :func:`command` registration here.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable


@lru_cache(maxsize=1)
def face() -> dict[str, Any]:
    """The command's face as the binary has it (``crates/cli/src/face.rs``)."""
    from importlib import resources

    return json.loads(resources.files("aqmlab").joinpath("_face.json").read_text(encoding="utf-8"))


class UsageError(Exception):
    """A problem with the command line: one line on stderr, exit status 2."""


@dataclass
class Command:
    """One subcommand: ``configure`` adds its arguments to a parser, ``handle``
    runs it with the parsed arguments and returns the exit status. ``rust``: it
    runs in the extension without the GIL, so Ctrl-C ends it as it ends the binary
    (the signal's default action)."""

    path: str
    configure: Callable[[argparse.ArgumentParser], object]
    handle: Callable[[argparse.Namespace], int]
    rust: bool = False


#: Every subcommand, by its path after ``aqmlab`` ("model choke-back").
COMMANDS: dict[str, Command] = {}


def command(path: str, configure: Callable[[argparse.ArgumentParser], object], *, rust: bool = False):
    """Registers the decorated function as the handler of subcommand ``path``."""

    def register(handle: Callable[[argparse.Namespace], int]):
        COMMANDS[path] = Command(path, configure, handle, rust)
        return handle

    return register


# ---- the parser ------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        raise UsageError(message)


class _Help(argparse.Action):
    """``-h`` and ``--help``: the binary's help text of this command."""

    def __init__(self, option_strings, dest, path: str = "", **kwargs):
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0, **kwargs)
        self.path = path

    def __call__(self, parser, namespace, values, option_string=None):
        text = face()["commands"][self.path]
        sys.stdout.write(text["long_help"] if option_string == "--help" else text["help"])
        parser.exit(0)


class _Version(argparse.Action):
    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from aqmlab import __version__

        print(f"aqmlab {__version__}")
        parser.exit(0)


def _new_parser(path: str, **kwargs) -> _Parser:
    prog = f"aqmlab {path}".strip()
    p = _Parser(prog=prog, add_help=False, allow_abbrev=False, **kwargs)
    p.add_argument("-h", "--help", action=_Help, path=path)
    return p


def _help_command(sub, parent: str) -> None:
    """clap's ``help [COMMAND]...`` subcommand, at every level that has subcommands."""
    p = sub.add_parser("help", add_help=False, allow_abbrev=False)
    p.add_argument("commands", nargs="*", metavar="COMMAND")
    p.set_defaults(_help_of=parent)


def parser() -> _Parser:
    """The whole tree as argparse parsers, subcommands in the binary's order."""
    commands = face()["commands"]
    top = _new_parser("")
    top.add_argument("-V", "--version", action=_Version)

    def add_children(path: str, p: argparse.ArgumentParser) -> None:
        names = commands[path]["subcommands"]
        if not names:
            return
        sub = p.add_subparsers(dest=f"_cmd_{path or 'top'}", parser_class=_Parser)
        for name in names:
            if name == "help":
                continue
            child_path = f"{path} {name}".strip()
            child = sub.add_parser(name, prog=f"aqmlab {child_path}", add_help=False, allow_abbrev=False)
            child.add_argument("-h", "--help", action=_Help, path=child_path)
            if child_path in COMMANDS:
                COMMANDS[child_path].configure(child)
                child.set_defaults(_command=child_path)
            add_children(child_path, child)
        if "help" in names:
            _help_command(sub, path)

    add_children("", top)
    return top


# ---- helpers for the arguments -------------------------------------------------------------


#: The largest integer a u64 flag of the binary takes.
U64_MAX = 2**64 - 1


def _integer(text: str) -> int:
    """An integer as the binary's flags read one (Rust's ``u64::from_str``): ASCII
    digits with an optional ``+``, nothing around them, at most ``U64_MAX``."""
    if re.fullmatch(r"\+?[0-9]+", text, re.ASCII) is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a non-negative integer")
    value = int(text)
    if value > U64_MAX:
        raise argparse.ArgumentTypeError(f"{text} is larger than {U64_MAX}")
    return value


def _positive(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def _at_least_two(text: str) -> int:
    n = _positive(text)
    if n < 2:
        raise argparse.ArgumentTypeError(f"{n} is not in 2..")
    return n


def _unsigned(text: str) -> int:
    return _integer(text)


def _seeds(text: str) -> int:
    """``--seeds N``: at most the runs one sweep plans."""
    from aqmlab._sweep import MAX_RUNS

    value = _positive(text)
    if value > MAX_RUNS:
        raise argparse.ArgumentTypeError(f"{value} seeds: at most {MAX_RUNS:,} (the runs of one sweep)")
    return value


def _out(text: str) -> Path:
    """An ``--out`` path; an empty one (an unset shell variable) is refused, not
    taken for the current folder."""
    from aqmlab._io import out_path

    try:
        return out_path(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--out '': ")) from None


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None


def _joined(values: list[list[float]] | None) -> list[float]:
    """A repeatable comma-separated flag (clap's ``value_delimiter``), flattened."""
    return [x for part in values or [] for x in part]


def _format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=["parquet", "csv"], default="parquet")


class OutputError(Exception):
    """Standard output could not be written: one line on stderr, exit status 1."""


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


# ---- the commands ------------------------------------------------------------------------------


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", nargs="?", metavar="SCENARIO")
    p.add_argument("--seed", type=_unsigned)
    p.add_argument("--duration")
    p.add_argument("--warmup")
    p.add_argument("--out", type=_out)
    _format(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("--pcap", metavar="LINK")
    p.add_argument("-q", "--quiet", action="store_true")


@command("run", _run_args, rust=True)
def _run(ns: argparse.Namespace) -> int:
    from aqmlab import _aqmlab
    from aqmlab._io import check_folder, write_folder
    from aqmlab._run_bar import run_with_bar
    from aqmlab.result import Result

    if ns.out is not None:
        # Found out now, not after the whole simulation.
        tables = _aqmlab.table_names()
        check_folder(ns.out, names=[f"{t}.{ns.format}" for t in tables] + ["summary.json"], known=tables)
    pcap = None
    if ns.pcap is not None:
        pcap = (ns.pcap, str(ns.out if ns.out is not None else Path(".")))
    finished = run_with_bar(
        False if ns.quiet else None,
        lambda bar: _aqmlab.run_builtin_or_path(ns.scenario, ns.seed, ns.duration, ns.warmup, pcap, bar),
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


def _emulate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", nargs="?", metavar="SCENARIO")
    p.add_argument("--seed", type=_unsigned)
    p.add_argument("--duration")
    p.add_argument("--warmup")
    p.add_argument("--out", type=Path)
    _format(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("--compare", action="store_true")


@command("emulate", _emulate_args)
def _emulate(ns: argparse.Namespace) -> int:
    from aqmlab import _aqmlab
    from aqmlab._io import check_folder, write_folder
    from aqmlab.result import Result

    if ns.out is not None:
        check_folder(ns.out)
    try:
        finished = _aqmlab.emulate_builtin_or_path(ns.scenario, ns.seed, ns.duration, ns.warmup)
    except KeyboardInterrupt:
        # As the binary: stopped at once, everything it made gone, status 1.
        sys.stderr.write("error: interrupted; the emulation's namespaces and devices are removed\n")
        return 1
    sys.stderr.write(finished.warnings())
    if ns.out is not None:
        result = Result._from_finished(finished)
        tables = {name: result.arrow(name) for name in result.table_names}
        write_folder(
            ns.out, tables, ns.format, summary=finished.summary_json(pretty=True), known=_aqmlab.table_names()
        )
    if ns.compare:
        simulated = _aqmlab.run_builtin_or_path(ns.scenario, ns.seed, ns.duration, ns.warmup)
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


@command("sweep", lambda p: _sweep_args(p))
def _sweep(ns: argparse.Namespace) -> int:
    from aqmlab._sweep_cli import main

    return main(ns)


def _sweep_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", nargs="?", metavar="SCENARIO")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=V1,V2")
    seeds = p.add_mutually_exclusive_group()
    seeds.add_argument("--seeds", type=_seeds, metavar="N")
    seeds.add_argument("--seed-list", metavar="S1,S2")
    p.add_argument("--duration")
    p.add_argument("--warmup")
    p.add_argument("--baseline", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--precision", metavar="METRIC=WIDTH")
    p.add_argument("--max-seeds", type=_at_least_two, metavar="N")
    _executor_args(p)
    p.add_argument("--out", type=_out, default=Path("sweep-out"), metavar="DIR")
    _format(p)
    p.add_argument("--no-cache", action="store_true")
    p.add_argument("--fail-fast", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true")


def _executor_args(p: argparse.ArgumentParser) -> None:
    """Where the runs go: ``-j`` local processes, or the Dask cluster at ``--scheduler``."""
    where = p.add_mutually_exclusive_group()
    where.add_argument("-j", "--jobs", type=_positive, metavar="J")
    where.add_argument("--scheduler", metavar="ADDRESS")


def _repro_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--list", action="store_true")
    p.add_argument("--out", type=_out, default=Path("repro-out"), metavar="DIR")
    p.add_argument("--seeds", type=_seeds, metavar="N")
    _executor_args(p)
    p.add_argument("--duration")
    _format(p)
    p.add_argument("--no-cache", action="store_true")
    p.add_argument("--fail-fast", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true")
    p.add_argument("--peer", type=Path, action="append", default=[], metavar="FILE")


@command("repro", _repro_args)
def _repro(ns: argparse.Namespace) -> int:
    from aqmlab.repro._cli import main

    return main(ns)


def _plot_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", type=Path, metavar="DIR")
    p.add_argument("--out", type=_out, metavar="FILE")
    p.add_argument("--kind", choices=["queue", "throughput", "goodput", "delay", "all"], default="all")


@command("plot", _plot_args)
def _plot(ns: argparse.Namespace) -> int:
    from aqmlab.plot import main

    return main(ns)


@command("scenarios", lambda p: None)
def _scenarios(ns: argparse.Namespace) -> int:
    from aqmlab import _aqmlab

    _print(_aqmlab.builtin_listing())
    return 0


@command("qdiscs", lambda p: p.add_argument("kind", nargs="?", metavar="KIND"))
def _qdiscs(ns: argparse.Namespace) -> int:
    from aqmlab import _aqmlab

    kinds = _aqmlab.qdisc_kinds()
    if ns.kind is None:
        _print("".join(f"{k}\n" for k in kinds))
    elif ns.kind in kinds:
        _print(_aqmlab.qdisc_help(ns.kind))
    else:
        raise UsageError(f"invalid value '{ns.kind}' for '[KIND]' (possible values: {', '.join(kinds)})")
    return 0


def _tc_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("line", metavar="LINE")


@command("tc", _tc_args)
def _tc(ns: argparse.Namespace) -> int:
    from aqmlab import _aqmlab

    _print(_aqmlab.tc_table(ns.line))
    return 0


def _sfb_misclass_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--levels", type=_unsigned, required=True)
    p.add_argument("--bins", type=_unsigned, required=True)
    p.add_argument("--nonresponsive", type=_unsigned, required=True)
    p.add_argument("--json", action="store_true")


@command("model sfb-misclass", _sfb_misclass_args, rust=True)
def _sfb_misclass(ns: argparse.Namespace) -> int:
    from aqmlab import _aqmlab

    _print(_aqmlab.model_sfb_misclass(ns.levels, ns.bins, ns.nonresponsive, ns.json))
    return 0


def _choke_front_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mu", type=float, required=True)
    p.add_argument("--rates", type=_floats, action="append", required=True)
    p.add_argument("--json", action="store_true")


@command("model choke-front", _choke_front_args, rust=True)
def _choke_front(ns: argparse.Namespace) -> int:
    from aqmlab import _aqmlab

    _print(_aqmlab.model_choke_front(ns.mu, _joined(ns.rates), ns.json))
    return 0


def _choke_back_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--memory", type=_unsigned, required=True)
    p.add_argument("--rates", type=_floats, action="append", required=True)
    p.add_argument("--mu", type=float)
    p.add_argument("--json", action="store_true")


@command("model choke-back", _choke_back_args, rust=True)
def _choke_back(ns: argparse.Namespace) -> int:
    from aqmlab import _aqmlab

    _print(_aqmlab.model_choke_back(ns.memory, _joined(ns.rates), ns.mu, ns.json))
    return 0


def _queue_lab_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--qdisc", choices=["choke", "mloc"], default="choke")
    p.add_argument("--candidate", choices=["front", "back", "random"], default="front")
    p.add_argument("--candidates", type=_unsigned, default=1)
    p.add_argument("--memory", type=_unsigned, default=1)
    p.add_argument("--mu", type=float, default=1.0)
    p.add_argument("--rates", type=_floats, action="append", required=True)
    p.add_argument("--packets", type=_unsigned, default=1_000_000)
    p.add_argument("--warmup", type=_unsigned)
    p.add_argument("--seed", type=_unsigned, default=1)
    p.add_argument("--limit", type=_unsigned, default=100_000)
    p.add_argument("--json", action="store_true")


@command("queue-lab", _queue_lab_args, rust=True)
def _queue_lab(ns: argparse.Namespace) -> int:
    from aqmlab import _aqmlab

    config = {
        "qdisc": ns.qdisc,
        "candidate": ns.candidate,
        "candidates": ns.candidates,
        "memory": ns.memory,
        "mu": ns.mu,
        "rates": _joined(ns.rates),
        "packets": ns.packets,
        "warmup": ns.warmup,
        "seed": ns.seed,
        "limit": ns.limit,
    }
    _print(_aqmlab.queue_lab(json.dumps(config), not ns.json))
    return 0


@command("completions", lambda p: p.add_argument("shell", choices=["bash", "zsh", "fish"], metavar="SHELL"))
def _completions(ns: argparse.Namespace) -> int:
    _print(face()["completions"][ns.shell])
    return 0


# ---- running ----------------------------------------------------------------------------------


def _help(ns: argparse.Namespace) -> int:
    """``aqmlab [CMD...] help [COMMAND]...``: the long help of that command."""
    path = " ".join([ns._help_of, *ns.commands]).strip()
    commands = face()["commands"]
    if path not in commands:
        raise UsageError(f"unrecognized subcommand '{' '.join(ns.commands)}'")
    _print(commands[path]["long_help"])
    return 0


def main(argv: list[str] | None = None) -> int:
    """Runs ``aqmlab`` with ``argv`` (``sys.argv`` by default, program name first)
    and returns its exit status: 0, 2 for a usage error (one line on stderr), 1 for
    anything else."""
    args = list(sys.argv if argv is None else argv)[1:]
    try:
        try:
            ns = parser().parse_args(args)
        except SystemExit as e:  # --help, --version
            return int(e.code or 0)
        if getattr(ns, "_help_of", None) is not None:
            return _help(ns)
        path = getattr(ns, "_command", None)
        if path is None:
            # As clap: a missing subcommand prints the help and is a usage error.
            node = " ".join(a for a in args if not a.startswith("-"))
            commands = face()["commands"]
            sys.stderr.write(commands.get(node, commands[""])["help"])
            return 2
        cmd = COMMANDS[path]
        if cmd.rust and argv is None:
            # The run is in Rust without the GIL, so Python's SIGINT handler would
            # see Ctrl-C only after it; let the signal end the process, as it ends
            # the binary.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        if sys.stdout is not None:
            sys.stdout.flush()
        try:
            status = cmd.handle(ns)
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
