"""Batches of runs per Dask task, sized from measured run times.

A Dask task costs the scheduler about a millisecond and the parent a round trip
(dask/distributed#2181: 100,000 tasks kept workers idle for tens of seconds);
an aqmlab run of a short scenario takes about as long. So a sweep of many short
runs sends several runs per task: :func:`execute_batch` runs them one after the
other on the worker and returns each run's entry (or its error) apart, with
the batch's wall time. The parent stores every run on its own as its batch
arrives, so the run store is the same as with one run per task, and a sweep
killed mid-batch resumes with the runs the store lacks (a batch in flight is
run again whole; its runs that were stored are skipped, being no longer asked
for).

The size follows the run times: the first tasks hold one run each; from then
on a batch holds as many runs as take :data:`TARGET_SECONDS` at the mean run
time measured so far (an exponentially weighted mean of the batches' times per
run), but never so many that a worker would be left without a batch while
others still have runs queued, and never more than :data:`MAX_BATCH`.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Iterator, Sequence
from typing import Any

from aqmlab._runner.work import Work, execute

#: Wall time a batch should take: long beside a task's scheduling cost (~1 ms),
#: short enough that a stop or a lost worker throws little work away.
TARGET_SECONDS = 1.0
#: The most runs in one task.
MAX_BATCH = 2000
#: Weight of the newest batch in the mean run time.
_SMOOTHING = 0.3

Run = tuple[str, Any, int]


def execute_batch(work: Work, runs: Sequence[Run]) -> tuple[list[tuple[str, Any]], float]:
    """Runs each (key, scenario, seed) of ``runs`` with :func:`execute`; returns
    [(key, entry bytes or the run's exception)] and the batch's wall seconds. A
    run that raises is reported in its place and the others still run."""
    started = time.perf_counter()
    out: list[tuple[str, Any]] = []
    for key, scenario, seed in runs:
        try:
            out.append((key, execute(work, key, scenario, seed)))
        except Exception as e:
            out.append((key, e))
    return out, time.perf_counter() - started


class Sizer:
    """How many runs the next batch holds, from the times of batches so far."""

    def __init__(self, total: int, workers: int, target: float = TARGET_SECONDS) -> None:
        self.remaining = total
        self.workers = max(1, workers)
        self.target = target
        #: Mean seconds a run takes (None until a batch has come back).
        self.per_run: float | None = None

    def observe(self, runs: int, seconds: float) -> None:
        if runs <= 0:
            return
        sample = max(seconds, 1e-6) / runs
        old = sample if self.per_run is None else self.per_run
        self.per_run = (1 - _SMOOTHING) * old + _SMOOTHING * sample

    def next_size(self) -> int:
        if self.remaining <= 0:
            return 0
        if self.per_run is None:
            size = 1
        else:
            size = max(1, int(self.target / self.per_run))
            # Enough batches left that every worker has one in hand.
            size = min(size, max(1, math.ceil(self.remaining / (2 * self.workers))))
        size = min(size, MAX_BATCH, self.remaining)
        self.remaining -= size
        return size


def batch_key(runs: Sequence[Run]) -> str:
    """The task key of a batch: from its runs' keys, so the same batch sent again
    (a retry after a stop) is the same task."""
    digest = hashlib.sha256("\n".join(key for key, _, _ in runs).encode()).hexdigest()[:24]
    return f"aqmlab-batch-{digest}"


def results(client: Any, work: Work, runs: Sequence[Run], window: int) -> Iterator[tuple[str, Any]]:
    """(key, entry bytes or exception) of every run, as batches finish on the
    cluster of ``client``, ``window`` batches in flight. Closing the generator
    early cancels the batches still queued or running."""
    import distributed

    try:
        threads = sum(client.nthreads().values())
    except Exception:  # a scheduler going away: its error comes with the first task
        threads = 1
    sizer = Sizer(len(runs), threads)
    todo = iter(runs)
    in_flight: dict[Any, list[str]] = {}
    completed = distributed.as_completed()

    def submit_next() -> None:
        size = sizer.next_size()
        if size:
            batch = [next(todo) for _ in range(size)]
            fut = client.submit(execute_batch, work, batch, key=batch_key(batch), pure=False)
            in_flight[fut] = [key for key, _, _ in batch]
            completed.add(fut)

    try:
        for _ in range(window):
            submit_next()
        for fut in completed:
            keys = in_flight.pop(fut)
            if fut.status == "finished":
                outcomes, seconds = fut.result()
                sizer.observe(len(outcomes), seconds)
            else:
                error = fut.exception() if fut.status == "error" else None
                if error is None:
                    error = RuntimeError(f"the task was {fut.status} on the cluster")
                outcomes = [(key, error) for key in keys]
            fut.release()
            submit_next()
            yield from outcomes
    finally:
        if in_flight:
            client.cancel(list(in_flight))
