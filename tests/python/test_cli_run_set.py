"""`aqmlab run --set KEY=VALUE` (and `aqmlab.run(..., set={...})`): dotted keys
as a sweep takes them, one value each, and every table of a single run labelled
with the scenario, each key and the seed."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest

import aqmlab

from conftest import cli_error, run_cli

SHORT = {"duration": "3s", "warmup": "1s"}
FLAGS = ["--duration", "3s", "--warmup", "1s"]


def _without_wall(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k != "wall_seconds"}


def test_set_from_the_command_line_changes_the_run_and_labels_every_table(tmp_path):
    out = tmp_path / "dt"
    proc = run_cli(
        "run", "choke-fig3", *FLAGS, "--set", "qdisc.kind=droptail", "--set", "flows.udp.count=2",
        "--seed", "7", "-q", "--json", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["links"][0]["qdisc"] == "droptail"
    assert summary["groups"]["udp"]["count"] == 2
    for name in ("run", "flows", "groups", "links", "queue", "fairness"):
        table = pq.read_table(out / f"{name}.parquet")
        assert table.column_names[:4] == ["scenario", "qdisc.kind", "flows.udp.count", "seed"], name
        assert set(table.column("qdisc.kind").to_pylist()) <= {"droptail"}
        assert set(table.column("seed").to_pylist()) <= {7}
    # The folder reads back as the same run.
    back = aqmlab.Result.read(out)
    assert _without_wall(back.summary) == _without_wall(summary)


def test_run_set_labels_the_results_tables_and_they_concatenate():
    runs = [
        aqmlab.run("choke-fig3", seed=3, set={"qdisc.kind": k}, progress=False, **SHORT)
        for k in ("red", "droptail")
    ]
    for r in runs:
        assert list(r.flows.columns[:3]) == ["scenario", "qdisc.kind", "seed"]
        assert list(r.run.columns[:3]) == ["scenario", "qdisc.kind", "seed"]
        # The summary is the --json object: no label inside it.
        assert "qdisc.kind" not in r.summary and "scenario" not in r.summary["flows"][0]
    flows = pd.concat([r.flows for r in runs])
    assert sorted(flows["qdisc.kind"].unique()) == ["droptail", "red"]
    # Each row's label is what ran: the bottleneck's qdisc.
    links = pd.concat([r.links for r in runs])
    bottleneck = links[links["name"] == "left->right"]
    assert list(bottleneck["qdisc"]) == list(bottleneck["qdisc.kind"]) == ["red", "droptail"]


def test_run_set_is_the_same_run_as_the_scenario_edited_by_hand():
    by_set = aqmlab.run("choke-fig3", set={"qdisc.kind": "droptail"}, progress=False, **SHORT)
    by_hand = aqmlab.run("choke-fig3", qdisc={"kind": "droptail", "limit": 300}, progress=False, **SHORT)
    assert _without_wall(by_set.summary) == _without_wall(by_hand.summary)
    # And the command line's --set gives that very run.
    proc = run_cli("run", "choke-fig3", *FLAGS, "--set", "qdisc.kind=droptail", "--json", "-q")
    assert _without_wall(json.loads(proc.stdout)) == _without_wall(by_set.summary)


def test_a_plain_run_is_labelled_with_its_scenario_and_seed():
    r = aqmlab.run("choke-fig3", seed=5, progress=False, **SHORT)
    assert list(r.flows.columns[:3]) == ["scenario", "seed", "id"]
    assert set(r.flows["seed"]) == {5}
    assert r.seed == 5 and r.scenario == r.flows["scenario"].iloc[0]


def test_a_bad_key_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"--set flows\.web\.rate: flows has no entry named 'web'"):
        aqmlab.run("choke-fig3", set={"flows.web.rate": "1Mbps"}, progress=False, **SHORT)
    with pytest.raises(ValueError, match=r"qdisc\.frobs"):
        aqmlab.run("choke-fig3", set={"qdisc.frobs": 3}, progress=False, **SHORT)
    with pytest.raises(ValueError, match=r"--set qdisc\.\.kind: the key has an empty step"):
        aqmlab.run("choke-fig3", set={"qdisc..kind": "red"}, progress=False, **SHORT)
    with pytest.raises(ValueError, match="set must be a dict"):
        aqmlab.run("choke-fig3", set=["qdisc.kind=red"], progress=False, **SHORT)
    assert cli_error("run", "choke-fig3", "--set", "flows.web.rate=1Mbps").startswith(
        "--set flows.web.rate: flows has no entry named 'web'"
    )
    assert "one value per key" in cli_error("run", "choke-fig3", "--set", "qdisc.kind=red,sfb")
