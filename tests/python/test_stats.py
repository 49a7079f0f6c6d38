"""Campaign statistics: the t interval against scipy, its coverage, paired
differences, and the seeds-until-precise rule on metrics of known variance."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from aqmlab import stats
from aqmlab._precision import seed_sequence, until_precise

scipy_stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 19, 30, 120, 5000])
@pytest.mark.parametrize("p", [0.5, 0.8, 0.9, 0.95, 0.975, 0.995, 0.9995, 0.025])
def test_t_quantile_is_scipys(df, p):
    assert stats.t_quantile(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("n", [2, 3, 5, 10, 40])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_t_interval_is_scipys_interval_on_the_same_numbers(n, level):
    xs = np.random.default_rng(n).gamma(2.0, 3.0, n)
    got_n, mean, sd, low, high = stats.t_interval(xs.tolist(), level)
    want = scipy_stats.t.interval(level, n - 1, loc=xs.mean(), scale=scipy_stats.sem(xs))
    assert got_n == n
    assert mean == pytest.approx(xs.mean(), rel=1e-12)
    assert sd == pytest.approx(xs.std(ddof=1), rel=1e-12)
    assert (low, high) == pytest.approx(want, rel=1e-10)


def test_one_value_has_no_interval_and_nan_is_left_out():
    assert stats.t_interval([3.0])[:2] == (1, 3.0)
    assert math.isnan(stats.t_interval([3.0])[3])
    assert stats.t_interval([1.0, math.nan, 3.0])[:2] == (2, 2.0)


def test_95_percent_intervals_cover_the_true_mean_95_percent_of_the_time():
    """Coverage by simulation: 4,000 campaigns of 5 seeds of a normal metric. The
    t interval covers the mean 95% of the time (within 3 binomial sd); the normal
    interval (1.96 sd/√n), which ignores that the sd is estimated, covers about
    88% with 5 seeds: the check tells them apart."""
    rng = np.random.default_rng(2026)
    draws, n, mu = 4000, 5, 10.0
    z_half = 1.959963984540054
    t_cover = z_cover = 0
    for _ in range(draws):
        xs = rng.normal(mu, 2.0, n)
        _, mean, sd, low, high = stats.t_interval(xs.tolist())
        t_cover += low <= mu <= high
        z_cover += abs(mean - mu) <= z_half * sd / math.sqrt(n)
    slack = 3 * math.sqrt(0.95 * 0.05 / draws)
    assert abs(t_cover / draws - 0.95) < slack
    assert z_cover / draws < 0.95 - slack


def test_summarize_has_a_row_per_point_and_metric():
    frame = pd.DataFrame(
        {"k": ["a", "a", "a", "b", "b", "b"], "seed": [1, 2, 3, 1, 2, 3], "x": [1.0, 2, 3, 10, 20, 30]}
    )
    out = stats.summarize(frame, ["k"])
    assert list(out["k"]) == ["a", "b"] and set(out["metric"]) == {"x"}
    b = out[out["k"] == "b"].iloc[0]
    assert (b["n"], b["mean"], b["sd"]) == (3, 20.0, 10.0)
    assert b["half_width"] == pytest.approx(scipy_stats.t.ppf(0.975, 2) * 10 / math.sqrt(3))


def _paired_frame(effect: float, seeds: int = 20) -> pd.DataFrame:
    """Two qdiscs over two loads: the metric is a large per-seed term (the
    traffic) shared by every point of a seed, plus the qdisc's effect and a small
    noise of its own. Rows shuffled, so pairing must go by seed."""
    rng = np.random.default_rng(7)
    traffic = rng.normal(0, 100, seeds)
    rows = []
    for load in (1, 2):
        for kind, shift in (("red", 0.0), ("choke", effect)):
            for s in range(seeds):
                rows.append((kind, load, s + 1, 1000 * load + traffic[s] + shift + rng.normal(0, 1)))
    frame = pd.DataFrame(rows, columns=["qdisc.kind", "load", "seed", "x"])
    return frame.sample(frac=1.0, random_state=1).reset_index(drop=True)


def test_paired_differences_pair_by_seed_and_by_the_other_keys():
    frame = _paired_frame(effect=5.0)
    out = stats.paired(frame, ["qdisc.kind", "load"], {"qdisc.kind": "red"}, ["x"])
    assert set(out["qdisc.kind"]) == {"choke"} and sorted(out["load"]) == [1, 2]
    for _, r in out.iterrows():
        assert r["n"] == 20
        # Paired, the traffic's sd of 100 cancels: what is left is noise of sd √2,
        # so the mean difference is the effect of 5 within 4 standard errors and
        # the interval is about t·√2/√20 = 0.66 wide on each side.
        assert abs(r["mean"] - 5.0) < 4 * math.sqrt(2) / math.sqrt(20)
        assert r["half_width"] < 1.5
    unpaired = stats.summarize(frame, ["qdisc.kind", "load"], ["x"])
    assert (unpaired["half_width"] > 30).all()


def test_paired_rejects_a_baseline_the_sweep_lacks():
    frame = _paired_frame(effect=0.0)
    with pytest.raises(ValueError, match=r"baseline qdisc.kind='sfq' is no value of the sweep"):
        stats.paired(frame, ["qdisc.kind", "load"], {"qdisc.kind": "sfq"})
    with pytest.raises(ValueError, match=r"'rate' is not a sweep key"):
        stats.paired(frame, ["qdisc.kind", "load"], {"rate": 1})


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("tcp_goodput_bps=2%", stats.Precision("tcp_goodput_bps", 0.02, True)),
        ("jain_tcp=0.01", stats.Precision("jain_tcp", 0.01, False)),
        ("x = 1e3", stats.Precision("x", 1000.0, False)),
    ],
)
def test_parse_precision(text, want):
    assert stats.parse_precision(text) == want


@pytest.mark.parametrize("text", ["x", "=2%", "x=", "x=two", "x=0", "x=-1%", "x=2%%"])
def test_parse_precision_errors_name_the_flag(text):
    with pytest.raises(ValueError, match="--precision"):
        stats.parse_precision(text)


def _normal_metric(sigma: float):
    """A synthetic metric of known sd: seed s gives the s-th draw of one normal
    stream, so every point sees the same sequence whatever the round sizes."""
    draws = np.random.default_rng(99).normal(50.0, sigma, 1000)

    def measure(seed_lists):
        asked.append([len(s) for s in seed_lists])
        return [[float(draws[s - 1]) for s in seeds] for seeds in seed_lists]

    asked: list[list[int]] = []
    return draws, measure, asked


def _one_at_a_time(draws, target: float, min_n: int, max_n: int, relative: bool = False) -> int:
    """The sequential rule written out with scipy: add a seed, stop when the 95%
    interval's half-width is at most ``target`` (times the mean, ``relative``)."""
    for n in range(min_n, max_n + 1):
        xs = draws[:n]
        low, high = scipy_stats.t.interval(0.95, n - 1, loc=xs.mean(), scale=scipy_stats.sem(xs))
        if (high - low) / 2 <= target * (abs(xs.mean()) if relative else 1.0):
            return n
    return max_n


@pytest.mark.parametrize("target", [0.5, 1.0, 2.0])
def test_precision_stops_at_the_seed_the_one_at_a_time_rule_stops_at(target):
    sigma = 4.0
    draws, measure, asked = _normal_metric(sigma)
    (stop,) = until_precise(1, [1, 2, 3], stats.Precision("x", target, False), 1000, measure)
    assert stop.reason == "precise"
    assert stop.seeds == _one_at_a_time(draws, target, 3, 1000)
    assert stop.half_width <= target
    # With a known sd the stop is near (z·sd/target)²: 246, 62 and 15 seeds.
    expected = (1.96 * sigma / target) ** 2
    assert 0.6 * expected < stop.seeds < 1.5 * expected + 3
    # It ran ahead in rounds, not a seed at a time.
    assert len(asked) < 8


def test_precision_stops_at_max_seeds_and_says_so():
    _draws, measure, _ = _normal_metric(4.0)
    (stop,) = until_precise(1, [1, 2, 3], stats.Precision("x", 0.01, False), 12, measure)
    assert (stop.reason, stop.seeds) == ("max-seeds", 12)
    assert stop.half_width > 0.01


def test_relative_precision_and_each_point_on_its_own():
    draws, measure, _ = _normal_metric(4.0)
    # Point 0 and 1 see the same draws: a relative 2% of ~50 is the width 1.0.
    stops = until_precise(2, [1, 2, 3], stats.Precision("x", 0.02, True), 1000, measure)
    assert stops[0] == stops[1]
    assert stops[0].target == pytest.approx(0.02 * abs(stops[0].mean))
    assert stops[0].seeds == _one_at_a_time(draws, 0.02, 3, 1000, relative=True)


def test_seed_sequence_continues_after_the_largest_seed():
    assert seed_sequence([5, 2], 5) == [5, 2, 6, 7, 8]
    assert seed_sequence([1, 2, 3], 2) == [1, 2]
