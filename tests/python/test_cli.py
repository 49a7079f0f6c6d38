"""The `aqmlab` console script is the Rust command line program."""

from __future__ import annotations

import json

import aqmlab
from aqmlab import __main__ as entry

from conftest import CHOKE_FIG3, run_cli


def test_scenarios_lists_the_builtins():
    proc = run_cli("scenarios", script=True)
    assert proc.returncode == 0, proc.stderr
    names = [line.split()[0] for line in proc.stdout.splitlines()]
    assert names == list(aqmlab.scenarios().index)
    assert "(default)" in proc.stdout


def test_qdiscs_lists_the_kinds():
    proc = run_cli("qdiscs", script=True)
    assert proc.returncode == 0
    assert proc.stdout.split() == aqmlab.qdisc_kinds()


def test_run_prints_a_summary():
    proc = run_cli("run", "--duration", "21s", script=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("choke (seed 1)")
    assert "left->right" in proc.stdout


def test_run_json_is_one_object():
    proc = run_cli("run", str(CHOKE_FIG3), "--duration", "21s", "--json", "-q", script=True)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["scenario"] == "choke-fig3"
    assert "link_flows" not in summary


def test_exit_codes(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nduration = "1s"\nbogus = 1\n')
    proc = run_cli("run", str(bad), script=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {bad}:")
    assert run_cli("run", "missing.toml", script=True).returncode == 2
    assert run_cli("frobnicate", script=True).returncode == 2
    proc = run_cli("--help", script=True)
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[2].startswith("Usage: aqmlab")


def test_usage_names_the_program_aqmlab_under_python_m():
    proc = run_cli("--help")
    assert "Usage: aqmlab " in proc.stdout


def test_python_commands_are_dispatched_before_rust(monkeypatch):
    seen = []
    monkeypatch.setitem(entry.PYTHON_COMMANDS, "hello", lambda args: seen.append(args) or 3)
    assert entry.main(["aqmlab", "hello", "a", "b"]) == 3
    assert seen == [["a", "b"]]


def test_main_in_process():
    assert entry.main(["whatever", "qdiscs"]) == 0
