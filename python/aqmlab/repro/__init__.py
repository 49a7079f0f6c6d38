"""Paper reproductions: ``aqmlab repro ID`` and ``aqmlab.repro("ID")``.

Each experiment (a figure or table of a seed paper) runs its simulations over
several seeds, compares our numbers with the paper's, each with a stated tolerance,
and writes a CSV table and a PNG figure. ``REPRODUCTION.md`` at the repository root
records what the last full run gave and why any row misses.

    >>> import aqmlab
    >>> table = aqmlab.repro("choke-fig3")            # doctest: +SKIP
    >>> table[["quantity", "paper", "ours", "tolerance", "pass"]]   # doctest: +SKIP

``aqmlab.repro`` is the function :func:`repro` of this package; the package's other
names are imported from it: ``from aqmlab.repro import EXPERIMENTS, experiments``.
:data:`PAPERS` lists the reproduced papers (each a module with its
``EXPERIMENTS``), :data:`EXPERIMENTS` all their experiments by id. Both live in
:mod:`aqmlab.repro.papers` and load on first use, so that ``import aqmlab`` (which
binds the function) loads no paper's module.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.repro._core import Experiment

__all__ = [
    "EXPERIMENTS",
    "PAPERS",
    "Check",
    "Experiment",
    "Point",
    "RunStats",
    "experiments",
    "repro",
    "resolve",
]

#: Where the names this package offers without loading them at import live.
_LAZY = {
    "EXPERIMENTS": "aqmlab.repro.papers",
    "PAPERS": "aqmlab.repro.papers",
    "Check": "aqmlab.repro._core",
    "Experiment": "aqmlab.repro._core",
    "Point": "aqmlab.repro._core",
    "RunStats": "aqmlab.repro._core",
}


def __getattr__(name: str):
    # PEP 562: the papers' modules load on first use of these names (a plain
    # run imports aqmlab, hence this package, but needs no experiment).
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'aqmlab.repro' has no attribute {name!r}")


#: Papers whose experiments are planned but not yet reproduced: id -> what they are.
NOT_YET: dict[str, str] = {}


def experiments():
    """The experiments as a DataFrame: id, paper, title, source, default seeds, points."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "id": e.id,
                "paper": e.paper,
                "title": e.title,
                "source": e.source,
                "scenarios": ", ".join(e.scenarios),
                "seeds": e.seeds,
            }
            for e in _experiments().values()
        ]
    ).set_index("id")


def resolve(ids: str | Sequence[str]) -> list[Experiment]:
    """Experiments from ids; ``"all"`` is every one, a paper name (``"choke"``) all
    of that paper's. Unknown ids raise ``ValueError``."""
    everything = _experiments()
    names = [ids] if isinstance(ids, str) else list(ids)
    if not names:
        raise ValueError("no experiment given (see `aqmlab repro --list`)")
    chosen: list[Experiment] = []
    for name in names:
        if name == "all":
            found = list(everything.values())
        elif name in everything:
            found = [everything[name]]
        else:
            found = [e for e in everything.values() if e.paper == name]
        if not found:
            known = ", ".join(everything)
            raise ValueError(f'no experiment "{name}" (known: {known}, or "all")')
        chosen.extend(e for e in found if e not in chosen)
    return chosen


def repro(
    ids: str | Sequence[str] = "all",
    *,
    out: str | Path | None = None,
    seeds: int | None = None,
    jobs: int | None = None,
    duration: str | None = None,
    progress: bool = False,
    cache: bool = True,
    fmt: str = "parquet",
    client=None,
    fail_fast: bool = False,
    peers: Sequence[str | Path] = (),
) -> pd.DataFrame:
    """Runs experiments and returns their checks, one row each: ``experiment``,
    ``quantity``, ``source`` (the figure or table), ``paper`` (as the paper states
    it) and ``paper_value``, ``ours`` (mean over seeds) and ``ours_sd``, the
    accepted band ``lo``..``hi`` and its ``tolerance``, ``verdict`` (PASS, MISS,
    or OPEN when our value is only bounded and the bounds straddle the band) and
    ``pass``.

    ``out``: a folder for the tables ``ID`` and ``ID-runs`` (Parquet, or CSV with
    ``fmt="csv"``), ``ID.png`` and the run cache (``out/cache/``); ``None`` writes
    nothing and caches nothing. ``seeds``: seeds
    per point (each experiment has its default). ``jobs``: worker processes (all
    cores by default). ``duration`` (e.g. ``"20s"``) shortens every run for a
    quick look, with a warm-up of a fifth of it; the paper's numbers are for the
    full runs. ``client``: a ``dask.distributed`` Client, or a scheduler's address
    (``"tcp://host:8786"``), to run on that cluster instead of local processes
    (``jobs`` is then the cluster's business). A run that fails does not stop the
    others (each is cached as it finishes); the checks need every run, so then
    ``RuntimeError`` names the failed ones, and a second call runs only those.
    ``fail_fast`` stops at the first failure instead. ``peers``: JSON files of
    another simulator's values of the checks on the same scenarios (as
    ``bench/vs_ns2.py repro`` writes for ns-2.35); each adds a column
    ``peer:LABEL``, empty where that simulator has no value, which the text
    tables show beside ours.

    ``table.attrs`` holds ``simulated`` and ``cached``: how many runs were
    simulated and how many came from the cache.
    """
    import pandas as pd

    from aqmlab._run import check_flag
    from aqmlab.repro._core import (
        evaluate,
        load_peer,
        plan,
        run_all,
        run_key,
        with_peer,
        write_outputs,
    )

    for flag, name in [(progress, "progress"), (cache, "cache"), (fail_fast, "fail_fast")]:
        check_flag(flag, name)
    chosen = resolve(ids)
    from aqmlab._sweep import MAX_RUNS

    if seeds is not None and (
        isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= MAX_RUNS
    ):
        raise ValueError(f"seeds must be an integer from 1 to {MAX_RUNS:,}, got {seeds!r}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    if jobs is not None and client is not None:
        raise ValueError("jobs sets the local pool's size; on a Dask cluster its workers run the runs")
    from aqmlab._io import FORMATS

    if fmt not in FORMATS:
        raise ValueError(f"fmt = {fmt!r} must be one of {', '.join(FORMATS)}")
    loaded = [load_peer(p) for p in peers]
    out_dir = Path(out) if out is not None else None
    plans = {e.id: plan(e, seeds, duration) for e in chosen}
    wanted = [(p.scenario, s) for planned in plans.values() for p, s in planned]
    cache_dir = out_dir / "cache" if (out_dir is not None and cache) else None
    labels = {
        run_key(p.scenario, s): f"{eid} {_label_text(p.label)}"
        for eid, planned in plans.items()
        for p, s in planned
    }
    results, stats, failures = run_all(
        wanted,
        cache_dir,
        jobs=jobs,
        client=client,
        progress=progress,
        fail_fast=fail_fast,
        describe=lambda scenario, seed: labels.get(run_key(scenario, seed), ""),
    )
    if failures:
        listed = "; ".join(str(f) for f in failures[:5]) + ("; ..." if len(failures) > 5 else "")
        raise RuntimeError(
            f"{len(failures)} of {len(results)} runs failed ({listed}); the others are cached"
            + (", so running again runs only these" if cache_dir is not None else "")
        )
    tables = []
    for e in chosen:
        runs, table = evaluate(e, plans[e.id], results)
        for peer in loaded:
            table = with_peer(table, peer)
        if out_dir is not None:
            write_outputs(e, runs, table, out_dir, fmt)
        tables.append(table)
    table = pd.concat(tables, ignore_index=True)
    table.attrs.update(simulated=stats.simulated, cached=stats.cached, seconds=stats.seconds)
    return table


def _experiments() -> dict[str, Experiment]:
    from aqmlab.repro.papers import EXPERIMENTS

    return EXPERIMENTS


def _label_text(label) -> str:
    return " ".join(f"{k}={v}" for k, v in label.items())
