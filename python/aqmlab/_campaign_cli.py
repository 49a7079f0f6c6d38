"""What ``aqmlab sweep`` prints of a campaign's statistics: each point's means
with the half-width of their 95% interval, the paired differences against
``--baseline``, and where ``--precision`` stopped each point."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab._sweep_result import Sweep

#: More goodput columns than this make the table too wide for a terminal (the
#: runs and stats tables have every group).
_MAX_GOODPUTS = 6


def parse_baseline(texts: Sequence[str], grid: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    """``["qdisc.kind=red"]`` -> ``{"qdisc.kind": "red"}``, each value parsed as
    ``--set`` parses its values and given as the grid spells it."""
    from aqmlab._sweep import parse_value

    out: dict[str, Any] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise ValueError(f"--baseline {text!r}: expected KEY=VALUE, e.g. qdisc.kind=red")
        if key in out:
            raise ValueError(f"--baseline {key}: given twice")
        out[key] = parse_value(value)
    return out


def _metrics(columns: Sequence[str]) -> list[str]:
    goodputs = [c for c in columns if c.endswith("_goodput_bps")]
    # The busiest link's queueing delay, when the runs recorded delays.
    delays = [c for c in ("delay_p50_s", "delay_p99_s") if c in columns]
    # Each probe group's latency under load (kind = "probe").
    probes = [c for c in columns if c.endswith("_probe_rtt_p99_s")]
    return (
        (goodputs if len(goodputs) <= _MAX_GOODPUTS else [])
        + delays
        + probes
        + [c for c in ("jain_tcp", "jain_all") if c in columns]
    )


def _heading(metric: str) -> str:
    if metric.startswith("delay_") and metric.endswith("_s"):
        return f"{metric[len('delay_') : -2]} delay ms"
    if "_probe_rtt_" in metric and metric.endswith("_s"):
        group, stat = metric[:-2].split("_probe_rtt_")
        return f"{group} {stat} rtt ms"
    return metric.replace("_goodput_bps", " kbit/s")


def _is_seconds(metric: str) -> bool:
    """A delay or a probe RTT (seconds), shown in ms."""
    return metric.endswith("_s") and (metric.startswith("delay_") or "_probe_rtt_" in metric)


def _scale(metric: str) -> float:
    if metric.endswith("_goodput_bps"):
        return 1e3
    return 1e-3 if _is_seconds(metric) else 1.0


def _number(x: float) -> str:
    if math.isnan(x):
        return "nan"
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.1f}"


def _pm(mean: float, half: float) -> str:
    """``mean ± half`` to the half-width's second significant digit: the digits
    past it are noise."""
    if math.isnan(half) or half <= 0:
        return _number(mean)
    decimals = min(6, max(0, 1 - math.floor(math.log10(half))))
    return f"{mean:.{decimals}f} ± {half:.{decimals}f}"


def _wide(frame: pd.DataFrame, keys: list[str], metrics: list[str], cell) -> pd.DataFrame:
    """One row per point, one column per metric, each cell ``cell(row)``."""
    import pandas as pd

    rows: dict[tuple, dict[str, str]] = {}
    for _, r in frame[frame["metric"].isin(metrics)].iterrows():
        point = tuple(r[k] for k in keys)
        rows.setdefault(point, {k: r[k] for k in keys})[_heading(r["metric"])] = cell(r)
    return pd.DataFrame(list(rows.values()), columns=[*keys, *(_heading(m) for m in metrics)])


def summary_table(result: Sweep) -> str:
    """Each point's mean ± half-width of the 95% interval, per metric; then the
    paired differences when the sweep has a baseline."""
    keys = [result.columns[k] for k in result.keys]
    stats = result.stats
    metrics = _metrics(list(dict.fromkeys(stats["metric"])))

    def mean_pm(r) -> str:
        s = _scale(r["metric"])
        if r["n"] < 2:
            return _number(r["mean"] / s)
        return _pm(r["mean"] / s, r["half_width"] / s)

    seeds = stats.groupby(keys, sort=False)["n"].max() if keys else stats["n"].max()
    lines = [
        f"mean ± half-width of the 95% interval over {_seed_text(seeds)}",
        _wide(stats, keys, metrics, mean_pm).to_string(index=False),
    ]
    paired = result.paired
    if not paired.empty:

        def diff_pm(r) -> str:
            s = _scale(r["metric"])
            rel = "" if math.isnan(r["relative"]) else f" ({r['relative'] * 100:+.1f}%)"
            return f"{_pm(r['mean'] / s, r['half_width'] / s)}{rel}"

        base = " ".join(f"{k}={v}" for k, v in result.baseline.items())
        lines += [
            "",
            f"paired differences against {base}, seed by seed (± half-width of the 95% interval)",
            _wide(paired, keys, metrics, diff_pm).to_string(index=False),
        ]
    return "\n".join(lines)


def _seed_text(seeds: Any) -> str:
    counts = sorted({int(n) for n in (seeds if hasattr(seeds, "__iter__") else [seeds])})
    if len(counts) == 1:
        return f"{counts[0]} seed{'s' if counts[0] != 1 else ''} a point"
    return f"{counts[0]}-{counts[-1]} seeds a point"


def stopped_table(result: Sweep) -> str:
    """Where ``--precision`` stopped each point, and why."""
    stopped = result.stopped
    assert stopped is not None
    metric = stopped["metric"].iloc[0] if len(stopped) else ""
    s = _scale(metric)
    shown = stopped.drop(columns=["metric"]).copy()
    for c in ("mean", "half_width", "target"):
        shown[c] = [_number(x / s) for x in shown[c]]
    short = sum(stopped["reason"] != "precise")
    why = f"; {short} point(s) reached --max-seeds first" if short else ""
    unit = {1e3: " (kbit/s)", 1e-3: " (ms)"}.get(s, "")
    return f"\nseeds until precise on {metric}{unit}{why}\n" + shown.to_string(index=False)
