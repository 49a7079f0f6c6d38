"""aqmlab.run: results that mean something, agreement with the CLI, determinism,
dict scenarios and overrides."""

from __future__ import annotations

import json
import pathlib

import pytest

import aqmlab

from conftest import CHOKE_FIG3, run_cli


@pytest.fixture(scope="module")
def fig3():
    return aqmlab.run("choke-fig3", duration="30s", warmup="10s")


def without_wall(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k != "wall_seconds"}


def test_red_lets_the_udp_flow_take_the_link(fig3):
    # CHOKe paper, Fig. 3: under RED the 2 Mbit/s UDP flow takes nearly all of 1 Mbit/s.
    udp = fig3.groups.set_index("group").loc["udp"]
    assert udp["goodput_bps"] > 0.9e6
    tcp = fig3.groups.set_index("group").loc["tcp"]
    assert tcp["count"] == 32
    assert tcp["goodput_bps"] < 0.1e6
    # approx: Time::as_secs_f64 multiplies by 1e-9, so 30 s prints as 30.000000000000004
    assert fig3.summary["warmup_s"] == pytest.approx(10.0)
    assert fig3.summary["duration_s"] == pytest.approx(30.0)


def test_tables_have_one_row_per_thing(fig3):
    flows = fig3.flows
    assert len(flows) == 33
    assert "drops" not in flows.columns
    assert {"drops_early", "drops_forced", "drops_total", "goodput_bps"} <= set(flows.columns)
    drop_columns = [c for c in flows.columns if c.startswith("drops_") and c != "drops_total"]
    assert (flows[drop_columns].sum(axis=1) == flows["drops_total"]).all()
    assert flows.groupby("group")["goodput_bps"].sum().to_dict() == pytest.approx(
        fig3.groups.set_index("group")["goodput_bps"].to_dict()
    )

    links = fig3.links
    assert "queue" not in links.columns
    bottleneck = links.set_index("name").loc["left->right"]
    assert bottleneck["qdisc"] == "red"
    assert bottleneck["utilization"] > 0.95

    queue = fig3.queue
    # A single run's tables start with its labels: scenario and seed.
    assert list(queue.columns) == ["scenario", "seed", "link", "t_s", "packets", "bytes"]
    assert set(queue["link"]) == set(links["name"])
    q = queue[queue["link"] == "left->right"]
    assert q["t_s"].is_monotonic_increasing
    assert q["packets"].max() <= 300  # the RED limit
    assert (q["bytes"] == q["packets"] * 1000).all()  # every data packet is 1000 bytes

    lf = fig3.link_flows
    assert list(lf.columns) == [
        "scenario",
        "seed",
        "link",
        "flow",
        "throughput_bps",
        "packets",
        "mean_queue_packets",
    ]
    on_bottleneck = lf[lf["link"] == "left->right"]
    assert on_bottleneck["throughput_bps"].sum() == pytest.approx(bottleneck["throughput_bps"], rel=0.01)
    # Per-flow occupancy adds up to the link's time-averaged queue.
    assert on_bottleneck["mean_queue_packets"].sum() == pytest.approx(
        bottleneck["mean_queue_packets"], rel=1e-9
    )


def test_summary_equals_the_cli_json():
    proc = run_cli("run", "choke-fig3", "--duration", "30s", "--seed", "7", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    cli = json.loads(proc.stdout)
    r = aqmlab.run("choke-fig3", duration="30s", seed=7)
    assert "link_flows" not in r.summary
    assert without_wall(r.summary) == without_wall(cli)
    assert r.seed == 7


def test_same_seed_same_results_other_seed_other_results():
    a = aqmlab.run(CHOKE_FIG3, duration="25s", seed=11)
    b = aqmlab.run(str(CHOKE_FIG3), duration="25s", seed=11)
    c = aqmlab.run(CHOKE_FIG3, duration="25s", seed=12)
    assert without_wall(a.summary) == without_wall(b.summary)
    assert a == b
    assert a.link_flows.equals(b.link_flows)
    assert without_wall(a.summary)["flows"] != without_wall(c.summary)["flows"]


def test_a_path_a_name_and_the_default_are_one_scenario():
    by_path = aqmlab.run(pathlib.Path(CHOKE_FIG3), duration="22s")
    by_name = aqmlab.run("choke-fig3", duration="22s")
    assert without_wall(by_path.summary) == without_wall(by_name.summary)
    default = aqmlab.run(duration="22s")
    by_default_name = aqmlab.run("choke", duration="22s")
    assert without_wall(default.summary) == without_wall(by_default_name.summary)
    assert default.links.loc[0, "qdisc"] == "choke"


SMALL = {
    "name": "small",
    "duration": "5s",
    "warmup": "1s",
    "topology": {
        "kind": "dumbbell",
        "access": {"rate": "100Mbps", "delay": "1ms"},
        "bottleneck": {"rate": "10Mbps", "delay": "10ms"},
    },
    "qdisc": {"kind": "red", "min_th": 20, "max_th": 60},
    "flows": [{"name": "bulk", "kind": "tcp", "count": 4}],
}


def test_a_dict_scenario_runs(tmp_path):
    r = aqmlab.run(SMALL)
    assert r.scenario == "small"
    assert r.groups.set_index("group").loc["bulk", "count"] == 4
    assert r.links.loc[0, "name"] == "left->right"
    assert r.links.loc[0, "utilization"] > 0.9
    # The same scenario written as TOML gives the same results.
    toml_text = """
name = "small"
duration = "5s"
warmup = "1s"
[topology]
kind = "dumbbell"
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms" }
[qdisc]
kind = "red"
min_th = 20
max_th = 60
[[flows]]
name = "bulk"
kind = "tcp"
count = 4
"""
    (tmp_path / "small.toml").write_text(toml_text)
    assert aqmlab.run(tmp_path / "small.toml") == r


def test_overrides_replace_top_level_keys():
    r = aqmlab.run("choke-fig3", duration="25s", warmup="5s", qdisc={"kind": "droptail", "limit": 300})
    assert r.links.loc[0, "qdisc"] == "droptail"
    assert r.summary["warmup_s"] == pytest.approx(5.0)
    assert r.links.loc[0, "drops_early"] == 0  # DropTail drops only on overflow

    udp_only = aqmlab.run(
        SMALL, flows=[{"name": "udp", "kind": "cbr", "rate": "2Mbps", "count": 3}], name="renamed"
    )
    assert list(udp_only.groups["group"]) == ["udp"]
    assert udp_only.scenario == "renamed"
    assert udp_only.groups.set_index("group").loc["udp", "goodput_bps"] == pytest.approx(6e6, rel=0.02)


def test_an_override_of_none_removes_the_key():
    r = aqmlab.run(SMALL, qdisc=None)
    assert r.links.loc[0, "qdisc"] == "droptail"  # the default qdisc


def test_numpy_values_are_accepted():
    np = pytest.importorskip("numpy")
    r = aqmlab.run(SMALL, seed=np.int64(3), monitor={"queue_interval": "50ms"})
    assert r.seed == 3
    # 5 s at one sample per 50 ms
    assert (r.queue["link"] == "left->right").sum() == pytest.approx(100, abs=2)


def test_catalogue():
    s = aqmlab.scenarios()
    assert "choke-fig3" in s.index
    assert s.loc["choke", "default"] and not s.loc["choke-fig3", "default"]
    assert s["description"].str.len().gt(0).all()
    assert aqmlab.scenario_text("choke-fig3") == CHOKE_FIG3.read_text()
    assert {"droptail", "red"} <= set(aqmlab.qdisc_kinds())


def test_warmup_is_an_argument_and_measures_after_it():
    r = aqmlab.run(SMALL, warmup="2s")
    assert r.run.loc[0, "warmup_s"] == pytest.approx(2.0)
    assert r.run.loc[0, "duration_s"] == pytest.approx(5.0)
    # The same as the scenario's own key set to it.
    assert r == aqmlab.run({**SMALL, "warmup": "2s"})
    proc = run_cli("run", "choke-fig3", "--duration", "12s", "--warmup", "2s", "--json", "-q")
    assert proc.returncode == 0, proc.stderr
    cli = json.loads(proc.stdout)
    assert cli["warmup_s"] == pytest.approx(2.0)
    assert without_wall(cli) == without_wall(aqmlab.run("choke-fig3", duration="12s", warmup="2s").summary)


def test_rates_in_tc_and_ns3_spellings_are_the_same_rate():
    bits = aqmlab.run(SMALL, flows=[{"name": "u", "kind": "cbr", "rate": "2Mbps"}])
    for spelling in ("2Mbit", "2mbit", "2Mb/s", "250KBps", "2000kbit"):
        other = aqmlab.run(SMALL, flows=[{"name": "u", "kind": "cbr", "rate": spelling}])
        assert other == bits, spelling


def test_a_configuration_that_does_less_than_it_says_warns_and_one_that_does_nothing_is_refused(tmp_path):
    red = {"kind": "red", "min_th": 100, "max_th": 200, "limit": 150}
    with pytest.warns(RuntimeWarning, match=r"qdisc: max_th = 200 is not below limit = 150"):
        aqmlab.run("choke-fig3", duration="22s", qdisc=red, progress=False)
    with pytest.raises(ValueError, match=r"qdisc: limit = 100 is not above min_th = 100"):
        aqmlab.run("choke-fig3", duration="22s", qdisc={**red, "limit": 100}, progress=False)
    # The command prints the warning at the file's line.
    text = CHOKE_FIG3.read_text()
    path = tmp_path / "s.toml"
    path.write_text(text.replace("limit = 300", "limit = 150"))
    proc = run_cli("run", str(path), "--duration", "22s", script=True)
    assert proc.returncode == 0, proc.stderr
    line = text.splitlines().index("max_th = 200") + 1
    assert proc.stderr.startswith(f"warning: {path}:{line}: qdisc: max_th = 200 is not below limit = 150")
