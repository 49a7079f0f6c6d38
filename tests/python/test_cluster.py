"""Sweeps on a Dask cluster (a ``LocalCluster`` of two workers) and on the local
pool: the same tables byte for byte, every run exactly once when a worker is
killed mid-sweep, resumption after SIGKILL, failed runs, the run store's files."""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import aqmlab
from aqmlab import _runner
from aqmlab._runner import RunFailed, Store

from conftest import CHOKE_FIG3, run_cli

distributed = pytest.importorskip("distributed")

GRID = {"qdisc.kind": ["red", "choke"]}
SEEDS = 3
#: choke-fig3 shortened: a run takes milliseconds.
QUICK = {"duration": "20s", "warmup": "2s"}
#: ... and long enough (a tenth of a second or more) to be caught mid-run, in
#: sweeps of more runs than two workers finish before a kill lands. 300 s took
#: 14 ms on the engine of 2026-12: a sweep could end before its kill.
SLOW = {"duration": "3000s", "warmup": "2s"}
KILL_SEEDS = 8
KILL_RUNS = len(GRID["qdisc.kind"]) * KILL_SEEDS
TABLES = ("runs.parquet", "groups.parquet", "flows.parquet", "links.parquet")


@pytest.fixture(scope="module")
def client():
    """Two single-threaded workers in this process (the engine runs without the
    GIL, so they do run two at a time), started once for the module."""
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            protocol="tcp",
            host="127.0.0.1",
            dashboard_address=":0",
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in TABLES}


@pytest.fixture(scope="module")
def expected(tmp_path_factory) -> dict[str, bytes]:
    """The tables of an uninterrupted sweep of the kill tests' runs, without a cache."""
    out = tmp_path_factory.mktemp("reference")
    aqmlab.sweep(str(CHOKE_FIG3), GRID, seeds=KILL_SEEDS, jobs=2, **SLOW).write(out)
    return files(out)


def stored(cache: Path) -> int:
    """Entries in a run store (not the temporary files of a killed writer)."""
    return len([p for p in cache.glob("*.parquet") if not p.name.startswith(".")])


def no_duplicates(out: Path) -> None:
    import pandas as pd

    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == KILL_RUNS
    assert not runs.duplicated(["qdisc.kind", "seed"]).any()


# ---- the same tables, whichever executor ---------------------------------------------------


def test_dask_tables_and_store_equal_the_local_pools_byte_for_byte(client, tmp_path):
    local = aqmlab.sweep(str(CHOKE_FIG3), GRID, seeds=SEEDS, jobs=2, cache_dir=tmp_path / "lc", **QUICK)
    dask = aqmlab.sweep(str(CHOKE_FIG3), GRID, seeds=SEEDS, client=client, cache_dir=tmp_path / "dc", **QUICK)
    assert (dask.simulated, dask.cached, dask.failed) == (6, 0, [])
    local.write(tmp_path / "l")
    dask.write(tmp_path / "d")
    assert files(tmp_path / "l") == files(tmp_path / "d")
    # The same runs in both stores, equal (all but each run's wall_seconds).
    names = sorted(p.name for p in (tmp_path / "lc").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "dc").iterdir()) and len(names) == 6
    assert list(local.runs_done) == list(dask.runs_done)
    # A second sweep on the cluster finds every run in the store.
    again = aqmlab.sweep(
        str(CHOKE_FIG3), GRID, seeds=SEEDS, client=client, cache_dir=tmp_path / "lc", **QUICK
    )
    assert (again.simulated, again.cached) == (0, 6)


def test_the_cli_runs_on_a_scheduler_given_its_address(client, tmp_path):
    address = client.cluster.scheduler_address  # tcp://, not the in-process address
    args = ["sweep", str(CHOKE_FIG3), "--set", "qdisc.kind=red,choke", "--seeds", str(SEEDS)]
    args += ["--duration", QUICK["duration"], "--warmup", QUICK["warmup"], "-q"]
    on_dask = run_cli(*args, "--scheduler", address, "--out", str(tmp_path / "d"))
    assert on_dask.returncode == 0, on_dask.stderr
    local = run_cli(*args, "-j", "2", "--out", str(tmp_path / "l"))
    assert local.returncode == 0, local.stderr
    assert files(tmp_path / "d") == files(tmp_path / "l")
    both = run_cli(*args, "-j", "2", "--scheduler", address, "--out", str(tmp_path / "x"))
    assert both.returncode == 2 and "cannot be used with" in both.stderr


def test_a_killed_worker_still_gives_every_run_exactly_once(expected, tmp_path):
    # Worker processes this time, so that one can be killed: the scheduler runs
    # its task again elsewhere, and the parent takes each run once.
    cache = tmp_path / "cache"
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        pids = list(c.run(os.getpid).values())
        outcome: dict = {}

        def go() -> None:
            try:
                outcome["sweep"] = aqmlab.sweep(
                    str(CHOKE_FIG3), GRID, seeds=KILL_SEEDS, client=c, cache_dir=cache, **SLOW
                )
            except BaseException as e:  # reported below, in the test's thread
                outcome["error"] = e

        t = threading.Thread(target=go)
        t.start()
        deadline = time.monotonic() + 120
        while not stored(cache) and time.monotonic() < deadline:
            time.sleep(0.02)
        stored_at_kill = stored(cache)
        os.kill(pids[0], signal.SIGKILL)
        t.join(timeout=300)
        assert not t.is_alive()
    assert "error" not in outcome, outcome.get("error")
    sw = outcome["sweep"]
    assert stored_at_kill < KILL_RUNS, "the sweep ended before the kill: the test tested nothing"
    assert (sw.simulated, sw.failed) == (KILL_RUNS, [])
    sw.write(tmp_path / "out")
    no_duplicates(tmp_path / "out")
    assert files(tmp_path / "out") == expected


def test_a_killed_pool_worker_costs_no_run(expected, tmp_path):
    # The local pool breaks when a worker dies: the runs it had in flight go to a
    # new pool (a run fails only if it was in flight at two deaths).
    import multiprocessing

    cache = tmp_path / "cache"
    outcome: dict = {}

    def go() -> None:
        try:
            outcome["sweep"] = aqmlab.sweep(
                str(CHOKE_FIG3), GRID, seeds=KILL_SEEDS, jobs=2, cache_dir=cache, **SLOW
            )
        except BaseException as e:  # reported below, in the test's thread
            outcome["error"] = e

    t = threading.Thread(target=go)
    t.start()
    deadline = time.monotonic() + 120
    while not stored(cache) and time.monotonic() < deadline:
        time.sleep(0.01)
    stored_at_kill = stored(cache)
    workers = multiprocessing.active_children()
    assert workers
    os.kill(workers[0].pid, signal.SIGKILL)
    t.join(timeout=300)
    assert not t.is_alive()
    assert "error" not in outcome, outcome.get("error")
    sw = outcome["sweep"]
    assert stored_at_kill < KILL_RUNS, "the sweep ended before the kill: the test tested nothing"
    assert (sw.simulated, sw.failed) == (KILL_RUNS, [])
    sw.write(tmp_path / "out")
    no_duplicates(tmp_path / "out")
    assert files(tmp_path / "out") == expected


def broken(pool) -> bool:
    """Whether ``pool`` knows itself broken (a submit is refused)."""
    from concurrent.futures import TimeoutError as NoAnswer
    from concurrent.futures.process import BrokenProcessPool

    try:
        pool.submit(os.getpid).result(timeout=1)
    except BrokenProcessPool:
        return True
    except NoAnswer:
        return False
    return False


@pytest.mark.skipif(os.name != "posix", reason="sends SIGKILL")
def test_the_parent_sees_a_dead_worker_the_pool_may_miss():
    # A worker killed holding one of the pool's queue locks leaves every run
    # waiting; the parent then looks at the workers itself.
    from concurrent.futures import ProcessPoolExecutor

    from aqmlab._runner.local import _a_worker_died, _stop

    pool = ProcessPoolExecutor(max_workers=2)
    try:
        pids = {pool.submit(os.getpid).result() for _ in range(8)}
        assert not _a_worker_died(pool)
        os.kill(next(iter(pids)), signal.SIGKILL)
        # Seen by the parent, unless the pool saw it first and let its workers go.
        deadline = time.monotonic() + 10
        while not _a_worker_died(pool) and not broken(pool) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _a_worker_died(pool) or broken(pool)
    finally:
        _stop(pool)


# ---- SIGKILL and resume --------------------------------------------------------------------

KILLED = """
import sys
import aqmlab
client = None
if sys.argv[2] == "dask":
    import distributed
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    client = distributed.Client(cluster)
aqmlab.sweep(
    sys.argv[1], {grid!r}, seeds={seeds}, cache_dir=sys.argv[3],
    jobs=None if client else 2, client=client, **{timing!r},
)
print("finished", flush=True)
"""


@pytest.mark.skipif(os.name != "posix", reason="sends SIGKILL")
@pytest.mark.parametrize("executor", ["local", "dask"])
def test_a_sweep_killed_with_sigkill_resumes_with_the_missing_runs(executor, client, expected, tmp_path):
    cache = tmp_path / "cache"
    script = KILLED.format(grid=GRID, seeds=KILL_SEEDS, timing=SLOW)
    rng = random.Random(f"{executor}-kill")
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(CHOKE_FIG3), executor, str(cache)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not stored(cache) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.2))  # a random moment after the first run is stored
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert proc.stdout.read() == "", "the sweep finished before the kill"
    n = stored(cache)
    assert 1 <= n < KILL_RUNS
    kwargs = {"client": client} if executor == "dask" else {"jobs": 2}
    resumed = aqmlab.sweep(str(CHOKE_FIG3), GRID, seeds=KILL_SEEDS, cache_dir=cache, **kwargs, **SLOW)
    assert (resumed.cached, resumed.simulated) == (n, KILL_RUNS - n)
    resumed.write(tmp_path / "out")
    no_duplicates(tmp_path / "out")
    assert files(tmp_path / "out") == expected


# ---- failed runs ----------------------------------------------------------------------------


def fails_on_seed_2(scenario, seed):
    """A work function whose runs of seed 2 fail (at run time, past every check)."""
    if seed == 2:
        raise RuntimeError("the engine gave up")
    from aqmlab._runner.work import simulate

    return simulate(scenario, seed)


@pytest.mark.parametrize("where", ["local", "dask"])
def test_a_failed_run_is_reported_with_its_seed_and_the_others_go_on(where, client, tmp_path):
    scenario = aqmlab._run.scenario_table(str(CHOKE_FIG3)) | QUICK
    runs = [(scenario, seed) for seed in (1, 2, 3)]
    store = Store(tmp_path / "cache")
    kwargs = {"client": client} if where == "dask" else {"jobs": 1}
    keys, stats, failures = _runner.run_all(
        runs, store, work=fails_on_seed_2, describe=lambda s, seed: "choke-fig3", **kwargs
    )
    assert (stats.simulated, stats.failed) == (2, 1)
    [failure] = failures
    assert failure.seed == 2 and failure.scenario == scenario
    assert str(failure) == "choke-fig3 seed 2: RuntimeError: the engine gave up"
    assert [store.has(k) for k in keys] == [True, False, True]
    # Stopping at the first failure instead: it raises, what finished is stored.
    with pytest.raises(RunFailed, match="seed 2: RuntimeError: the engine gave up"):
        _runner.run_all(runs, Store(tmp_path / "ff"), work=fails_on_seed_2, fail_fast=True, **kwargs)


def test_the_sweep_leaves_failed_runs_out_and_the_cli_exits_1(monkeypatch, tmp_path):
    from aqmlab._runner import work

    # In this process (jobs=1), every run goes through the patched simulate.
    monkeypatch.setattr(work, "simulate", _failing(work.simulate))
    with pytest.warns(RuntimeWarning, match=r"2 of 4 runs failed .*: qdisc.kind=red seed 2: RuntimeError"):
        sw = aqmlab.sweep(str(CHOKE_FIG3), GRID, seeds=[1, 2], jobs=1, **QUICK)
    assert [(f.where, f.seed) for f in sw.failed] == [("qdisc.kind=red", 2), ("qdisc.kind=choke", 2)]
    assert len(sw.runs) == 2 and set(sw.runs["seed"]) == {1}
    with pytest.raises(RunFailed, match=r"qdisc\.kind=red seed 2"):
        aqmlab.sweep(str(CHOKE_FIG3), GRID, seeds=[1, 2], jobs=1, fail_fast=True, **QUICK)


def _failing(real):
    def simulate(scenario, seed):
        if seed == 2:
            raise RuntimeError("the engine gave up")
        return real(scenario, seed)

    return simulate


# ---- files and progress ----------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_outputs_and_store_entries_get_the_users_umask(tmp_path):
    old = os.umask(0o027)
    try:
        sw = aqmlab.sweep(str(CHOKE_FIG3), GRID, seeds=1, jobs=1, cache_dir=tmp_path / "cache", **QUICK)
        written = sw.write(tmp_path / "out")
    finally:
        os.umask(old)
    for path in [*written, *(tmp_path / "cache").iterdir()]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o640, path


@pytest.mark.skipif(os.name != "posix", reason="tells a dead process by os.kill(pid, 0)")
def test_opening_a_cache_removes_what_killed_writers_on_this_host_left(tmp_path):
    import socket

    from aqmlab._io import atomic_file

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    host = socket.gethostname()
    cache = tmp_path / "cache"
    cache.mkdir()
    killed = cache / f".k1.partial-{host}-{int(dead.stdout)}.parquet"
    elsewhere = cache / ".k2.partial-another-host-1.parquet"  # a shared file system's
    unnamed = cache / ".k3.partial-1.parquet"  # no host: not known to be dead
    for f in (killed, elsewhere, unnamed):
        f.write_bytes(b"half an entry")
    with atomic_file(cache / "k4.parquet") as live:  # a writer still at work
        live.write(b"x")
        Store(cache)
        assert Path(live.name).exists()
    assert not killed.exists() and elsewhere.exists() and unnamed.exists()
    assert (cache / "k4.parquet").read_bytes() == b"x"


def test_progress_counts_done_cached_and_failed_on_stderr(tmp_path, monkeypatch, capsys):
    # The bar is drawn on a terminal only (test_progress: never into a pipe):
    # here stderr is taken for one.
    from aqmlab._runner import progress

    monkeypatch.setattr(progress, "on_screen", lambda: True)
    grid = {"qdisc.kind": ["red", "choke"]}
    aqmlab.sweep(str(CHOKE_FIG3), grid, seeds=2, jobs=1, cache_dir=tmp_path, progress=True, **QUICK)
    first = capsys.readouterr().err
    assert "4/4" in first and "cached=0 failed=0" in first
    aqmlab.sweep(str(CHOKE_FIG3), grid, seeds=3, jobs=1, cache_dir=tmp_path, progress=True, **QUICK)
    more = capsys.readouterr().err
    assert "6/6" in more and "cached=4 failed=0" in more


def test_repro_on_the_cluster_equals_repro_on_the_pool(client, tmp_path):
    args = {"seeds": 1, "duration": "10s"}
    local = aqmlab.repro("choke-fig3", out=tmp_path / "l", jobs=2, **args)
    dask = aqmlab.repro("choke-fig3", out=tmp_path / "d", client=client, **args)
    import pandas as pd

    pd.testing.assert_frame_equal(local, dask)
    assert dask.attrs["simulated"] == 3
    for name in ("choke-fig3.parquet", "choke-fig3-runs.parquet"):
        assert (tmp_path / "l" / name).read_bytes() == (tmp_path / "d" / name).read_bytes()


def test_a_sweep_holds_keys_not_results(tmp_path):
    # What keeps the parent's memory flat in the number of runs: every result is
    # in the run store, read back when looked at, and none stays alive.
    import gc

    from aqmlab.result import Result

    sw = aqmlab.sweep(str(CHOKE_FIG3), GRID, seeds=SEEDS, jobs=1, cache_dir=tmp_path, **QUICK)
    sw.write(tmp_path / "out")
    assert len(sw.runs) == 6 and len(sw.flows) == 6 * 33
    gc.collect()
    assert [o for o in gc.get_objects() if isinstance(o, Result)] == []
    label, seed, result = sw.runs_done[0]  # read from the store now
    assert (label, seed, isinstance(result, Result)) == ({"qdisc.kind": "red"}, 1, True)


FAILING_CLI = """
import sys
from aqmlab._runner import work

real = work.simulate


def simulate(scenario, seed):
    if seed == 2:
        raise RuntimeError("the engine gave up")
    return real(scenario, seed)


work.simulate = simulate  # -j 1: the runs go in this process
from aqmlab._cli import main

sys.exit(main(sys.argv))
"""


def test_the_cli_reports_a_failed_run_and_exits_1_or_stops_with_fail_fast(tmp_path):
    import json

    args = ["sweep", str(CHOKE_FIG3), "--set", "qdisc.kind=red,choke", "--seeds", "3", "-j", "1", "-q"]
    args += ["--duration", QUICK["duration"], "--warmup", QUICK["warmup"], "--out", str(tmp_path)]
    proc = subprocess.run([sys.executable, "-c", FAILING_CLI, *args], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines() == [
        "error: run failed: qdisc.kind=red seed 2: RuntimeError: the engine gave up",
        "error: run failed: qdisc.kind=choke seed 2: RuntimeError: the engine gave up",
    ]
    assert "4 runs (4 simulated, 0 from cache, 2 failed)" in proc.stdout
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [(f["where"], f["seed"]) for f in summary["failed"]] == [
        ("qdisc.kind=red", 2),
        ("qdisc.kind=choke", 2),
    ]
    # Again: the four good runs come from the cache; --fail-fast stops at the first failure.
    proc = subprocess.run(
        [sys.executable, "-c", FAILING_CLI, *args, "--fail-fast"], capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        "error: run failed: qdisc.kind=red seed 2: RuntimeError: the engine gave up;"
    )
    assert "--fail-fast" in proc.stderr


def test_a_scheduler_that_is_no_address_is_a_usage_error(tmp_path):
    proc = run_cli("sweep", str(CHOKE_FIG3), "--scheduler", "nonsense", "--out", str(tmp_path), "-q")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: the Dask scheduler at 'nonsense' (--scheduler): "), proc.stderr
    assert len(proc.stderr.splitlines()) == 1
