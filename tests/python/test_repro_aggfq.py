"""The aggregate FQ paper's reproduction (seed 003): Fig. 3's network as the
generator and the scenario file build it, the schemes' queues, the fairness index,
eqs. (1)-(3), and short runs that show the livelock and the aggregation advantage."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import aqmlab
from aqmlab import networks
from aqmlab.repro import EXPERIMENTS, _core, resolve
from aqmlab.repro import aggfq as A

from conftest import ROOT, run_cli

AGGFQ_IDS = [
    "aggfq-fig4",
    "aggfq-fig5",
    "aggfq-fig6",
    "aggfq-fig7",
    "aggfq-fig8",
    "aggfq-livelock",
    "aggfq-advantage",
]


def test_every_experiment_is_registered_and_runs_from_the_paper_name():
    assert [e for e in EXPERIMENTS if e.startswith("aggfq-")] == AGGFQ_IDS
    assert [e.id for e in resolve("aggfq")] == AGGFQ_IDS
    proc = run_cli("repro", "--list")
    assert proc.returncode == 0, proc.stderr
    assert [x for x in (line.split()[0] for line in proc.stdout.splitlines()) if x.startswith("aggfq")] == (
        AGGFQ_IDS
    )


def test_the_scenario_file_is_the_generators_output():
    text = (ROOT / "scenarios" / "aggfq-fig3.toml").read_text()
    assert text == networks.to_toml(networks.aggfq(), networks.header())
    assert _core.load_scenario("aggfq-fig3") == networks.aggfq()


def _links(scenario):
    return {(lk["from"], lk["to"]): lk for lk in scenario["topology"]["links"]}


def test_the_network_is_fig3():
    s = networks.aggfq()
    links = _links(s)
    tcp = [f for f in s["flows"] if f["kind"] == "tcp"]
    assert len(tcp) == 100
    assert all(f["variant"] == "reno" and f["packet_size"] == 1000 for f in tcp)
    # Each source on its own 64 kbit/s, 10 ms link to its IR; aggregate i = IR_i.
    for f in tcp:
        i = f["aggregate"]
        assert links[(f["from"], f"IR{i}")]["rate"] == "64kbit"
        assert links[(f["from"], f"IR{i}")]["delay"] == "10ms"
        assert links[(f"ER{i}", f["to"])]["rate"] == "64kbit"
    for i in range(1, 11):
        assert sum(f["aggregate"] == i for f in tcp) == 10
        assert links[(f"IR{i}", "CR1")]["rate"] == "640kbit"
        assert links[("CR2", f"ER{i}")]["delay"] == "2ms"
    assert links[("CR1", "CR2")]["rate"] == "3200kbit"
    (udp,) = [f for f in s["flows"] if f["kind"] == "cbr"]
    assert udp["rate"] == "800kbit" and udp["weight"] == 10 and udp["aggregate"] == 11
    # Only the bottleneck is monitored or has its own queue.
    assert [k for k, lk in links.items() if lk.get("monitor", True)] == [("CR1", "CR2")]
    assert [k for k, lk in links.items() if "qdisc" in lk] == [("CR1", "CR2")]


def test_the_generator_takes_n_rates_and_the_variants():
    s = networks.aggfq(4, 3, bottleneck_kbit=1000, access_kbit=100)
    links = _links(s)
    assert sum(f["kind"] == "tcp" for f in s["flows"]) == 12
    assert links[("IR3", "CR1")]["rate"] == "400kbit"
    assert next(f for f in s["flows"] if f["kind"] == "cbr")["rate"] == "250kbit"
    s = networks.aggfq([11, 9] + [10] * 8, long_rtt=[(1, 1)], telnets=4)
    tcp = [f for f in s["flows"] if f["kind"] == "tcp"]
    assert [sum(f["aggregate"] == i for f in tcp) for i in (1, 2, 3)] == [11, 9, 10]
    assert sum(f["kind"] == "web" for f in s["flows"]) == 40
    links = _links(s)
    assert links[("s.a01f01", "IR1")]["delay"] == "100ms" and links[("ER1", "d.a01f01")]["delay"] == "100ms"
    assert links[("s.a01f02", "IR1")]["delay"] == "10ms"
    with pytest.raises(ValueError, match="one positive count per aggregate"):
        networks.aggfq([10, 10], 3)
    aqmlab.run(s, duration="1s", warmup="0s")  # a valid scenario


def test_the_generator_command_writes_a_scenario_that_runs(tmp_path):
    proc = run_cli("--help")  # the package's command is unaffected
    assert proc.returncode == 0
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "aqmlab.networks", "--flows", "3", "--aggregates", "2", "--bottleneck", "500"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "--flows 3 --aggregates 2 --bottleneck 500" in out
    path = tmp_path / "small.toml"
    path.write_text(out)
    r = aqmlab.run(str(path), duration="2s", warmup="0s")
    assert len(r.flows) == 7


def test_the_schemes_queues():
    assert A.qdisc("fifo_red", 100) == {
        "kind": "red",
        "limit": 100,
        "min_th": 25.0,
        "max_th": 75.0,
        "w_q": 0.002,
        "max_p": 0.1,
        "mean_pkt_size": 1000,
    }
    assert A.qdisc("agg_alqd_plus", 50) == {
        "kind": "wfq",
        "classify": "aggregate",
        "buffer": "alqd_plus",
        "limit": 50,
    }
    assert A.qdisc("flow_alqd", 50, {1: 10})["classify"] == "flow"
    assert "weights" not in A.qdisc("flow_alqd", 50, {1: 10})  # per-flow FQ has no aggregate weights
    assert A.qdisc("agg_alqd", 50, {2: 10, 1: 12})["weights"] == {"1": 12.0, "2": 10.0}
    with pytest.raises(ValueError, match="unknown scheme"):
        A.qdisc("agg_red", 50)
    # Each figure's points swap the bottleneck's queue and nothing else.
    for exp_id in ("aggfq-fig4", "aggfq-fig8"):
        for p in EXPERIMENTS[exp_id].build_points():
            links = _links(p.scenario)
            assert links[("CR1", "CR2")]["qdisc"]["limit"] == p.label["buffer"]
            assert p.scenario["qdisc"] == {"kind": "droptail", "limit": 50}
    fig8 = EXPERIMENTS["aggfq-fig8"].build_points()
    weights = [_links(p.scenario)[("CR1", "CR2")]["qdisc"].get("weights") for p in fig8]
    assert {"1": 10.0, "2": 10.0}.items() <= next(w for w in weights if w).items()


def test_the_fairness_index_averages_over_runs_before_the_cov():
    # Two runs in which the flows swap goodputs: each run is unfair, the average fair.
    runs = pd.DataFrame({"g.a01f01": [10.0, 30.0], "g.a01f02": [30.0, 10.0], "g.a02f01": [20.0, 20.0]})
    assert A.fairness(runs) == 0.0
    assert A.cov([1.0, 3.0]) == pytest.approx(0.5)  # population sd 1, mean 2
    assert A.fairness(runs.iloc[:1], 1) == pytest.approx(0.5)
    # Aggregates: a01 sums 40, a02 20.
    assert A.aggregate_fairness(runs) == pytest.approx(1 / 3)


def test_eqs_1_to_3():
    # eq. (1): every flow backlogged, both ways r_i / (R + R_hat) = 1/8.
    assert A.advantage_share("eq1", "flow") == A.advantage_share("eq1", "aggregate") == 1 / 8
    # eq. (2): r' = 2 of aggregate 1 idle; per flow 1 / (R - r' + R_hat), aggregate
    # r_i / (R + R_hat) * R / (R - r').
    assert A.advantage_share("eq2", "flow") == pytest.approx(1 / 6)
    assert A.advantage_share("eq2", "aggregate") == pytest.approx(1 / 8 * 4 / 2)
    # eq. (3): r' = 2 of the others idle; both r_i / (R + R_hat - r').
    assert A.advantage_share("eq3", "flow") == A.advantage_share("eq3", "aggregate") == pytest.approx(1 / 6)
    assert math.isclose(A.udp_share_kbps(), 3200 * 10 / 110)


def test_the_livelock_and_its_fix_in_short_runs():
    # WFQ + DropFront: without the fix the over-rate CBR flow is shut out; with it
    # it gets its weighted share wherever the others keep their queues busy.
    table = aqmlab.repro("aggfq-livelock", seeds=1, duration="20s", jobs=1)
    ratio = dict(zip(table["quantity"], table["ours"]))
    for where in ("Fig. 3's network", "4 TCP of window 4"):
        for classify in ("flow", "aggregate"):
            assert (
                ratio[f"{where}, {classify} WFQ + DropFront, no fix: UDP goodput / its weighted share"] < 0.05
            )
    for where, classify in (("Fig. 3's network", "aggregate"), ("4 TCP of window 4", "flow")):
        fixed = ratio[f"{where}, {classify} WFQ + DropFront, fix: UDP goodput / its weighted share"]
        assert 0.85 < fixed < 1.15, (where, classify, fixed)


def test_the_aggregation_advantage_in_short_runs():
    table = aqmlab.repro("aggfq-advantage", seeds=1, duration="10s", jobs=1)
    assert (table["verdict"] == "PASS").all(), table[["quantity", "ours", "lo", "hi"]]


def test_fig4_end_to_end_in_short_runs(tmp_path):
    table = aqmlab.repro("aggfq-fig4", seeds=1, duration="10s", jobs=1, out=tmp_path)
    assert len(table) == 9
    assert table["verdict"].isin(["PASS", "MISS", "OPEN"]).all()
    summary = pd.read_parquet(tmp_path / "aggfq-fig4-summary.parquet")
    assert len(summary) == 25 and summary["cov"].notna().all()
    with open(tmp_path / "aggfq-fig4.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
