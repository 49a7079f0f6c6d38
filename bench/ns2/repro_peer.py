"""ns-2.35's value of each reproduction check whose points ns-2 can run.

For an experiment of `aqmlab repro`, every point (the scenario dict the
reproduction simulates) that bench/ns2/spec.py can translate runs in ns-2 over the
seeds; the experiment's own `measure` reads each run (an `Ns2Result` has the
tables of an aqmlab `Result`) and its own `checks` turns the runs into rows. Points
ns-2 cannot run (a qdisc it lacks, a queue-lab point) are left out; a check that
needs one of them has no ns-2 value. Which checks those are is found, not listed:
the missing points' numbers are filled three ways (NaN, +1e12 and -1e12), and a
check has an ns-2 value only when all three fillings give the same finite value.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import result as ns2result
import spec as ns2spec

FILLS = (math.nan, 1e12, -1e12)


def _value(c) -> float | None:
    v = c.ours
    if v != v:
        return None
    return float(v)


def run(ids: list[str], seeds: int, duration: str | None, log: Callable[..., None] = print) -> dict:
    import pandas as pd
    from aqmlab import repro as R
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
    for exp in R.resolve(ids):
        planned = plan(exp, seeds, duration)
        rows, reasons, ran = [], {}, 0
        t0 = time.perf_counter()
        measured: dict[int, dict] = {}
        for i, (point, seed) in enumerate(planned):
            try:
                sp = ns2spec.spec(dict(point.scenario), seed)
            except (ns2spec.Unsupported, KeyError) as e:
                reasons[_why(e)] = reasons.get(_why(e), 0) + 1
                continue
            r = ns2result.run(sp, seed)
            try:
                measured[i] = exp.measure(point.label, r)
            except Exception as e:  # a measure reading what ns-2 does not count
                reasons[f"measure: {type(e).__name__}: {e}"] = 1
                continue
            ran += 1
        if not measured:
            out["skipped"][exp.id] = sorted(reasons)
            log(f"{exp.id}: no point ns-2 can run ({'; '.join(sorted(reasons))})")
            continue
        columns = sorted({k for m in measured.values() for k in m})
        results = []
        for fill in FILLS:
            rows = []
            for i, (point, seed) in enumerate(planned):
                row = dict(point.label)
                row["seed"] = seed
                row.update(measured.get(i, {k: fill for k in columns}))
                rows.append(row)
            try:
                results.append(exp.checks(pd.DataFrame(rows)))
            except Exception:
                results.append(None)
        values = {}
        if results[1] is not None and results[2] is not None:
            for k, c in enumerate(results[1]):
                a, b = _value(c), _value(results[2][k])
                n = results[0][k] if results[0] is not None else None
                if a is None or a != b or (n is not None and _value(n) not in (None, a)):
                    continue
                if abs(a) >= 1e11:
                    continue
                values[c.quantity] = {
                    "value": a,
                    "sd": c.ours_sd if c.ours_sd == c.ours_sd else None,
                    "text": c.ours_text(),
                    "verdict": c.verdict,
                }
        out["experiments"][exp.id] = {
            "checks": values,
            "points_run": len({repr(sorted(planned[i][0].label.items())) for i in measured}),
            "points_left_out": sorted(reasons),
            "ns2_seconds": round(time.perf_counter() - t0, 1),
        }
        log(f"{exp.id}: {len(values)} checks with an ns-2 value from {ran} runs, {time.perf_counter() - t0:.0f} s")
    return out


def _why(e: Exception) -> str:
    if isinstance(e, KeyError):
        return f"not a network scenario (no {e})"
    return str(e)
