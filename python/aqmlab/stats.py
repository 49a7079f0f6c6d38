"""Statistics of a campaign: means with confidence intervals, paired differences,
and the rule that decides when a point has seeds enough.

Each seed of a point is one independent draw of the metric, so a point's mean
has the Student-t interval ``mean ± t(1 - (1 - level)/2, n - 1) · sd / √n``.
Comparing two points seed by seed (the same seed under RED and under CHOKe) is a
paired experiment: the engine gives every flow's start and every open-loop
arrival the same random numbers under both (``docs/architecture.md``, "Common
random numbers"), so the per-seed difference carries the qdisc's effect with
little of the traffic's noise, and its interval is the t interval of the
differences.

The t quantile is computed here (the inverse of the regularized incomplete beta
function by bisection), so the package needs no scipy; a test holds it to
``scipy.stats.t.interval``.

Tables are long: one row per (point, metric), so a grid of any shape and any
number of metrics is one DataFrame to filter, plot or write.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Precision",
    "paired",
    "parse_precision",
    "summarize",
    "t_interval",
    "t_quantile",
]

#: The columns :func:`summarize` adds after the point's keys and ``metric``.
SUMMARY_COLUMNS = ("n", "mean", "sd", "ci_low", "ci_high", "half_width")


# ---- the t distribution -----------------------------------------------------------------


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz),
    as in Numerical Recipes' ``betacf``; converges for ``x < (a + 1)/(a + b + 2)``."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` > 0 degrees of freedom."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"t quantile: p = {p} must be between 0 and 1")
    if not df > 0:
        raise ValueError(f"t quantile: df = {df} must be positive")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    hi = 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    lo = 0.0
    # The CDF is monotone: bisection to the last bit of a double.
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def t_interval(values: Sequence[float], level: float = 0.95) -> tuple[int, float, float, float, float]:
    """(n, mean, sd, low, high) of ``values`` (NaN dropped): the Student-t
    interval of their mean at ``level``. With one value the sd and the interval
    are NaN (one seed says nothing of the spread)."""
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    n = len(xs)
    if n == 0:
        return 0, math.nan, math.nan, math.nan, math.nan
    mean = math.fsum(xs) / n
    if n == 1:
        return 1, mean, math.nan, math.nan, math.nan
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = t_quantile(0.5 + level / 2.0, n - 1) * sd / math.sqrt(n)
    return n, mean, sd, mean - half, mean + half


def _check_level(level: float) -> None:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < level < 1.0:
        raise ValueError(f"level = {level!r} must be between 0 and 1 (0.95 for a 95% interval)")


# ---- tables -----------------------------------------------------------------------------


def metric_columns(frame: pd.DataFrame, keys: Sequence[str], seed: str = "seed") -> list[str]:
    """The numeric columns of ``frame`` that are neither a key nor the seed."""
    import pandas as pd

    return [
        c
        for c in frame.columns
        if c not in keys
        and c != seed
        and pd.api.types.is_numeric_dtype(frame[c])
        and not pd.api.types.is_bool_dtype(frame[c])
    ]


def _groups(frame: pd.DataFrame, keys: Sequence[str]):
    if not keys:
        yield (), frame
        return
    for point, rows in frame.groupby(list(keys), sort=False, dropna=False):
        yield (point if isinstance(point, tuple) else (point,)), rows


def summarize(
    frame: pd.DataFrame,
    keys: Sequence[str],
    metrics: Sequence[str] | None = None,
    *,
    level: float = 0.95,
    seed: str = "seed",
) -> pd.DataFrame:
    """One row per (point of ``keys``, metric): the keys, ``metric``, ``n`` (seeds
    with a value), ``mean``, ``sd``, ``ci_low``, ``ci_high`` and ``half_width`` of
    the Student-t interval at ``level``. ``metrics``: default every numeric
    column but the keys and the seed."""
    import pandas as pd

    _check_level(level)
    metrics = _metrics(frame, keys, seed, metrics)
    rows = []
    for point, group in _groups(frame, keys):
        for metric in metrics:
            n, mean, sd, low, high = t_interval(group[metric].tolist(), level)
            rows.append((*point, metric, n, mean, sd, low, high, (high - low) / 2))
    return pd.DataFrame(rows, columns=[*keys, "metric", *SUMMARY_COLUMNS])


def _metrics(frame: pd.DataFrame, keys: Sequence[str], seed: str, metrics: Any) -> list[str]:
    """``metrics`` as a list of the table's metrics (one name may stand alone);
    every metric of the table when ``None``. A name the table lacks, or what is
    not a name, is a ``ValueError`` naming the metrics there are."""
    known = metric_columns(frame, keys, seed)
    if metrics is None:
        return known
    if isinstance(metrics, str):
        metrics = [metrics]
    if isinstance(metrics, Mapping) or not isinstance(metrics, Iterable):
        raise ValueError(f"metrics must be a metric's name or a list of them, got {metrics!r}")
    metrics = list(metrics)
    for m in metrics:
        if not isinstance(m, str) or m not in frame.columns:
            raise ValueError(f"no metric {m!r} in the runs table (metrics: {', '.join(known)})")
    return metrics


def paired(
    frame: pd.DataFrame,
    keys: Sequence[str],
    baseline: Mapping[str, Any],
    metrics: Sequence[str] | None = None,
    *,
    level: float = 0.95,
    seed: str = "seed",
) -> pd.DataFrame:
    """Paired differences against the baseline: each point minus the point that
    has ``baseline``'s values for its keys and this point's values for the other
    keys, seed by seed (seeds that both ran). One row per (point, metric): the
    keys, ``metric``, ``n`` (pairs), ``mean`` (of the differences), ``sd``,
    ``ci_low``, ``ci_high``, ``half_width``; and ``relative``, the mean
    difference over the baseline's mean on the same seeds. The baseline's own
    points are left out."""
    import pandas as pd

    _check_level(level)
    unknown = [k for k in baseline if k not in keys]
    if unknown:
        raise ValueError(
            f"baseline key {unknown[0]!r} is not a sweep key (keys: {', '.join(keys) or 'none'})"
        )
    if not baseline:
        raise ValueError("baseline is empty: give KEY=VALUE of the point to compare against")
    for k, v in baseline.items():
        if not (frame[k] == v).any():
            values = ", ".join(str(x) for x in frame[k].drop_duplicates())
            raise ValueError(f"baseline {k}={v!r} is no value of the sweep (values: {values})")
    metrics = _metrics(frame, keys, seed, metrics)
    rest = [k for k in keys if k not in baseline]
    is_base = pd.Series(True, index=frame.index)
    for k, v in baseline.items():
        is_base &= frame[k] == v
    base = frame[is_base].set_index([*rest, seed]) if rest else frame[is_base].set_index(seed)
    rows = []
    for point, group in _groups(frame[~is_base], keys):
        here = group.set_index([*rest, seed]) if rest else group.set_index(seed)
        common = here.index.intersection(base.index)
        for metric in metrics:
            # As floats: a count column is unsigned, and a difference is signed.
            ours = here.loc[common, metric].astype("float64")
            theirs = base.loc[common, metric].astype("float64")
            diff = (ours - theirs).tolist()
            n, mean, sd, low, high = t_interval(diff, level)
            base_mean = float(theirs.mean()) if n else math.nan
            relative = mean / base_mean if base_mean else math.nan
            rows.append((*point, metric, n, mean, sd, low, high, (high - low) / 2, relative))
    return pd.DataFrame(rows, columns=[*keys, "metric", *SUMMARY_COLUMNS, "relative"])


# ---- seeds until precise ------------------------------------------------------------------


@dataclass(frozen=True)
class Precision:
    """A target for the interval's half-width of ``metric``: ``value`` in the
    metric's own unit, or as a fraction of its mean when ``relative``."""

    metric: str
    value: float
    relative: bool

    def target(self, mean: float) -> float:
        return self.value * abs(mean) if self.relative else self.value

    def met(self, mean: float, half_width: float) -> bool:
        return not math.isnan(half_width) and half_width <= self.target(mean)

    def __str__(self) -> str:
        return f"{self.metric}=" + (f"{self.value * 100:g}%" if self.relative else f"{self.value:g}")


_NUMBER = r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?"


def parse_precision(text: str) -> Precision:
    """``"tcp_goodput_bps=2%"`` (half-width at most 2% of the mean) or
    ``"jain_tcp=0.01"`` (at most 0.01, in the metric's unit)."""
    metric, sep, value = text.partition("=")
    metric, value = metric.strip(), value.strip()
    m = re.fullmatch(f"({_NUMBER})(%?)", value)
    if not sep or not metric or m is None:
        raise ValueError(
            f"--precision {text!r}: expected METRIC=WIDTH or METRIC=PERCENT%, e.g. tcp_goodput_bps=2%"
        )
    number = float(m.group(1))
    if number <= 0:
        raise ValueError(f"--precision {text!r}: the half-width must be above 0")
    return Precision(metric, number / 100 if m.group(2) else number, bool(m.group(2)))


def seeds_wanted(
    n: int, mean: float, sd: float, precision: Precision, level: float = 0.95, cap: int | None = None
) -> int:
    """How many seeds the point likely needs for ``precision``, from its ``n``
    seeds so far: the smallest m with t(m - 1)·sd/√m under the target, at least
    n + 1 (the estimate of sd moves as seeds come). Used to add seeds in rounds
    rather than one at a time; the stopping rule is still the measured interval.
    At most ``cap`` when given: a target far below the spread (``1e-300``) asks
    for more seeds than a float holds, and a sweep runs at most ``max_seeds``."""
    target = precision.target(mean)
    if math.isnan(sd) or target <= 0:
        m = n + 1 if target > 0 else 2 * n
        return m if cap is None else min(m, cap)
    m = max(n + 1, 2)
    z = t_quantile(0.5 + level / 2.0, 1_000_000)
    ratio = z * sd / target
    bound = cap if cap is not None else 2**63
    if not math.isfinite(ratio) or ratio >= math.sqrt(bound):
        return bound
    m = min(max(m, math.ceil(ratio**2)), bound)
    while m < bound and t_quantile(0.5 + level / 2.0, m - 1) * sd / math.sqrt(m) > target:
        m += 1
    return m


def first_precise(
    values: Sequence[float], precision: Precision, min_n: int, level: float = 0.95
) -> int | None:
    """The sequential rule: seeds are added one at a time and the point stops at
    the first n >= ``min_n`` whose interval is within ``precision``. ``values``
    are the metric of seeds 1..len(values) in their order; returns that n, or
    None when no prefix is precise yet. Evaluating prefixes makes the stop
    independent of how many seeds a round ran ahead in parallel."""
    for n in range(max(min_n, 2), len(values) + 1):
        _, mean, _, low, high = t_interval(values[:n], level)
        if precision.met(mean, (high - low) / 2):
            return n
    return None
