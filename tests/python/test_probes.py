"""Probe groups (`kind = "probe"`) through Python: their columns in a Result's
flows and groups tables and nested in its summary as the JSON nests them, and
their RTT quantiles as sweep metrics that --baseline and --precision take."""

from __future__ import annotations

import json

import pytest

import aqmlab
from aqmlab._run import tomllib

from conftest import ROOT, run_cli

RRUL = ROOT / "scenarios" / "rrul-like.toml"
PROBE_COLUMNS = [
    "probe_sent",
    "probe_echoed",
    "probe_lost",
    *(f"probe_rtt_{q}_s" for q in ("mean", "p50", "p95", "p99", "max")),
]


def _short() -> dict:
    with open(RRUL, "rb") as f:
        s = tomllib.load(f)
    s["duration"], s["warmup"] = "4s", "1s"
    return s


def test_a_results_probe_columns_are_null_but_on_probe_rows_and_nest_in_the_summary(tmp_path):
    r = aqmlab.run(_short())
    groups = r.groups.set_index("group")
    voip = groups.loc["voip"]
    assert voip["kind"] == "probe"
    # 3 measured seconds at one probe every 20 ms.
    assert voip["probe_sent"] == 150
    assert voip["probe_echoed"] + voip["probe_lost"] <= voip["probe_sent"]
    assert voip["probe_rtt_p50_s"] <= voip["probe_rtt_p99_s"] <= voip["probe_rtt_max_s"]
    assert groups.loc["bulk", PROBE_COLUMNS].isna().all()
    flows = r.flows
    probe = flows[flows["kind"] == "probe"].iloc[0]
    assert (probe["sent"], probe["delivered"]) == (probe["probe_sent"], probe["probe_echoed"])
    assert probe["fair_share_bps"] == 0
    # Left out of the fairness over all flows: the four bulk flows only.
    assert r.fairness["all"]["n"] == 4
    # The summary nests them as `aqmlab run --json` does, on probe rows only.
    proc = run_cli("run", str(RRUL), "--duration", "4s", "--warmup", "1s", "--json", "-q")
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    mine = r.summary
    for d in (printed, mine):
        d.pop("wall_seconds")
    assert mine == printed
    assert "probe" not in mine["groups"]["bulk"] and mine["groups"]["voip"]["probe"]["sent"] == 150
    assert "probes" in repr(r)


def test_a_sweep_takes_probe_rtts_as_metrics_with_baseline_and_precision(tmp_path):
    proc = run_cli(
        "sweep", str(RRUL), "--set", "qdisc.kind=droptail,fq_codel", "--duration", "4s", "--warmup", "1s",
        "--seeds", "2", "--max-seeds", "3", "--jobs", "1", "--baseline", "qdisc.kind=droptail",
        "--precision", "voip_probe_rtt_p99_s=50%", "--out", str(tmp_path / "o"), "-q",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "voip p99 rtt ms" in proc.stdout
    assert "seeds until precise on voip_probe_rtt_p99_s (ms)" in proc.stdout
    import pandas as pd

    runs = pd.read_parquet(tmp_path / "o" / "runs.parquet")
    for q in ("mean", "p50", "p95", "p99"):
        assert f"voip_probe_rtt_{q}_s" in runs.columns
    assert "voip_probe_lost" in runs.columns
    stats = pd.read_parquet(tmp_path / "o" / "stats.parquet").set_index(["qdisc.kind", "metric"])
    # FQ-CoDel isolates the sparse probes from the FIFO's standing queue.
    fq, fifo = (stats.loc[(k, "voip_probe_rtt_p99_s"), "mean"] for k in ("fq_codel", "droptail"))
    assert fq < fifo / 5
    paired = pd.read_parquet(tmp_path / "o" / "paired.parquet")
    assert (paired["metric"] == "voip_probe_rtt_p99_s").any()


@pytest.mark.parametrize(
    ("written", "bad"), [('interval = "20ms"', 'interval = "0s"'), ("packet_size = 64", "packet_size = 20")]
)
def test_bad_probe_keys_are_refused_with_their_line(tmp_path, written, bad):
    scenario = RRUL.read_text().replace(written, bad)
    path = tmp_path / "s.toml"
    path.write_text(scenario)
    proc = run_cli("run", str(path), "-q")
    assert proc.returncode == 2
    line = scenario.splitlines().index(bad) + 1
    key = bad.split(" ")[0]
    assert f"s.toml:{line}: flows[1] (voip): {key} = " in proc.stderr, proc.stderr
