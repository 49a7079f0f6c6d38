"""ns-2.35's value of each reproduction check whose points ns-2 can run.

For an experiment of `aqmlab repro`, every point (the scenario dict the
reproduction simulates) that bench/ns2/spec.py can translate runs in ns-2 over the
seeds; the experiment's own `measure` reads each run (an `Ns2Result` has the
tables of an aqmlab `Result`) and its own `checks` turns the runs into rows. Points
ns-2 cannot run (a qdisc it lacks, a queue-lab point) are left out; a check that
needs one of them has no ns-2 value. Which checks those are is found, not listed:
the missing points' numbers are filled sixteen ways (NaN; two constants; rising,
falling and two random sequences of positive numbers; two falling
negative ones, ordered both ways across columns, and seven random signed ones,
used when the checks accept them), and a check has an
ns-2 value only when every filling gives the same finite value, so neither a mean,
a ratio, a sign nor a trend over a missing point passes for ns-2's.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

import result as ns2result
import spec as ns2spec


def _fills(n_rows: int, n_cols: int) -> list[Callable[[int, int], float]]:
    """Values for the cell (row, column) of a missing point: NaN, six positive
    fillings (`MUST` of them; two constant), then nine with negative values (a check may refuse
    those: a square root, a logarithm). Several random signed ones, because a
    condition such as `a < 0 and b > c` is false for most single fillings."""
    r1, r2 = random.Random(1), random.Random(2)
    rand1 = [[r1.uniform(1.0, 1e9) for _ in range(n_cols)] for _ in range(n_rows)]
    rand2 = [[r2.uniform(1e-3, 1.0) for _ in range(n_cols)] for _ in range(n_rows)]
    signed = []
    for seed in range(3, 10):
        r = random.Random(seed)
        signed.append([[r.uniform(-1.0, 1.0) for _ in range(n_cols)] for _ in range(n_rows)])
    return [
        lambda i, k: math.nan,
        lambda i, k: 1e9 * (1 + i) + k,
        lambda i, k: 1e9 / (1 + i) + k,
        lambda i, k: rand1[i][k],
        lambda i, k: rand2[i][k],
        lambda i, k: 1.0,  # no spread at all: "varies least" and max/min rows move
        lambda i, k: 1e9,
        lambda i, k: -1e9 * (1 + i) - k,
        lambda i, k: -1e9 * (1 + i) + k,
        *(lambda i, k, t=t: t[i][k] for t in signed),
    ]


#: The fillings (after NaN) every check must accept.
MUST = 6


def _value(c) -> float | None:
    v = c.ours
    if v != v:
        return None
    return float(v)


#: Experiments whose ns-2 points are too slow to run in the column's hour.
TOO_SLOW = {
    "breathe-fig2": "1000 s of 58 Mbit/s of CBR into 1 Mbit/s with 1030 flows: about 15 min of ns-2 per "
    "50 simulated seconds, hours per run",
    "breathe-fig3": "as breathe-fig2 (the same points)",
}


def run(
    ids: list[str],
    seeds: int,
    duration: str | None,
    log: Callable[..., None] = print,
    save: Callable[[dict], None] | None = None,
) -> dict:
    """ns-2's values for the experiments `ids`; `save` gets the document after
    each experiment (so a stopped run keeps what it finished)."""
    from aqmlab.repro import resolve
    from aqmlab.repro._core import engine_id, plan

    out = {
        "simulator": "ns-2.35",
        "label": f"ns-2.35 (seeds 1-{seeds})" if seeds > 1 else "ns-2.35 (seed 1)",
        "seeds": seeds,
        "duration": duration,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "aqmlab": engine_id(),
        "experiments": {},
        "skipped": {},
    }
    cache: dict[str, ns2result.Ns2Result] = {}
    for exp in resolve(ids):
        if exp.id in TOO_SLOW and duration is None:
            out["skipped"][exp.id] = [TOO_SLOW[exp.id]]
            continue
        planned = plan(exp, seeds, duration)
        reasons, ran = {}, 0
        t0 = time.perf_counter()
        measured: dict[int, dict] = {}
        for i, (point, seed) in enumerate(planned):
            try:
                sp = ns2spec.spec(dict(point.scenario), seed)
            except (ns2spec.Unsupported, KeyError) as e:
                reasons[_why(e)] = reasons.get(_why(e), 0) + 1
                continue
            if sp.text not in cache:  # a point two experiments share runs once
                cache[sp.text] = ns2result.run(sp, seed)
            r = cache[sp.text]
            try:
                measured[i] = exp.measure(point.label, r)
            except Exception as e:  # a measure reading what ns-2 does not count
                reasons[f"measure: {type(e).__name__}: {e}"] = 1
                continue
            ran += 1
        if not measured:
            out["skipped"][exp.id] = sorted(reasons)
            log(f"{exp.id}: no point ns-2 can run ({'; '.join(sorted(reasons))})")
            if save is not None:
                save(out)
            continue
        values = ns2_values(exp.checks, [(dict(p.label), sd) for p, sd in planned], measured)
        out["experiments"][exp.id] = {
            "checks": values,
            "points_run": len({repr(sorted(planned[i][0].label.items())) for i in measured}),
            "points_left_out": sorted(reasons),
            "ns2_seconds": round(time.perf_counter() - t0, 1),
            # Every ns-2 run's numbers, so the checks can be made again without ns-2.
            "runs": [
                {"label": dict(planned[i][0].label), "seed": planned[i][1], **m}
                for i, m in sorted(measured.items())
            ],
        }
        secs = time.perf_counter() - t0
        log(f"{exp.id}: {len(values)} checks with an ns-2 value from {ran} runs, {secs:.0f} s")
        if save is not None:
            save(out)
    return out


def _why(e: Exception) -> str:
    if isinstance(e, KeyError):
        return f"not a network scenario (no {e})"
    return str(e)


def ns2_values(checks, planned: list[tuple[dict, int]], measured: dict[int, dict]) -> dict[str, dict]:
    """The rows of `checks` (an experiment's checks function) that ns-2's runs
    decide: `planned` is every (label, seed) the experiment runs, `measured` the
    numbers of those ns-2 ran, by index into `planned`."""
    import pandas as pd

    columns = sorted({k for m in measured.values() for k in m})
    results = []
    for fill in _fills(len(planned), len(columns)):
        rows = []
        for i, (label, seed) in enumerate(planned):
            row = dict(label)
            row["seed"] = seed
            row.update(measured.get(i) or {c: fill(i, k) for k, c in enumerate(columns)})
            rows.append(row)
        try:
            results.append(checks(pd.DataFrame(rows)))
        except Exception:
            results.append(None)
    values = {}
    must, signed = results[1 : 1 + MUST], results[1 + MUST :]
    if all(r is not None for r in must):
        filled = must + [r for r in signed if r is not None]
        for k, c in enumerate(filled[0]):
            vals = [_value(r[k]) for r in filled]
            nan_fill = _value(results[0][k]) if results[0] is not None else None
            if vals[0] is None or any(v != vals[0] for v in vals) or nan_fill not in (None, vals[0]):
                continue
            values[c.quantity] = {
                "value": vals[0],
                "sd": c.ours_sd if c.ours_sd is not None and c.ours_sd == c.ours_sd else None,
                "text": c.ours_text(),
                "verdict": c.verdict,
            }
    return values
