"""Seeds until precise: ``aqmlab.sweep(..., precision="METRIC=2%", max_seeds=N)``.

The rule is sequential, as if seeds were added one at a time: a point stops at
the first n (at least the sweep's own seeds, and at least :data:`MIN_SEEDS`)
whose Student-t interval of the metric's mean has a half-width within the
target, or at ``max_seeds``. Running one seed per round would leave the workers
idle, so each round runs ahead: as many seeds as the point's spread so far says
it needs (:func:`aqmlab.stats.seeds_wanted`, at most four times as many as it has).
The stop is then found among the prefixes of the seeds it ran
(:func:`aqmlab.stats.first_precise`), so where a point stops does not depend on
how far a round ran ahead; runs past the stop stay in the run store (a later
sweep reuses them) and out of the tables.

Every point draws its seeds from one sequence (the sweep's seeds, then the
integers after the largest), so two points share their first seeds and pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aqmlab.stats import Precision, first_precise, parse_precision, seeds_wanted, t_interval

if TYPE_CHECKING:
    from aqmlab._sweep_result import Sweep

#: A round runs at most this many times the seeds a point has: the spread of
#: a few seeds can be far off, and a run past the stop is work thrown away.
_AHEAD = 4
#: No point stops on fewer seeds: with two, a close pair makes a narrow interval
#: by chance too often.
MIN_SEEDS = 3


@dataclass
class Stop:
    """Where a point stopped: ``seeds`` in its tables, its ``mean`` and
    ``half_width``, the ``target`` half-width, and ``reason`` ("precise",
    "max-seeds")."""

    seeds: int
    mean: float
    half_width: float
    target: float
    reason: str


def seed_sequence(seeds: Sequence[int], length: int) -> list[int]:
    """The first ``length`` seeds: ``seeds``, then the integers after the largest."""
    out = list(seeds[:length])
    nxt = max(seeds) + 1
    while len(out) < length:
        out.append(nxt)
        nxt += 1
    return out


def until_precise(
    points: int,
    seeds: Sequence[int],
    precision: Precision,
    max_seeds: int,
    measure: Callable[[list[list[int]]], list[list[float]]],
    level: float = 0.95,
) -> list[Stop]:
    """Runs rounds until every one of ``points`` points has stopped. ``measure``
    (each point's seeds) runs what it lacks and returns, per point, the metric of
    each of its seeds in that order (NaN for a run that failed). Returns each
    point's :class:`Stop`."""
    from aqmlab._sweep import MAX_RUNS

    if isinstance(max_seeds, bool) or not isinstance(max_seeds, int) or not 2 <= max_seeds <= MAX_RUNS:
        raise ValueError(
            f"max_seeds = {max_seeds!r} must be an integer from 2 to {MAX_RUNS:,} (the runs of one sweep)"
        )
    min_n = min(max(len(seeds), MIN_SEEDS), max_seeds)
    if len(seeds) > max_seeds:
        raise ValueError(f"max_seeds = {max_seeds} is below the {len(seeds)} seeds given")
    wanted = [min_n] * points
    stops: list[Stop | None] = [None] * points
    while True:
        values = measure([seed_sequence(seeds, n) for n in wanted])
        for i, vs in enumerate(values):
            if stops[i] is not None:
                continue
            stop_n = first_precise(vs, precision, min_n, level)
            if stop_n is not None:
                stops[i] = _stop(vs[:stop_n], precision, level, "precise")
            elif len(vs) >= max_seeds:
                stops[i] = _stop(vs, precision, level, "max-seeds")
            else:
                n, mean, sd, _, _ = t_interval(vs, level)
                more = seeds_wanted(n, mean, sd, precision, level, cap=max_seeds) if n else len(vs) + 1
                wanted[i] = min(max_seeds, max(len(vs) + 1, min(more, _AHEAD * len(vs))))
        if all(s is not None for s in stops):
            return [s for s in stops if s is not None]


def _stop(values: Sequence[float], precision: Precision, level: float, reason: str) -> Stop:
    _, mean, _, low, high = t_interval(values, level)
    half = (high - low) / 2 if not math.isnan(low) else math.nan
    return Stop(len(values), mean, half, precision.target(mean), reason)


def run_until_precise(
    points: list[tuple[dict[str, Any], dict[str, Any]]],
    seeds: Sequence[int],
    precision: str | Precision,
    max_seeds: int,
    execute: Callable[[list[tuple[dict[str, Any], dict[str, Any], int]]], Sweep],
) -> Sweep:
    """The sweep of ``points`` ((label, scenario) pairs) with seeds added until
    ``precision``: ``execute(planned)`` runs (label, scenario, seed) triples
    and returns their :class:`Sweep`. The returned sweep holds each point's
    seeds up to its stop; :attr:`Sweep.stopped` says where and why."""
    import pandas as pd

    from aqmlab._sweep_result import label_text, runs_metric_names

    if isinstance(precision, str):
        target = parse_precision(precision)
    elif isinstance(precision, Precision):
        target = precision
    else:
        raise ValueError(
            f"precision must be a string METRIC=WIDTH or METRIC=PERCENT%, e.g. "
            f"'tcp_goodput_bps=2%', got {type(precision).__name__} {precision!r}"
        )
    known = set().union(*(runs_metric_names(point) for _, point in points))
    if target.metric not in known:
        raise ValueError(
            f"--precision {target}: the runs table has no metric {target.metric!r}; "
            f"it has {', '.join(sorted(known))}"
        )
    simulated = 0
    seconds = 0.0
    last: list[Sweep] = []

    def measure(seed_lists: list[list[int]]) -> list[list[float]]:
        nonlocal simulated, seconds
        planned = [(label, point, s) for (label, point), ss in zip(points, seed_lists) for s in ss]
        result = execute(planned)
        simulated += result.simulated
        seconds += result.seconds
        last[:] = [result]
        runs = result.runs
        if runs.empty:
            return [[math.nan] * len(ss) for ss in seed_lists]
        if target.metric not in runs.columns:
            metrics = ", ".join(c for c in runs.columns if c not in result.keys and c != "seed")
            raise ValueError(
                f"--precision {target}: the runs table has no metric {target.metric!r} ({metrics})"
            )
        keys = [result.columns[k] for k in result.keys]
        index = (
            runs.set_index([*keys, "seed"])[target.metric] if keys else runs.set_index("seed")[target.metric]
        )
        out = []
        for (label, _), ss in zip(points, seed_lists):
            point = tuple(label_text(label[k]) for k in result.keys)
            out.append(
                [
                    float(index.get((*point, s), math.nan)) if keys else float(index.get(s, math.nan))
                    for s in ss
                ]
            )
        return out

    stops = until_precise(len(points), seeds, target, max_seeds, measure)
    planned = [
        (label, point, s)
        for (label, point), stop in zip(points, stops)
        for s in seed_sequence(seeds, stop.seeds)
    ]
    result = execute(planned)
    result.simulated = simulated
    result.cached = len(result.runs_done) + len(result.failed) - simulated if simulated else result.cached
    result.cached = max(result.cached, 0)
    result.seconds = seconds + result.seconds
    keys = [result.columns[k] for k in result.keys]
    rows = [
        {
            **{c: label_text(label[k]) for c, k in zip(keys, result.keys)},
            "metric": target.metric,
            "seeds": stop.seeds,
            "mean": stop.mean,
            "half_width": stop.half_width,
            "target": stop.target,
            "reason": stop.reason,
        }
        for (label, _), stop in zip(points, stops)
    ]
    result.stopped = pd.DataFrame(rows)
    return result
