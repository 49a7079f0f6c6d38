"""aqmlab: packet-level simulation of fair active queue management.

Run a scenario and read its results as DataFrames::

    import aqmlab
    r = aqmlab.run("choke-fig3", duration="30s", warmup="10s")
    r.groups            # goodput, drops and Jain's index per flow group
    r.flows             # one row per flow
    r.queue             # the monitored queues over time

``aqmlab.repro("choke-fig5")`` reproduces an experiment of a seed paper and returns
the paper's numbers beside ours (see :mod:`aqmlab.repro` and REPRODUCTION.md).

``aqmlab.sweep("choke-fig3", {"qdisc.kind": ["red", "choke"]}, seeds=10)`` runs a
grid of points and seeds on every core and returns their tables, labelled.

``aqmlab.plot`` draws one run's queue over time, per-flow throughput over time,
goodput per flow and queueing-delay CDF (``aqmlab plot DIR`` from the command
line); ``aqmlab.Result.read(DIR)`` reads back what ``aqmlab run --out DIR`` wrote.

``aqmlab.scenarios()`` lists the built-in scenarios, ``aqmlab.qdisc_kinds()`` the
queueing disciplines a scenario's ``[qdisc] kind`` may name and
``aqmlab.qdisc_keys(kind)`` the keys each takes. The simulator itself
is Rust (the ``aqmlab._aqmlab`` extension); this package is its Python face.
"""

from __future__ import annotations

import os as _os
import signal as _signal
import sys as _sys

# Started as the ``aqmlab`` command (its script, or ``python -m aqmlab`` while the
# package loads): a Ctrl-C during the imports below ends the process as it ends
# the binary, by the signal, not with a KeyboardInterrupt traceback from whichever
# import it hit. ``_cli.main`` then takes SIGINT over. Imported as a library, the
# handler is left alone.
if _sys.argv[:1] == ["-m"] or _os.path.basename(_sys.argv[0] if _sys.argv else "") == "aqmlab":
    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)

from aqmlab._run import emulate, qdisc_keys, qdisc_kinds, run, scenario_text, scenarios
from aqmlab._sweep import Sweep, sweep
from aqmlab.repro import repro
from aqmlab.result import Result

__all__ = [
    "Result",
    "Sweep",
    "__version__",
    "emulate",
    "qdisc_keys",
    "qdisc_kinds",
    "repro",
    "run",
    "scenario_text",
    "scenarios",
    "sweep",
]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("aqmlab")
    except PackageNotFoundError:  # imported from a source tree, not installed
        return "unknown"


__version__ = _version()
