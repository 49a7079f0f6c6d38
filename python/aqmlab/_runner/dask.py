"""The Dask executor: runs on a ``dask.distributed`` cluster.

Given a ``Client`` (or a scheduler's address, ``tcp://host:8786``), runs go in
batches, a task each (:mod:`aqmlab._runner.batch`, sized so a task takes about a
second): :func:`aqmlab._runner.work.execute` with each scenario dict and seed,
which returns the run's entry as bytes (compressed Arrow tables). A worker needs only the
installed package, the same build as the parent's (checked on every result). A
window of tasks is kept in flight, a few per worker thread, so a campaign of
10,000 runs neither sits in the scheduler's memory nor waits for the parent.

A worker that dies mid-run is the scheduler's to handle: it runs the task again on
another worker (``distributed.scheduler.allowed-failures`` times, then the run
fails with ``KilledWorker``). Every run comes back once, whatever happened on the
way: the parent takes each task's result once, and the store is keyed by the run.

SLURM, PBS and other batch systems: start the cluster with ``dask-jobqueue``
(``SLURMCluster``) and pass its client; ``docs/cluster.md`` has a script.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from aqmlab._runner.work import Work, execute

#: Tasks in flight per worker thread: enough that no thread waits for the parent.
_PER_THREAD = 4
#: ... and never fewer than this many (a cluster still scaling up).
_MIN_WINDOW = 16


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise ValueError(
            "running on a Dask cluster needs dask.distributed: pip install 'dask[distributed]' "
            "(or aqmlab's wheel with its [dask] extra: docs/cluster.md)"
        ) from None
    return distributed


class DaskCluster:
    """Runs on the cluster of ``client`` (a ``distributed.Client``, or a scheduler
    address, for which a client is opened and closed again)."""

    name = "dask"

    def __init__(self, client: Any) -> None:
        distributed = _import_distributed()
        self._own = isinstance(client, str)
        if self._own:
            try:
                client = distributed.Client(client, timeout="30s")
            except (OSError, ValueError) as e:  # unreachable; not an address
                raise ValueError(f"the Dask scheduler at {client!r} (--scheduler): {e}") from None
        elif not isinstance(client, distributed.Client):
            raise ValueError(
                f"client must be a dask.distributed Client or a scheduler address, got {client!r}"
            )
        self.client = client

    def describe(self) -> str:
        return f"Dask cluster at {self.client.scheduler.address}"

    def close(self) -> None:
        if self._own:
            self.client.close()

    def _window(self) -> int:
        try:
            threads = sum(self.client.nthreads().values())
        except Exception:  # a scheduler that is going away: the minimum will do
            threads = 0
        return max(_MIN_WINDOW, _PER_THREAD * threads)

    def results(
        self, work: Work, runs: Sequence[tuple[str, Any, int]]
    ) -> Iterator[tuple[str, bytes | BaseException]]:
        """(key, entry bytes or the run's exception), as runs finish. Closing the
        generator early cancels the tasks still queued or running. Runs go in
        batches sized from their measured times (:mod:`aqmlab._runner.batch`)."""
        _import_distributed()
        from aqmlab._runner import batch

        yield from batch.results(self.client, work, runs, self._window())

    def _one_run_per_task(
        self, work: Work, runs: Sequence[tuple[str, Any, int]]
    ) -> Iterator[tuple[str, bytes | BaseException]]:
        """One task per run: how runs went before batches (the benchmark's
        reference, ``BENCHMARKS.md``)."""
        distributed = _import_distributed()
        todo = iter(runs)
        in_flight: dict[Any, str] = {}
        completed = distributed.as_completed()

        def submit_next() -> None:
            item = next(todo, None)
            if item is not None:
                key, scenario, seed = item
                # The task's key is the run's: resubmitting a run (a retry after a
                # stop) is the same task, never a second copy of it.
                fut = self.client.submit(
                    execute, work, key, scenario, seed, key=f"aqmlab-run-{key}", pure=False
                )
                in_flight[fut] = key
                completed.add(fut)

        try:
            for _ in range(self._window()):
                submit_next()
            for fut in completed:
                key = in_flight.pop(fut)
                if fut.status == "finished":
                    outcome: bytes | BaseException = fut.result()
                elif fut.status == "error":
                    outcome = fut.exception()
                else:  # cancelled (by another client, or a scheduler going away)
                    outcome = RuntimeError(f"the task was {fut.status} on the cluster")
                fut.release()
                submit_next()
                yield key, outcome
        finally:
            if in_flight:
                self.client.cancel(list(in_flight))
