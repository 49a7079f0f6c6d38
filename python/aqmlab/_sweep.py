"""``aqmlab.sweep``: one scenario over a grid of parameter values and seeds.

A sweep is the cartesian product of the values given for each key, each point run
once per seed, the runs spread over worker processes (one per core by default) or
the workers of a Dask cluster (``client=``), through :mod:`aqmlab._runner`. Runs
are independent and each is deterministic, so the tables do not depend on where
they ran, how many workers ran them or in which order they finished. The result,
:class:`~aqmlab._sweep_result.Sweep`, reads its runs back from the run store.

Keys are dotted paths into the scenario, as its TOML spells them::

    qdisc.kind                  the bottleneck's queueing discipline
    qdisc.max_th                one of its parameters
    flows.udp.rate              the key `rate` of the flow group named "udp"
    topology.bottleneck.rate    a key of an inline table

A path step into a list (``flows``) names an element by its ``name`` (or its
index). A missing key is added, so a path can set a parameter the file leaves at
its default; an unknown key is the scenario's error, reported with the point it
came from before any run starts. Setting ``qdisc.kind`` to another kind keeps the
table's keys that kind takes and drops the others, so ``qdisc.kind=red,fq_codel``
over a RED scenario runs FQ-CoDel with the scenario's ``limit`` and its own
defaults (RED's ``min_th`` and ``max_th`` go); to set each kind's parameters, give
whole tables (``{"qdisc": [{"kind": "red", ...}, {"kind": "sfb", ...}]}``).
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import numbers
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aqmlab._sweep_result import Sweep
from aqmlab._sweep_result import label_text as _label_text

__all__ = ["Sweep", "assign", "parse_assignment", "set_path", "sweep"]


# ---- the grid -----------------------------------------------------------------------


def _split_top_level(text: str) -> list[str]:
    """Splits ``text`` at commas that are not inside quotes, brackets or braces, so
    ``1Mbps,2Mbps`` is two values and ``{kind="red", limit=300}`` is one."""
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    start = 0
    for i, ch in enumerate(text):
        if quote is not None:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def parse_value(text: str) -> Any:
    """A TOML value (``300``, ``0.02``, ``true``, ``"red"``, ``{...}``), or the text
    itself when it is not one, so ``red`` and ``2Mbps`` need no quotes."""
    from aqmlab._run import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_assignment(text: str) -> tuple[str, list[Any]]:
    """``"qdisc.kind=red,choke"`` -> ``("qdisc.kind", ["red", "choke"])``: the form
    ``aqmlab sweep --set`` takes."""
    key, sep, values = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f'--set {text!r}: expected KEY=VALUE[,VALUE...], e.g. "qdisc.kind=red,choke"')
    parts = _split_top_level(values)
    if any(p == "" for p in parts):
        raise ValueError(f"--set {text!r}: empty value (values are separated by commas)")
    _check_key(key)
    return key, [parse_value(p) for p in parts]


def _check_key(key: str) -> list[str]:
    steps = key.split(".")
    if any(s == "" for s in steps):
        raise ValueError(f"sweep key {key!r} has an empty step (keys look like qdisc.kind or flows.udp.rate)")
    return steps


def set_path(scenario: Mapping[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A copy of ``scenario`` with the dotted ``key`` set to ``value`` (see
    :func:`assign`)."""
    return assign(scenario, {key: value})


def assign(scenario: Mapping[str, Any], sets: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``scenario`` with each dotted key of ``sets`` set to its value, by
    the rules of ``aqmlab run --set``, which the extension holds (one
    implementation for both): a step into a list names an entry by its ``name`` or
    its index, a missing key is added, and a new ``qdisc.kind`` keeps only the
    ``[qdisc]`` keys that kind takes, besides those ``sets`` gives."""
    from aqmlab import _aqmlab
    from aqmlab._run import to_json

    for key in sets:
        _check_key(key)
    # The values checked as a scenario's are (`to_json`), in the order given.
    pairs = list(json.loads(to_json(dict(sets))).items())
    return json.loads(_aqmlab.assign(to_json(scenario), json.dumps(pairs)))


def _point_error(message: str, label: Mapping[str, Any], scenario: object) -> str:
    """A sweep point's error, naming the point and the file it came from: the
    point is a dict the sweep made, whose errors would otherwise say ``<dict>``."""
    if not label:
        return message
    if not isinstance(scenario, Mapping) and message.startswith("<dict>: "):
        name = "the default scenario" if scenario is None else os.fsdecode(os.fspath(scenario))
        message = f"{name} with it: {message.removeprefix('<dict>: ')}"
    return f"sweep point {_describe(label)}: {message}"


def _beyond_toml(value: object) -> bool:
    """Whether ``value`` holds an integer a scenario (TOML) cannot: checked with the
    grid, so that the value is named under its key before any point is built."""
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):
        return not -(2**63) <= value < 2**63
    if isinstance(value, Mapping):
        return any(_beyond_toml(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_beyond_toml(v) for v in value)
    return False


def _grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    if not isinstance(grid, Mapping):
        raise ValueError(f"the sweep grid must be a dict of {{key: [values]}}, got {type(grid).__name__}")
    for key, values in grid.items():
        if not isinstance(key, str):
            raise ValueError(f"sweep grid key {key!r} is not a string (keys look like qdisc.kind)")
        _check_key(key)
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise ValueError(f"sweep grid[{key!r}] must be a list of values, got {values!r}")
        if len(list(values)) == 0:
            raise ValueError(f"sweep grid[{key!r}] is empty")
        for v in values:
            if _beyond_toml(v):
                raise ValueError(
                    f"sweep grid {key}: an integer too large in {_label_text(v)}: "
                    f"scenario integers are at most {2**63 - 1} (2^63 - 1)"
                )
        texts = [json.dumps(v, sort_keys=True, default=repr) for v in values]
        for i, t in enumerate(texts):
            if t in texts[:i]:
                raise ValueError(f"sweep grid[{key!r}] lists {_label_text(list(values)[i])} twice")
    keys = list(grid)
    points = math.prod(len(list(grid[k])) for k in keys)
    if points > MAX_RUNS:
        raise ValueError(f"the grid has {points:,} points; a sweep runs at most {MAX_RUNS:,}")
    return [dict(zip(keys, combo)) for combo in itertools.product(*(list(grid[k]) for k in keys))]


#: The most runs one sweep plans (points times seeds): each run is a whole
#: simulation, and the plan is held in memory.
MAX_RUNS = 1_000_000


def checked_seeds(seeds: int | Sequence[int]) -> list[int]:
    if isinstance(seeds, bool):
        raise ValueError(f"seeds must be a count or a list of seeds, got {seeds!r}")
    if isinstance(seeds, int):
        if not 1 <= seeds <= MAX_RUNS:
            raise ValueError(f"seeds = {seeds} must be between 1 and {MAX_RUNS:,} (the runs of one sweep)")
        return list(range(1, seeds + 1))
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise ValueError(f"seeds must be a count or a list of seeds, got {seeds!r}")
    out = list(itertools.islice(seeds, MAX_RUNS + 1))
    if len(out) > MAX_RUNS:
        raise ValueError(f"seeds: more than {MAX_RUNS:,} seeds (the runs of one sweep)")
    if not out:
        raise ValueError("seeds is an empty list")
    for s in out:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**64:
            raise ValueError(f"seed {s!r} must be an integer between 0 and 2**64 - 1")
    if len(set(out)) != len(out):
        raise ValueError(f"seeds {out} repeat a seed")
    return out


# ---- running -------------------------------------------------------------------------


def _scenario_table(scenario: Any) -> dict[str, Any]:
    from aqmlab._run import check_path_or_name, scenario_table

    if isinstance(scenario, Mapping):
        return copy.deepcopy(dict(scenario))
    return scenario_table(check_path_or_name(scenario))


def _describe(label: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={_label_text(v)}" for k, v in label.items())


def sweep(
    scenario: Any = None,
    grid: Mapping[str, Sequence[Any]] | None = None,
    *,
    seeds: int | Sequence[int] = 1,
    duration: str | None = None,
    warmup: str | None = None,
    jobs: int | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool = False,
    client: Any = None,
    fail_fast: bool = False,
    baseline: Mapping[str, Any] | None = None,
    precision: str | None = None,
    max_seeds: int = 100,
    emulate: bool = False,
) -> Sweep:
    """Runs ``scenario`` (a path, a built-in name, ``None`` for the default, or a
    dict) at every point of ``grid`` ({dotted key: [values]}) with every seed
    (``seeds``: a count, meaning 1..N, or a list), ``jobs`` runs at a time (default:
    one per core), and returns a :class:`Sweep`.

    ``client``: a ``dask.distributed`` Client, or a scheduler's address
    (``"tcp://host:8786"``): the runs go to that cluster's workers instead of local
    processes (``jobs`` is then the cluster's business; see ``docs/cluster.md``).

    ``duration`` and ``warmup`` replace the scenario's, as ``aqmlab run``'s
    ``--duration`` and ``--warmup`` do (and are checked the same way). With ``cache_dir``
    every finished run is stored there the moment it arrives, so a sweep that was
    killed (even with SIGKILL) resumes with only the missing runs, and a repeated
    one costs nothing; without, the runs are stored in a temporary folder that
    lives as long as the :class:`Sweep`. Either way no run's tables stay in memory.

    A run that fails is reported (``progress``) and left out: it is in
    :attr:`Sweep.failed` with its point, seed and error, and a ``RuntimeWarning``
    says how many; the other runs go on. ``fail_fast`` raises
    :class:`aqmlab._runner.RunFailed` at the first failure instead.

    Every point is checked before the first run starts; a bad one raises
    ``ValueError`` naming the point and what is wrong with it. So does a key whose
    values would all simulate the same thing (``seed``, ``name``, a ``[qdisc]``
    that no link of a graph uses). A key whose values then gave identical runs
    (a qdisc on links that never queue) is named in :attr:`Sweep.warnings` and
    as a ``RuntimeWarning``.

    Statistics: :attr:`Sweep.stats` has every point's mean, sd, seeds and 95%
    Student-t interval of each metric; with ``baseline`` ({key: value}, e.g.
    ``{"qdisc.kind": "red"}``) :attr:`Sweep.paired` has each point's differences
    against the baseline point seed by seed, with their intervals. ``precision``
    (``"METRIC=2%"`` or ``"METRIC=WIDTH"``) adds seeds to each point until the
    interval of METRIC's mean is that narrow, up to ``max_seeds``
    (:mod:`aqmlab._precision`); :attr:`Sweep.stopped` says where each stopped.

    ``emulate=True`` emulates every run (:func:`aqmlab.emulate`: real Linux TCP
    through the same qdiscs, in wall-clock time; needs root) instead of
    simulating it, one at a time on this machine (``jobs`` 1, no ``client``).
    Every point is first checked as ``aqmlab emulate`` checks a scenario. The
    runs are stored as any sweep's (under keys of their own: an emulated run
    never stands in for a simulated one), so an emulated sweep resumes; a run
    that did not keep time is a failed run, not a result.
    """
    from aqmlab import _aqmlab, _runner
    from aqmlab._run import check_duration, check_flag, to_json

    jobs = _checked_jobs(jobs, client, emulate)
    for flag, name in [(emulate, "emulate"), (progress, "progress"), (fail_fast, "fail_fast")]:
        check_flag(flag, name)
    duration = check_duration(duration, "duration")
    warmup = check_duration(warmup, "warmup")
    seed_list = checked_seeds(seeds)
    if baseline is not None and not isinstance(baseline, Mapping):
        raise ValueError(
            f"baseline must be a mapping {{key: value}}, e.g. {{'qdisc.kind': 'red'}}, "
            f"got {type(baseline).__name__} {baseline!r}"
        )
    if cache_dir is not None:
        from aqmlab._io import check_folder

        check_folder(cache_dir, "cache_dir", warn=lambda _: None)
    if not isinstance(scenario, Mapping):
        from aqmlab._run import check_path_or_name

        # The file itself first: its errors name the file and the line, which
        # a point (a dict made from it) cannot.
        _aqmlab.check_source(check_path_or_name(scenario), duration, warmup)
    base = _scenario_table(scenario)
    if duration is not None or warmup is not None:
        # Checked as `aqmlab run` checks its flags, then written into the scenario.
        _aqmlab.check_json(to_json(base), None, duration, warmup)
        if duration is not None:
            base["duration"] = duration
        if warmup is not None:
            base["warmup"] = warmup
    labels = _grid_points(grid or {})
    if len(labels) * len(seed_list) > MAX_RUNS:
        raise ValueError(
            f"{len(labels):,} points times {len(seed_list):,} seeds "
            f"is more than the {MAX_RUNS:,} runs of one sweep"
        )

    planned, simulated = _plan(scenario, base, labels, seed_list, emulate)
    _check_every_key_changes_something(grid or {}, labels, simulated, base)

    if baseline:
        _check_baseline(baseline, grid or {})
    store = _runner.Store(cache_dir)

    def execute(planned: list[tuple[dict[str, Any], dict[str, Any], int]]) -> Sweep:
        return _execute(
            grid or {}, store, planned, baseline, emulate,
            jobs=jobs, client=client, progress=progress, fail_fast=fail_fast,
        )  # fmt: skip

    if precision is None:
        result = execute(planned)
    else:
        from aqmlab._precision import run_until_precise

        points = [(label, point) for label, point, _ in planned[:: len(seed_list)]]
        result = run_until_precise(points, seed_list, precision, max_seeds, execute)
    failures = result.failed
    if failures:
        warnings.warn(
            f"{len(failures)} of {len(result.failed) + len(result.runs_done)} runs failed and are left "
            f"out of the tables (Sweep.failed); the first: {failures[0]}",
            RuntimeWarning,
            stacklevel=2,
        )
    result.warnings = _keys_without_effect(result, base)
    for message in result.warnings:
        warnings.warn(message, RuntimeWarning, stacklevel=2)
    return result


def _checked_jobs(jobs: int | None, client: Any, emulate: bool) -> int | None:
    """The local pool's size as given, 1 for an emulated sweep; refused where it
    cannot apply."""
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs = {jobs!r} must be an integer >= 1")
    if jobs is not None and client is not None:
        raise ValueError("jobs sets the local pool's size; on a Dask cluster its workers run the runs")
    if emulate is True and client is not None:
        raise ValueError("emulate: emulated runs need this machine's kernel and run here, not on a cluster")
    if emulate is True and jobs not in (None, 1):
        raise ValueError(f"emulate: emulated runs take the machine's time one at a time; jobs = {jobs!r}")
    return 1 if emulate is True else jobs


def _plan(
    scenario: Any,
    base: dict[str, Any],
    labels: list[dict[str, Any]],
    seed_list: list[int],
    emulate: bool,
) -> tuple[list[tuple[dict[str, Any], dict[str, Any], int]], list[str]]:
    """Every run of the sweep (point label, scenario, seed), each point checked
    before the first run starts, and each point's checked scenario as JSON."""
    from aqmlab import _aqmlab
    from aqmlab._run import to_json

    planned: list[tuple[dict[str, Any], dict[str, Any], int]] = []
    simulated: list[str] = []
    for label in labels:
        try:
            point = assign(base, label)
            simulated.append(_aqmlab.check_json(to_json(point)))
            if emulate:
                _aqmlab.check_emulation(to_json(point))
        except ValueError as e:
            raise ValueError(_point_error(str(e), label, scenario)) from None
        planned.extend((label, point, seed) for seed in seed_list)
    return planned, simulated


def _execute(
    grid: Mapping[str, Sequence[Any]],
    store: Any,
    planned: list[tuple[dict[str, Any], dict[str, Any], int]],
    baseline: Mapping[str, Any] | None,
    emulate: bool,
    **runner: Any,
) -> Sweep:
    """Runs the (label, point, seed) of ``planned`` that ``store`` lacks
    (``runner``: :func:`aqmlab._runner.run_all`'s executor flags), emulated when
    ``emulate``, and returns their :class:`Sweep`."""
    from aqmlab import _runner
    from aqmlab._runner.work import EMULATE
    from aqmlab._sweep_result import label_types

    if emulate:
        # One wrapped object per point (its seeds share it), strict: a run that
        # did not keep time fails instead of being stored.
        wrapped: dict[int, dict[str, Any]] = {}
        for _, point, _ in planned:
            wrapped.setdefault(id(point), {EMULATE: point})
        planned = [(label, wrapped[id(point)], seed) for label, point, seed in planned]
    # Each point's scenario is one object, shared by its seeds: it names the point
    # of a failed run.
    where = {id(point): _describe(label) for label, point, _ in planned}
    _, stats, failures = _runner.run_all(
        [(point, seed) for _, point, seed in planned],
        store,
        describe=lambda scenario, seed: where.get(id(scenario), ""),
        **runner,
    )
    return Sweep(
        list(grid),
        [(label, seed, _runner.run_key(point, seed)) for label, point, seed in planned],
        store,
        types=label_types(grid),
        failed=failures,
        simulated=stats.simulated,
        cached=stats.cached,
        seconds=stats.seconds,
        baseline=baseline,
    )


def _check_baseline(baseline: Mapping[str, Any], grid: Mapping[str, Sequence[Any]]) -> None:
    """A baseline names values the grid has, of keys the grid varies."""
    for key, value in baseline.items():
        if key not in grid:
            raise ValueError(
                f"baseline {key}={value!r}: {key!r} is not a sweep key (keys: {', '.join(grid)})"
            )
        texts = [_label_text(v) for v in grid[key]]
        if _label_text(value) not in texts:
            shown = ", ".join(str(t) for t in texts)
            raise ValueError(f"baseline {key}={value!r} is not one of the sweep's values ({shown})")


def _check_every_key_changes_something(
    grid: Mapping[str, Sequence[Any]],
    labels: list[dict[str, Any]],
    simulated: list[str],
    base: Mapping[str, Any],
) -> None:
    """Raises ``ValueError`` for a key whose values give the same simulation
    (``simulated``: what each point's run simulates, from the extension) wherever
    the other keys stand: its rows would be copies of each other under different
    labels. A key that matters at some points only (a parameter one of two qdisc
    kinds reads) is kept."""
    for key in grid:
        if len({json.dumps(v, sort_keys=True) for v in (_label_text(x) for x in grid[key])}) < 2:
            continue  # one value: an assignment, not an axis
        by_rest: dict[str, set[str]] = {}
        for label, sim in zip(labels, simulated):
            rest = json.dumps({k: _label_text(v) for k, v in label.items() if k != key}, sort_keys=True)
            by_rest.setdefault(rest, set()).add(sim)
        if all(len(sims) == 1 for sims in by_rest.values()):
            raise ValueError(f"sweep key {key!r} changes no run: {_why_inert(key, base)}")


def _keys_without_effect(result: Sweep, base: Mapping[str, Any]) -> list[str]:
    """The keys whose values all gave the same runs row (events, fairness, every
    group's goodput and drops) wherever the other keys stood, seed by seed: a key
    the check before the runs let through, because it does change the scenario,
    but where it changes nothing that reaches the traffic (a qdisc on links that
    never queue)."""
    if not result.runs_done:
        return []
    runs = result.runs
    columns = result.columns
    labels = [columns[k] for k in result.keys]
    values = [c for c in runs.columns if c not in labels and c != "seed"]
    found = []
    for key in result.keys:
        if runs[columns[key]].nunique(dropna=False) < 2:
            continue
        rest = [columns[k] for k in result.keys if k != key] + ["seed"]
        if (runs.groupby(rest, dropna=False)[values].nunique(dropna=False) <= 1).all().all():
            found.append(f"sweep key {key!r} changed no result: {_why_inert(key, base, ran=True)}")
    return found


def _why_inert(key: str, base: Mapping[str, Any], ran: bool = False) -> str:
    top = key.split(".")[0]
    if top == "seed":
        return "each run's seed is one of the sweep's seeds (use --seeds N or --seed-list S1,S2)"
    if top in ("name", "description"):
        return f"the scenario's {top} labels the results and changes no packet"
    topology = base.get("topology")
    links = topology.get("links") if isinstance(topology, Mapping) else None
    if top == "qdisc" and isinstance(links, list):
        own = [
            f"topology.links[{i}] ({link.get('from')}->{link.get('to')})"
            for i, link in enumerate(links)
            if isinstance(link, Mapping) and "qdisc" in link
        ]
        if not ran:
            return (
                "every link of this graph sets its own qdisc, so [qdisc] reaches none of them "
                "(set topology.links.N.qdisc instead)"
            )
        if own:
            return (
                "[qdisc] is the qdisc of the links without one of their own, and here those do "
                f"not queue; {', '.join(own)} {'sets its' if len(own) == 1 else 'set their'} own "
                "(set topology.links.N.qdisc instead)"
            )
    if ran:
        return "its values gave identical runs (check that the key reaches what you meant to vary)"
    return "every value of it gives the same simulation"
