"""A campaign end to end: a sweep's statistics tables, paired differences
against a baseline, seeds until precise, and what `aqmlab sweep` prints of them;
and the common random numbers that make the pairing work."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import aqmlab
from aqmlab._run import tomllib
from aqmlab.stats import t_interval

from conftest import CHOKE_FIG3, run_cli


@pytest.fixture
def fig3() -> dict:
    """CHOKe Fig. 3 (32 TCP + 2 Mbps UDP over 1 Mbps), 4 s long."""
    with open(CHOKE_FIG3, "rb") as f:
        s = tomllib.load(f)
    s["duration"] = "4s"
    s["warmup"] = "1s"
    return s


def test_stats_and_paired_tables_are_the_runs_tables_statistics(fig3):
    sw = aqmlab.sweep(fig3, {"qdisc.kind": ["red", "choke"]}, seeds=4, jobs=1, baseline={"qdisc.kind": "red"})
    runs = sw.runs
    row = sw.stats.set_index(["qdisc.kind", "metric"]).loc[("choke", "tcp_goodput_bps")]
    n, mean, sd, low, high = t_interval(runs[runs["qdisc.kind"] == "choke"]["tcp_goodput_bps"].tolist())
    assert (row["n"], row["mean"], row["sd"], row["ci_low"], row["ci_high"]) == (n, mean, sd, low, high)
    # The paired table: CHOKe minus RED, seed by seed.
    by = runs.set_index(["qdisc.kind", "seed"])["tcp_goodput_bps"]
    diffs = [by[("choke", s)] - by[("red", s)] for s in (1, 2, 3, 4)]
    d = sw.paired.set_index("metric").loc["tcp_goodput_bps"]
    assert d["qdisc.kind"] == "choke"
    assert (d["n"], d["mean"], d["ci_low"]) == pytest.approx((*t_interval(diffs)[:2], t_interval(diffs)[3]))
    assert set(sw.paired["metric"]) == set(sw.stats["metric"])


def test_written_folder_has_the_stats_and_paired_tables(fig3, tmp_path):
    sw = aqmlab.sweep(fig3, {"qdisc.kind": ["red", "sfq"]}, seeds=2, jobs=1, baseline={"qdisc.kind": "red"})
    sw.write(tmp_path / "out")
    stats = pd.read_parquet(tmp_path / "out" / "stats.parquet")
    pd.testing.assert_frame_equal(stats, sw.stats, check_dtype=False)
    assert len(pd.read_parquet(tmp_path / "out" / "paired.parquet")) == len(sw.stats) // 2
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["baseline"] == {"qdisc.kind": "red"} and summary["level"] == 0.95


def test_baseline_errors_name_the_key_and_values(fig3):
    with pytest.raises(
        ValueError, match=r"baseline qdisc.kind='sfq' is not one of the sweep's values \(red, choke\)"
    ):
        aqmlab.sweep(fig3, {"qdisc.kind": ["red", "choke"]}, baseline={"qdisc.kind": "sfq"})
    with pytest.raises(ValueError, match=r"'qdisc.limit' is not a sweep key"):
        aqmlab.sweep(fig3, {"qdisc.kind": ["red", "choke"]}, baseline={"qdisc.limit": 100})


def test_precision_adds_seeds_until_the_interval_is_narrow_and_reports_the_stop(fig3):
    sw = aqmlab.sweep(
        fig3, {"qdisc.kind": ["red", "choke"]}, seeds=3, jobs=1, precision="jain_all=0.03", max_seeds=12
    )
    stopped = sw.stopped.set_index("qdisc.kind")
    stats = sw.stats.set_index(["qdisc.kind", "metric"])
    for kind in ("red", "choke"):
        s = stopped.loc[kind]
        assert s["seeds"] == stats.loc[(kind, "jain_all"), "n"]
        assert s["half_width"] == pytest.approx(stats.loc[(kind, "jain_all"), "half_width"])
        if s["reason"] == "precise":
            assert s["half_width"] <= 0.03
            # ... and one seed fewer was not precise yet (the sequential rule).
            runs = sw.runs[sw.runs["qdisc.kind"] == kind].sort_values("seed")
            _, _, _, low, high = t_interval(runs["jain_all"].tolist()[:-1])
            assert s["seeds"] == 3 or (high - low) / 2 > 0.03
        else:
            assert (s["reason"], s["seeds"]) == ("max-seeds", 12) and s["half_width"] > 0.03
    # Every point's seeds are the first of one sequence: 1, 2, 3, ...
    for _, rows in sw.runs.groupby("qdisc.kind"):
        assert sorted(rows["seed"]) == list(range(1, len(rows) + 1))


def test_precision_names_a_metric_the_runs_table_lacks(fig3):
    with pytest.raises(ValueError, match=r"no metric 'goodput'.*tcp_goodput_bps"):
        aqmlab.sweep(fig3, {"qdisc.kind": ["red", "choke"]}, jobs=1, precision="goodput=2%")


def test_an_unknown_precision_metric_is_refused_before_any_run(fig3, tmp_path):
    # A misspelt group ("tpc") is caught as a misspelt metric is: nothing is run or stored.
    for metric in ["tpc_goodput_bps", "tcp_goodput_bsp", "delay_p98_s"]:
        with pytest.raises(ValueError, match=rf"no metric '{metric}'; it has .*tcp_goodput_bps"):
            aqmlab.sweep(fig3, jobs=1, precision=f"{metric}=2%", cache_dir=tmp_path / "store")
        assert not any((tmp_path / "store").rglob("*.*"))


def test_the_metrics_known_before_the_runs_are_every_metric_the_runs_have(fig3):
    from aqmlab._sweep_result import runs_metric_names

    fig3.setdefault("monitor", {})["delays"] = True
    runs = aqmlab.sweep(fig3, {"qdisc.kind": ["red", "choke"]}, seeds=1, jobs=1).runs
    columns = set(runs.columns) - {"scenario", "qdisc.kind", "seed", "link"}
    assert any(c.startswith("udp_delay_") for c in columns)
    assert columns <= runs_metric_names(fig3)


def test_cli_prints_means_with_intervals_and_paired_differences(tmp_path):
    out = run_cli(
        "sweep", "choke-fig3", "--set", "qdisc.kind=red,choke", "--seeds", "3", "--duration", "3s",
        "--warmup", "1s", "--baseline", "qdisc.kind=red", "-j", "1", "-q", "--out", str(tmp_path / "o"),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "mean ± half-width of the 95% interval over 3 seeds a point" in out.stdout
    assert "paired differences against qdisc.kind=red" in out.stdout
    assert " ± " in out.stdout and (tmp_path / "o" / "paired.parquet").exists()


def test_cli_refuses_max_seeds_without_precision_and_a_bad_baseline(tmp_path):
    out = run_cli(
        "sweep", "choke-fig3", "--set", "qdisc.kind=red,choke", "--max-seeds", "5", "--out", str(tmp_path)
    )
    assert out.returncode == 2 and "--max-seeds" in out.stderr
    out = run_cli(
        "sweep", "choke-fig3", "--set", "qdisc.kind=red,choke", "--baseline", "red", "--out", str(tmp_path)
    )
    assert out.returncode == 2 and "--baseline 'red': expected KEY=VALUE" in out.stderr


def test_one_seed_offers_the_same_open_loop_arrivals_under_every_qdisc():
    """Common random numbers through the Python face: the Poisson and Pareto
    on/off sources' packets sent are the same for a seed whatever the qdisc,
    while TCP (closed-loop) sends differently (the Rust test checks the start
    times too: crates/sim/src/build/crn_tests.rs)."""
    scenario = {
        "name": "crn",
        "duration": "3s",
        "warmup": "0s",
        "topology": {
            "kind": "dumbbell",
            "access": {"rate": "100Mbps", "delay": "1ms"},
            "bottleneck": {"rate": "2Mbps", "delay": "10ms"},
        },
        "qdisc": {"kind": "red"},
        "flows": [
            {"name": "tcp", "kind": "tcp", "count": 6},
            {"name": "poisson", "kind": "poisson", "rate": "1Mbps", "count": 2},
            {"name": "onoff", "kind": "onoff", "rate": "1Mbps", "on": "100ms", "off": "100ms",
             "distribution": "pareto", "shape": 1.5},
        ],
    }  # fmt: skip
    grid = {"qdisc.kind": ["droptail", "red", "choke", "sfq", "fq_codel", "sfb"]}
    sw = aqmlab.sweep(scenario, grid, seeds=[1, 2], jobs=1)
    flows = sw.flows
    udp = flows[flows["kind"] != "tcp"].pivot_table(index=["seed", "id"], columns="qdisc.kind", values="sent")
    assert (udp.nunique(axis=1) == 1).all(), udp
    assert udp.loc[1].to_numpy().tolist() != udp.loc[2].to_numpy().tolist()
    tcp = flows[flows["kind"] == "tcp"].pivot_table(index=["seed", "id"], columns="qdisc.kind", values="sent")
    assert (tcp.nunique(axis=1) > 1).any()


def test_cli_json_says_where_precision_stopped(tmp_path):
    out = run_cli(
        "sweep", "choke-fig3", "--set", "qdisc.kind=red,choke", "--duration", "3s", "--warmup", "1s",
        "--precision", "jain_all=5%", "--max-seeds", "6", "-j", "1", "--json", "--out", str(tmp_path / "o"),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    stopped = {row["qdisc.kind"]: row for row in data["stopped"]}
    assert set(stopped) == {"red", "choke"}
    for kind, row in stopped.items():
        assert row["reason"] in ("precise", "max-seeds") and 3 <= row["seeds"] <= 6
        assert len([r for r in data["runs"] if r["qdisc.kind"] == kind]) == row["seeds"]
