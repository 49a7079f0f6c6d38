"""What a worker does with one run: simulate it and hand back its entry's bytes.

Every executor ships the same call, :func:`execute` with a work function (a
module-level function, so it pickles by name: a worker needs only the installed
package) and a run (key, scenario dict, seed). The worker encodes the result as
the store's entry (:func:`aqmlab._runner.store.encode`: compressed Arrow tables in
Parquet), so what crosses the wire is a few kilobytes of bytes, never pickled
DataFrames, and the parent writes them to disk without decoding them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from aqmlab.result import Result

#: The key of a point that runs the queue lab rather than a network scenario.
QUEUE_LAB = "queue_lab"
#: The key of a point that is emulated (``aqmlab emulate``: real Linux TCP through
#: the same qdiscs) rather than simulated. Wrapping the scenario gives its runs
#: keys of their own in the run store: an emulated run never stands in for a
#: simulated one, nor the reverse.
EMULATE = "emulate"

Work = Callable[[Mapping[str, Any], int], "Result | LabRun"]


class LabRun:
    """A queue-lab run: the ``aqmlab queue-lab --json`` object
    (``models::queue_lab::LabResult``) as ``data``."""

    __slots__ = ("data", "json_text")

    def __init__(self, json_text: str) -> None:
        self.json_text = json_text
        self.data: dict[str, Any] = json.loads(json_text)

    def __reduce__(self) -> tuple[type[LabRun], tuple[str]]:
        return (LabRun, (self.json_text,))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LabRun) and self.data == other.data

    __hash__ = None  # type: ignore[assignment]


def simulate(scenario: Mapping[str, Any], seed: int) -> Result | LabRun:
    """One run. A point whose scenario is ``{"queue_lab": {...}}`` is a run of the
    queue lab (the CHOKe models' setting) instead of a network."""
    if QUEUE_LAB in scenario:
        from aqmlab import _aqmlab

        return LabRun(_aqmlab.queue_lab(json.dumps({**scenario[QUEUE_LAB], "seed": seed})))
    if EMULATE in scenario:
        from aqmlab._run import emulate_scenario

        # Unlabelled, as below.
        return emulate_scenario(dict(scenario[EMULATE]), seed, None, None, True, labelled=False, overrides={})
    from aqmlab._run import simulate

    # Unlabelled: a sweep labels its runs' rows with the point and the seed.
    return simulate(dict(scenario), seed=seed)


class RunError(Exception):
    """A run that raised in its worker: the message names the error's type, so it
    reads the same whichever executor carried it back."""


def execute(work: Work, key: str, scenario: Mapping[str, Any], seed: int) -> bytes:
    """Runs ``work(scenario, seed)`` and returns the entry's bytes. An error of the
    run comes back as :class:`RunError` (it pickles whatever raised it: a Rust
    panic's exception class need not exist where the parent unpickles it)."""
    from aqmlab._runner.store import encode

    try:
        result = work(scenario, seed)
    except Exception as e:
        raise RunError(f"{type(e).__name__}: {e}") from None
    return encode(key, scenario, seed, result)
