"""Batches of short runs per Dask task: sized from run times, each run stored
on its own, the same tables as the local pool, and a stopped sweep resuming
with the runs it lacks."""

from __future__ import annotations

import pytest

import aqmlab
from aqmlab import _runner
from aqmlab._run import scenario_table
from aqmlab._runner import batch
from aqmlab._runner.store import Store

from conftest import CHOKE_FIG3


def entries(store: Store) -> set[str]:
    """The keys of the whole entries in ``store``."""
    return {p.stem for p in store.folder.glob("*.parquet") if store.has(p.stem)}


distributed = pytest.importorskip("distributed")

#: choke-fig3 for 10 ms: a run takes about a millisecond.
TINY = {"duration": "10ms", "warmup": "0s"}


def test_the_first_batches_hold_one_run_then_about_a_second_of_runs():
    sizer = batch.Sizer(total=10_000, workers=2, target=1.0)
    assert [sizer.next_size() for _ in range(3)] == [1, 1, 1]
    sizer.observe(runs=1, seconds=0.01)
    assert sizer.next_size() == 100
    # A slow run (an import, a cold cache) moves the mean by its weight only.
    sizer.observe(runs=1, seconds=1.0)
    assert 2 <= sizer.next_size() < 100
    # Near the end no batch leaves a worker idle: at most remaining / (2 workers).
    sizer = batch.Sizer(total=40, workers=2, target=1.0)
    sizer.next_size()
    sizer.observe(1, 0.001)
    assert sizer.next_size() == 10
    slow = batch.Sizer(total=10, workers=1, target=1.0)
    slow.next_size()
    slow.observe(1, 5.0)
    assert slow.next_size() == 1


def test_a_failing_run_is_reported_in_its_place_and_the_batch_goes_on():
    def work(scenario, seed):
        if seed == 2:
            raise ValueError("seed 2 is bad")
        return aqmlab.run(dict(scenario), seed=seed)

    scenario = scenario_table(str(CHOKE_FIG3)) | TINY
    out, seconds = batch.execute_batch(work, [("a", scenario, 1), ("b", scenario, 2), ("c", scenario, 3)])
    assert [k for k, _ in out] == ["a", "b", "c"] and seconds > 0
    assert isinstance(out[1][1], _runner.RunError) and "seed 2 is bad" in str(out[1][1])
    assert isinstance(out[0][1], bytes) and isinstance(out[2][1], bytes)


@pytest.fixture(scope="module")
def client():
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


def test_short_runs_go_in_batches_and_give_the_pools_tables(client, tmp_path, monkeypatch):
    submitted: list[int] = []
    submit = client.submit

    def counting_submit(fn, *args, **kwargs):
        if fn is batch.execute_batch:
            submitted.append(len(args[1]))
        return submit(fn, *args, **kwargs)

    monkeypatch.setattr(client, "submit", counting_submit)
    cache = tmp_path / "dask"
    on_dask = aqmlab.sweep(str(CHOKE_FIG3), seeds=400, client=client, cache_dir=cache, **TINY)
    assert sum(submitted) == 400 and len(on_dask.runs) == 400
    assert len(submitted) < 400 / 4, f"{len(submitted)} tasks for 400 runs"
    assert max(submitted) > 1
    # Every run is its own entry in the store ...
    assert len(entries(Store(cache))) == 400
    # ... and the tables are the local pool's.
    local = aqmlab.sweep(str(CHOKE_FIG3), seeds=400, jobs=2, **TINY)
    assert on_dask.runs.equals(local.runs)


def test_a_stopped_batched_sweep_resumes_with_the_runs_it_lacks(client, tmp_path):
    scenario = scenario_table(str(CHOKE_FIG3)) | TINY
    runs = [(scenario, seed) for seed in range(1, 201)]
    store = Store(tmp_path / "cache")

    def work(scenario, seed):
        if seed == 150:
            raise RuntimeError("stop here")
        return aqmlab.run(dict(scenario), seed=seed)

    with pytest.raises(_runner.RunFailed):
        _runner.run_all(runs, store, client=client, work=work, fail_fast=True)
    kept = len(entries(store))
    assert 0 < kept < 200
    keys, stats, failures = _runner.run_all(runs, store, client=client)
    assert not failures and stats.cached == kept and stats.simulated == 200 - kept
    assert set(keys) == entries(store) and len(keys) == 200
