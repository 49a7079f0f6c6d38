"""Latency in every table: a run's queueing delay (mean, p50, p95, p99) per link and
group and its RTT per group, and the same numbers as metrics of a sweep's runs,
stats and paired tables (so --baseline and --precision take them), drawn by
`aqmlab plot SWEEP` beside goodput and as throughput against delay."""

from __future__ import annotations

import math

import matplotlib
import pytest

matplotlib.use("Agg")

import aqmlab
from aqmlab import plot_sweep
from aqmlab._run import tomllib
from aqmlab._sweep_result import DELAY_STATS, busiest_link

from conftest import CHOKE_FIG3, run_cli

#: Given out of alphabetical order: tables and plots keep it.
KINDS = ["red", "fq_codel", "choke"]


def _fig3(**monitor) -> dict:
    with open(CHOKE_FIG3, "rb") as f:
        s = tomllib.load(f)
    s["duration"], s["warmup"] = "3s", "1s"
    if monitor:
        s["monitor"] = monitor
    return s


@pytest.fixture(scope="module")
def swept():
    return aqmlab.sweep(
        _fig3(delays=True), {"qdisc.kind": KINDS}, seeds=3, jobs=1, baseline={"qdisc.kind": "red"}
    )


def _quantile_from_histogram(buckets, q: float, largest: float) -> float:
    """The ceil(q n)-th smallest delay's bucket midpoint (the histogram's rule),
    recomputed from the bucket counts."""
    n = sum(c for _, _, c in buckets)
    rank = min(max(math.ceil(q * n), 1), n)
    seen = 0
    for lo, hi, c in sorted(buckets):
        seen += c
        if seen >= rank:
            mid = lo if hi - lo <= 1.5e-9 else (lo + hi) / 2
            return min(mid, largest)
    raise AssertionError("the histogram holds fewer packets than its count")


def test_a_runs_delay_quantiles_are_those_of_its_histogram():
    r = aqmlab.run(_fig3(delays=True))
    delays, hist = r.delays, r.delay_histogram
    assert set(delays["scope"]) == {"link", "group"}
    # The whole link is named by its scope, never a silent null group alone.
    assert delays[delays["scope"] == "link"]["group"].isna().all()
    assert delays[delays["scope"] == "group"]["group"].notna().all()
    checked = 0
    for _, row in delays[delays["count"] > 0].iterrows():
        mine = hist[(hist["link"] == row["link"]) & (hist["scope"] == row["scope"])]
        if row["scope"] == "group":
            mine = mine[mine["group"] == row["group"]]
        buckets = list(zip(mine["lo_s"], mine["hi_s"], mine["count"]))
        assert sum(c for *_, c in buckets) == row["count"]
        for q in (0.5, 0.9, 0.95, 0.99):
            want = _quantile_from_histogram(buckets, q, row["max_s"])
            assert row[f"p{round(q * 100)}_s"] == pytest.approx(want, abs=1e-12)
        checked += 1
    assert checked >= 3  # the bottleneck's link row and its two groups at least
    # Each group's RTT is its flows' mean; UDP has none.
    groups = r.groups.set_index("group")
    flows = r.flows
    assert groups.loc["tcp", "rtt_mean_s"] == pytest.approx(
        flows[flows["group"] == "tcp"]["rtt_mean_s"].mean()
    )
    assert math.isnan(groups.loc["udp", "rtt_mean_s"])


def test_the_sweeps_runs_hold_each_runs_delays_at_the_busiest_link(swept):
    runs = swept.runs
    assert list(runs.columns[:3]) == ["scenario", "qdisc.kind", "seed"]
    assert list(dict.fromkeys(runs["qdisc.kind"])) == KINDS
    assert (runs["link"] == "left->right").all()
    checked = 0
    for (label, seed, result), (_, row) in zip(swept.runs_done, runs.iterrows()):
        assert (row["qdisc.kind"], row["seed"]) == (label["qdisc.kind"], seed)
        link = busiest_link(result)
        assert link == row["link"]
        d = result.delays.set_index(["link", "scope"]).loc[(link, "link")]
        for q in DELAY_STATS:
            assert row[f"delay_{q}_s"] == d[f"{q}_s"]
        by_group = result.delays[(result.delays["link"] == link) & (result.delays["scope"] == "group")]
        for _, g in by_group.iterrows():
            assert row[f"{g['group']}_delay_p99_s"] == g["p99_s"]
        links = result.links.set_index("name")
        assert row["mean_queue_packets"] == links.loc[link, "mean_queue_packets"]
        groups = result.groups.set_index("group")
        assert row["tcp_rtt_mean_s"] == groups.loc["tcp", "rtt_mean_s"]
        assert row["goodput_bps"] == pytest.approx(groups["goodput_bps"].sum())
        checked += 1
    assert checked == 9
    assert "udp_rtt_mean_s" not in runs.columns  # UDP takes no RTT samples


def test_stats_and_paired_tables_take_the_latency_metrics(swept):
    stats = swept.stats
    for metric in ("delay_p99_s", "delay_p95_s", "tcp_delay_p50_s", "mean_queue_packets", "tcp_rtt_mean_s"):
        rows = stats[stats["metric"] == metric]
        assert list(rows["qdisc.kind"]) == KINDS, metric
        for _, r in rows.iterrows():
            values = swept.runs[swept.runs["qdisc.kind"] == r["qdisc.kind"]][metric]
            assert r["mean"] == pytest.approx(values.mean()) and r["n"] == 3
    # A backticked dotted column works in DataFrame.query.
    red = stats.query("`qdisc.kind` == 'red' and metric == 'delay_p99_s'")
    assert len(red) == 1
    paired = swept.paired
    diff = paired[(paired["metric"] == "delay_p99_s") & (paired["qdisc.kind"] == "choke")].iloc[0]
    runs = swept.runs.set_index(["qdisc.kind", "seed"])["delay_p99_s"]
    want = [runs["choke", s] - runs["red", s] for s in (1, 2, 3)]
    assert diff["mean"] == pytest.approx(sum(want) / 3)
    chosen = swept.statistics(["delay_p95_s", "mean_queue_packets"])
    assert set(chosen["metric"]) == {"delay_p95_s", "mean_queue_packets"}


def test_a_run_without_delays_has_no_delay_metric_but_a_queue():
    sw = aqmlab.sweep(_fig3(), {"qdisc.kind": ["red", "choke"]}, seeds=2, jobs=1)
    assert "mean_queue_packets" in sw.runs.columns
    assert not [c for c in sw.runs.columns if "delay_" in c]
    assert list(sw.groups.columns[:4]) == ["scenario", "qdisc.kind", "seed", "group"]
    assert (sw.flows["scenario"] == "choke-fig3").all() and (sw.links["scenario"] == "choke-fig3").all()


def test_precision_and_baseline_on_a_delay_from_the_command_line(tmp_path):
    proc = run_cli(
        "sweep", "choke-fig3", "--set", "qdisc.kind=red,choke", "--set", "monitor.delays=true",
        "--duration", "3s", "--warmup", "1s", "--seeds", "3", "--max-seeds", "5", "--jobs", "1",
        "--baseline", "qdisc.kind=red", "--precision", "delay_p99_s=1%", "--out", str(tmp_path / "o"), "-q",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "p99 delay ms" in proc.stdout and "p50 delay ms" in proc.stdout
    assert "seeds until precise on delay_p99_s (ms)" in proc.stdout


def test_the_sweep_figure_draws_delay_beside_goodput_and_the_tradeoff_in_the_given_order(swept, tmp_path):
    fig = plot_sweep.figure(swept)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    labels = [ax.get_ylabel() for ax in panels]
    assert "queueing delay, p95 (ms)" in labels
    assert labels.index("tcp goodput (Mbit/s)") < labels.index("queueing delay, p95 (ms)")
    tradeoff = next(ax for ax in panels if ax.get_xlabel().startswith("queueing delay, p95"))
    assert tradeoff.get_ylabel() == "goodput of all flows (Mbit/s)"
    assert tradeoff.xaxis_inverted()
    assert [t.get_text() for t in tradeoff.get_legend().get_texts()] == KINDS
    # Each point sits at its means: x the p95 delay (ms), y the goodput (Mbit/s).
    stats = swept.stats.set_index(["qdisc.kind", "metric"])
    xs = sorted(c.lines[0].get_xdata()[0] for c in tradeoff.containers)
    assert xs == pytest.approx(sorted(stats.loc[(k, "delay_p95_s"), "mean"] * 1e3 for k in KINDS))
    delay = next(ax for ax in panels if ax.get_ylabel() == "queueing delay, p95 (ms)")
    assert [t.get_text() for t in delay.get_xticklabels()] == KINDS
