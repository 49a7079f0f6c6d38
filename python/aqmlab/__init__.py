"""aqmlab: packet-level simulation of fair active queue management.

Run a scenario and read its results as DataFrames::

    import aqmlab
    r = aqmlab.run("choke-fig3", duration="30s", warmup="10s")
    r.groups            # goodput, drops and Jain's index per flow group
    r.flows             # one row per flow
    r.queue             # the monitored queues over time

``aqmlab.scenarios()`` lists the built-in scenarios, ``aqmlab.qdisc_kinds()`` the
queueing disciplines a scenario's ``[qdisc] kind`` may name. The simulator itself
is Rust (the ``aqmlab._aqmlab`` extension); this package is its Python face.
"""

from __future__ import annotations

from aqmlab._run import qdisc_kinds, run, scenario_text, scenarios
from aqmlab.result import Result

__all__ = ["Result", "__version__", "qdisc_kinds", "run", "scenario_text", "scenarios"]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("aqmlab")
    except PackageNotFoundError:  # imported from a source tree, not installed
        return "unknown"


__version__ = _version()
