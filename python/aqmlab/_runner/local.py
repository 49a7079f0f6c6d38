"""The local executor: a process pool on this machine (the default).

One worker process per core (or ``jobs``); with one, the runs go in this process,
one after the other (no pool to start, and a debugger or a monkeypatch reaches
them). Ctrl-C or a stop (``--fail-fast``) ends the workers at once rather than
waiting for their runs; a worker ends itself when its parent is gone, so a sweep
killed with SIGKILL leaves no process behind. A worker that dies (killed, out of
memory) breaks the pool: the runs it had in flight go to a new one, and a run in
flight at two deaths fails while the others go on.
"""

from __future__ import annotations

import os
import time
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from aqmlab._runner.work import Work, execute

#: Runs in flight per worker: enough that a worker never waits for the parent.
_PER_WORKER = 4
#: Worker deaths a run may be in flight for before it is taken to be their cause.
_CRASHES = 2
#: How often a worker looks whether the process that started it is still there.
_PARENT_POLL_SECONDS = 0.5
#: How often the parent looks for a worker that died unnoticed by the pool.
_DEATH_POLL_SECONDS = 5.0


class LocalPool:
    """Runs on ``jobs`` worker processes (default: one per core)."""

    name = "local"

    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = jobs

    def describe(self) -> str:
        return f"local pool of {self.jobs or os.cpu_count() or 1}"

    def results(
        self, work: Work, runs: Sequence[tuple[str, Any, int]]
    ) -> Iterator[tuple[str, bytes | BaseException]]:
        """(key, entry bytes or the run's exception), as runs finish. Closing the
        generator early stops the runs still going."""
        workers = max(1, min(self.jobs or os.cpu_count() or 1, len(runs)))
        if workers == 1:
            for key, scenario, seed in runs:
                try:
                    yield key, execute(work, key, scenario, seed)
                except Exception as e:
                    yield key, e
            return
        yield from self._on_pool(work, runs, workers)

    def _on_pool(
        self, work: Work, runs: Sequence[tuple[str, Any, int]], workers: int
    ) -> Iterator[tuple[str, bytes | BaseException]]:
        # A window of runs in flight, not all of them: a submitted run costs the
        # parent a few kilobytes (its future and work item) until it is done.
        window = _PER_WORKER * workers
        todo = iter(runs)
        again: deque[tuple[str, Any, int]] = deque()  # runs a dead worker took with it
        crashes: Counter[str] = Counter()
        pending: dict[Future, tuple[str, Any, int]] = {}
        pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init)

        def fill() -> None:
            while len(pending) < window:
                item = again.popleft() if again else next(todo, None)
                if item is None:
                    return
                try:
                    pending[pool.submit(execute, work, *item)] = item
                except BrokenProcessPool:  # seen through the futures below
                    again.appendleft(item)
                    return

        finished_cleanly = False
        try:
            fill()
            while pending:
                done, _ = wait(pending, timeout=_DEATH_POLL_SECONDS, return_when=FIRST_COMPLETED)
                if not done and not _a_worker_died(pool):
                    continue
                if not done or any(isinstance(f.exception(), BrokenProcessPool) for f in done):
                    # A worker died (killed, out of memory): the pool fails every run
                    # in flight. Those runs go to a new pool; one that was in flight
                    # in _CRASHES deaths is taken to be the cause and fails. (When
                    # the parent noticed the death, the pool will not: no waiting.)
                    wait(pending, timeout=30 if done else 0)
                    done = set(pending)
                    _stop(pool)
                    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init)
                for fut in done:
                    item = pending.pop(fut)
                    key = item[0]
                    error = fut.exception() if fut.done() else BrokenProcessPool("no answer")
                    if isinstance(error, BrokenProcessPool):
                        crashes[key] += 1
                        if crashes[key] < _CRASHES:
                            again.append(item)
                            continue
                        error = RuntimeError(
                            f"its worker process died {_CRASHES} times (killed, or out of memory)"
                        )
                    fill()
                    yield key, fut.result() if error is None else error
                fill()
            finished_cleanly = True
        finally:
            # Ctrl-C, a stop, or a failed write: end the runs still going now,
            # rather than wait for them (what leaving a `with` block would do).
            if finished_cleanly:
                pool.shutdown()
            else:
                _stop(pool)


def _a_worker_died(pool: ProcessPoolExecutor) -> bool:
    """Whether a worker process of ``pool`` has ended. The pool itself notices
    (its futures fail with ``BrokenProcessPool``), except when the worker died
    holding one of the pool's queue locks: then every run waits for ever, and the
    parent must notice instead."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    return any(p.exitcode is not None for p in procs)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancels what has not started and ends the worker processes at once."""
    # The executor has no public way to end a running task; its processes are
    # in `_processes` ({pid: Process}) in every CPython since 3.2.
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        p.kill()
    for p in procs:
        p.join(timeout=5)


def _worker_init() -> None:
    """Runs first in every worker process. Ctrl-C reaches the whole process group;
    the parent alone handles it (it stops the workers), so a worker ignores it
    instead of printing a traceback of its own. And a worker must not outlive its
    parent: killed with SIGKILL or SIGTERM, the parent cannot stop it, and it would
    wait for work forever; so a thread ends the worker when its parent is gone
    (the worker is then re-parented, and its parent's pid changes)."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="aqmlab-parent-watch", daemon=True).start()
