"""The local executor: a process pool on this machine (the default).

One worker process per core (or ``jobs``); with one, the runs go in this process,
one after the other (no pool to start, and a debugger or a monkeypatch reaches
them). Ctrl-C or a stop (``--fail-fast``) ends the workers at once rather than
waiting for their runs; a worker ends itself when its parent is gone, so a sweep
killed with SIGKILL leaves no process behind.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from aqmlab._runner.work import Work, execute

#: Runs in flight per worker: enough that a worker never waits for the parent.
_PER_WORKER = 4
#: How often a worker looks whether the process that started it is still there.
_PARENT_POLL_SECONDS = 0.5


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
        pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init)
        finished_cleanly = False
        todo = iter(runs)
        pending: dict = {}

        def submit_next() -> None:
            item = next(todo, None)
            if item is not None:
                key, scenario, seed = item
                pending[pool.submit(execute, work, key, scenario, seed)] = key

        try:
            # A window of runs in flight, not all of them: a submitted run costs the
            # parent a few kilobytes (its future and work item) until it is done.
            for _ in range(_PER_WORKER * workers):
                submit_next()
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    key = pending.pop(fut)
                    submit_next()
                    error = fut.exception()
                    if isinstance(error, BrokenProcessPool):
                        error = RuntimeError(f"a worker process died (killed, or out of memory): {error}")
                    yield key, fut.result() if error is None else error
            finished_cleanly = True
        finally:
            # Ctrl-C, a stop, or a failed write: end the runs still going now,
            # rather than wait for them (what leaving a `with` block would do).
            if finished_cleanly:
                pool.shutdown()
            else:
                _stop(pool)


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
