"""The ``aqmlab`` command (console script and ``python -m aqmlab``).

The command line program is the Rust one (``aqmlab_cli::main_with_args``), so the
console script and the standalone binary behave alike. Subcommands written in
Python (``repro``, ``sweep``, ...) register in :data:`PYTHON_COMMANDS`; they are
dispatched here before anything falls through to Rust.
"""

from __future__ import annotations

import signal
import sys
from typing import Callable

from aqmlab import _aqmlab

#: Subcommands implemented in Python: name -> function of the arguments after the
#: subcommand's name, returning the exit status. Checked before the Rust CLI.
PYTHON_COMMANDS: dict[str, Callable[[list[str]], int]] = {}


def _repro(args: list[str]) -> int:
    from aqmlab.repro._cli import main as repro_main

    return repro_main(args)


def _sweep(args: list[str]) -> int:
    from aqmlab._sweep import main as sweep_main

    return sweep_main(args)


PYTHON_COMMANDS["repro"] = _repro
PYTHON_COMMANDS["sweep"] = _sweep


def main(argv: list[str] | None = None) -> int:
    """Runs ``aqmlab`` with ``argv`` (``sys.argv`` by default, program name first)
    and returns its exit status."""
    args = list(sys.argv if argv is None else argv)[1:]
    if args and args[0] in PYTHON_COMMANDS:
        return PYTHON_COMMANDS[args[0]](args[1:])
    sys.stdout.flush()
    # The Rust program runs without the GIL, so Python's SIGINT handler would only
    # see Ctrl-C after the run; let the signal end the process, as it ends the binary.
    if argv is None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    # clap names the program after argv[0]; keep it "aqmlab" under `python -m`.
    return _aqmlab.cli_main(["aqmlab", *args])


if __name__ == "__main__":
    sys.exit(main())
