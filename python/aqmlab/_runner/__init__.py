"""The one runner of sweeps and reproductions, over pluggable executors.

- ``store``: the content-addressed run store (one compressed Parquet entry per run,
  keyed by scenario, seed and engine build), shared by every executor.
- ``work``: what a worker does with one run (simulate, encode the entry).
- ``local``: the local process pool (the default).
- ``dask``: a ``dask.distributed`` cluster (``client=`` or ``--scheduler ADDRESS``).
- ``progress``: the tqdm bar on stderr.

:func:`run_all` takes (scenario, seed) pairs, skips those already stored, sends the
rest to the executor, and stores each result the moment it arrives: the parent
holds keys, not results, so its memory does not grow with the number of runs, and a
sweep killed at any moment (SIGKILL included) resumes with only the missing runs.
A run that fails is reported with its point and seed and the others go on, unless
``fail_fast``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

from aqmlab._runner.store import Store, engine_id, entry_meta, run_key
from aqmlab._runner.work import LabRun, RunError, Work

__all__ = [
    "Failure",
    "LabRun",
    "RunError",
    "RunFailed",
    "RunStats",
    "Store",
    "StoredResults",
    "executor",
    "run_all",
    "run_key",
]


@dataclass
class RunStats:
    """What :func:`run_all` did: runs simulated, found stored, failed; wall time."""

    simulated: int = 0
    cached: int = 0
    failed: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Failure:
    """A run that failed: its key, scenario, seed, what it is (``where``: the
    sweep point, or the experiment's label) and the error."""

    key: str
    seed: int
    where: str
    error: str
    scenario: Mapping[str, Any] = field(repr=False, compare=False)

    def __str__(self) -> str:
        where = f"{self.where} " if self.where else ""
        return f"{where}seed {self.seed}: {self.error}"


class RunFailed(RuntimeError):
    """Raised by ``fail_fast`` at the first failed run (the runs still going are
    stopped; those that finished are stored)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(f"run failed: {failure}")
        self.failure = failure


def executor(jobs: int | None = None, client: Any = None):
    """The executor for ``jobs`` (the local pool's size) or ``client`` (a Dask
    client or scheduler address); not both."""
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs = {jobs!r} must be an integer >= 1")
    if client is None:
        from aqmlab._runner.local import LocalPool

        return LocalPool(jobs)
    if jobs is not None:
        raise ValueError("jobs sets the local pool's size; on a Dask cluster its workers run the runs")
    from aqmlab._runner.dask import DaskCluster

    return DaskCluster(client)


def run_all(
    runs: Iterable[tuple[Mapping[str, Any], int]],
    store: Store,
    *,
    jobs: int | None = None,
    client: Any = None,
    progress: bool = False,
    fail_fast: bool = False,
    work: Work | None = None,
    describe: Callable[[Mapping[str, Any], int], str] | None = None,
) -> tuple[list[str], RunStats, list[Failure]]:
    """Runs every (scenario, seed) of ``runs`` that ``store`` lacks, on the local
    pool (``jobs`` processes) or the Dask cluster of ``client``, and stores each
    result as it arrives. Returns the key of every run (in order, each once), the
    counts, and the failures (``describe(scenario, seed)`` names a run in them).
    With ``fail_fast`` the first failure stops the runs and raises
    :class:`RunFailed`. ``work`` (scenario, seed) -> result is what a worker runs
    (default :func:`aqmlab._runner.work.simulate`, looked up at the call)."""
    if work is None:
        from aqmlab._runner import work as _work

        work = _work.simulate
    started = time.monotonic()
    stats = RunStats()
    run_exec = executor(jobs, client)
    try:
        keys: list[str] = []
        todo: dict[str, tuple[Mapping[str, Any], int]] = {}
        seen: set[str] = set()
        for scenario, seed in runs:
            key = run_key(scenario, seed)
            if key in seen:
                continue
            seen.add(key)
            keys.append(key)
            if store.has(key):
                stats.cached += 1
            else:
                todo[key] = (scenario, seed)

        from aqmlab._runner.progress import Progress

        bar = Progress(len(keys), stats.cached, progress, getattr(run_exec, "describe", lambda: "")())
        failures: list[Failure] = []
        mine = engine_id()
        try:
            tasks = [(key, scenario, seed) for key, (scenario, seed) in todo.items()]
            with contextlib.closing(run_exec.results(work, tasks)) as finished:
                for key, outcome in finished:
                    scenario, seed = todo[key]
                    error = _check(outcome, key, mine)
                    if error is None:
                        store.put(key, outcome)  # type: ignore[arg-type]
                        stats.simulated += 1
                        bar.step()
                        continue
                    where = describe(scenario, seed) if describe is not None else ""
                    failure = Failure(key, seed, where, error, scenario)
                    failures.append(failure)
                    stats.failed += 1
                    bar.fail(str(failure))
                    if fail_fast:
                        raise RunFailed(failure)
        finally:
            bar.close()
    finally:
        close = getattr(run_exec, "close", None)
        if close is not None:
            close()
    stats.seconds = time.monotonic() - started
    return keys, stats, failures


def _check(outcome: bytes | BaseException, key: str, engine: str) -> str | None:
    """Why ``outcome`` is no result of the run ``key`` (None when it is one)."""
    if isinstance(outcome, BaseException):
        if isinstance(outcome, RunError):
            return str(outcome)
        return f"{type(outcome).__name__}: {outcome}"
    try:
        meta = entry_meta(outcome)
    except ValueError as e:
        return str(e)
    if meta.get("engine") != engine:
        return (
            f"the worker's aqmlab build (engine {meta.get('engine')}) is not this one's ({engine}): "
            "install the same aqmlab on every worker"
        )
    if meta.get("key") != key:
        return f"the worker returned run {meta.get('key')} for {key}"
    return None


class StoredResults(Mapping):
    """{key: result} read from a store on each access, one at a time: what a
    caller that walks every result holds is one result, not all of them."""

    def __init__(self, store: Store, keys: Iterable[str]) -> None:
        self.store = store
        self._keys = list(dict.fromkeys(keys))

    def __getitem__(self, key: str):
        return self.store.load(key)

    def __iter__(self):
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)
