"""The BREATHe paper's reproduction (seed 001): the experiments and their points,
the heavy-hitter set's bound in a short run, and BREATHe's diagnostic as a user
meets it (the results, a RuntimeWarning, the command's stderr)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import aqmlab
from aqmlab.repro import EXPERIMENTS, _core, resolve
from aqmlab.repro import breathe as B

from conftest import run_cli

BREATHE_IDS = ["breathe-fig2", "breathe-fig3", "breathe-k"]


def test_every_experiment_is_registered_and_runs_from_the_paper_name():
    assert [e for e in EXPERIMENTS if e.startswith("breathe-")] == BREATHE_IDS
    assert [e.id for e in resolve("breathe")] == BREATHE_IDS


def test_the_points_swap_the_bottleneck_queue_and_nothing_else():
    base = _core.load_scenario("breathe-fig2")
    groups = {f["name"]: (f.get("count"), f.get("rate")) for f in base["flows"]}
    assert groups == {
        "tcp": (1000, None),
        "udp10k": (10, "10kbit"),
        "udp100k": (5, "100kbit"),
        "udp500k": (5, "500kbit"),
        "udp1m": (5, "1Mbps"),
        "udp10m": (5, "10Mbps"),
    }
    points = EXPERIMENTS["breathe-fig2"].build_points()
    assert [p.label["qdisc"] for p in points] == list(B.SCHEMES)
    for p in points:
        rest = {k: v for k, v in p.scenario.items() if k != "qdisc"}
        assert rest == {k: v for k, v in base.items() if k != "qdisc"}
        assert p.scenario["qdisc"] == B.SCHEMES[p.label["qdisc"]]
    by = {p.label["qdisc"]: p.scenario["qdisc"] for p in points}
    assert by["sfq"]["divisor"] == 16 and by["sfq"]["depth"] == 18
    assert by["afd"]["shadow"] == 30000
    # The K of each BREATHe reading: rate_limit alone, or counters alone.
    assert by["breathe"]["rate_limit"] == "100kbit" and "counters" not in by["breathe"]
    assert by["breathe-fair"]["counters"] == 1031 and "rate_limit" not in by["breathe-fair"]
    assert [p.label["k"] for p in EXPERIMENTS["breathe-k"].build_points()] == list(B.K_SWEEP)


def _short(qdisc: dict, seconds: int = 60) -> aqmlab.Result:
    s = _core.load_scenario("breathe-fig2")
    s["qdisc"] = qdisc
    s["duration"], s["warmup"] = f"{seconds}s", f"{seconds // 5}s"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return aqmlab.run(s, seed=1)


def _per_flow_kbps(result: aqmlab.Result, group: str) -> float:
    lf = result.link_flows
    lf = lf[lf["link"] == B.BOTTLENECK].set_index("flow")
    ids = result.flows.loc[result.flows["group"] == group, "id"]
    return float(lf["throughput_bps"].reindex(ids).fillna(0).mean()) / 1e3


def test_k_counters_hold_each_unresponsive_flow_below_c_over_k_plus_1():
    # A flow above 1/(K+1) of the admitted packets is always in the set and
    # blocked between the thresholds: the 10 Mbit/s flows keep at most C/(K+1).
    for k in (10, 100):
        r = _short({"kind": "breathe", **B.RED, "counters": k})
        bound = 1000 / (k + 1)
        # At most the bound (10% for the estimate's slack), yet let through once
        # worn out of the set: the "breathing".
        assert 0.5 * bound < _per_flow_kbps(r, "udp10m") <= 1.1 * bound, k
        assert r.diagnostics.empty


def test_breathe_says_when_nothing_is_evicted_in_results_warnings_and_stderr(tmp_path):
    s = _core.load_scenario("breathe-fig2")
    s["qdisc"] = {"kind": "breathe", **B.RED, "counters": 1031}
    s["duration"], s["warmup"] = "20s", "4s"
    with pytest.warns(RuntimeWarning, match=r"never evicted a flow \(1030 flows seen, K = 1031"):
        r = aqmlab.run(s, seed=1)
    assert r.diagnostics.to_dict("records")[0]["link"] == "left->right"
    assert r.summary["diagnostics"][0]["qdisc"] == "breathe"
    # The command: one warning line on stderr, the summary on stdout untouched.
    choke = _core.load_scenario("choke-fig3")
    path = tmp_path / "few.toml"
    text = (Path(__file__).parents[2] / "scenarios" / "choke-fig3.toml").read_text()
    red = 'kind = "red"\nlimit = 300\nmin_th = 100\nmax_th = 200\n'
    assert red in text and choke["qdisc"]["kind"] == "red"
    path.write_text(text.replace(red, 'kind = "breathe"\ncounters = 100\n'))
    proc = run_cli("run", str(path), "--duration", "10s", "--warmup", "2s", "-q")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("warning: left->right: breathe: "), proc.stderr
    assert "warning" not in proc.stdout
    proc = run_cli("run", "choke-fig3", "--duration", "10s", "--warmup", "2s", "-q")
    assert "warning" not in proc.stderr
