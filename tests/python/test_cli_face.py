"""One command line for both installs: the Python package's `aqmlab` hands its
argv to the binary's own parser (declared once, in `crates/command`), so the same
argv prints the same help, error, suggestion and completion script, with the same
exit status, from the binary and from `python -m aqmlab`."""

from __future__ import annotations

import subprocess

import pytest

from aqmlab import _cli

from conftest import ROOT, cargo_binary, run_cli

BINARY = cargo_binary()
needs_binary = pytest.mark.skipif(BINARY is None, reason="no aqmlab binary built (cargo build -p aqmlab-cli)")

#: Command lines whose whole output is the parser's or a subcommand's that only
#: prints: each must read the same from both installs.
SAME = [
    [],
    ["--help"],
    ["-h"],
    ["--version"],
    ["help"],
    ["help", "run"],
    ["help", "model", "choke-back"],
    ["model", "help", "choke-back"],
    ["run", "--help"],
    ["run", "-h"],
    ["sweep", "--help"],
    ["repro", "-h"],
    ["plot", "--help"],
    ["queue-lab", "--help"],
    ["completions", "--help"],
    ["swep"],  # a similar subcommand exists
    ["run", "--seeed", "3"],  # a similar argument exists
    ["run", "--dur", "1s"],  # no abbreviations
    ["help", "frobnicate"],
    ["frobnicate"],
    ["model"],
    ["qdiscs", "fq_magic"],
    ["completions", "tcsh"],
    ["run", "--seed", "-1"],
    ["run", "--out", ""],
    ["sweep", "--seeds", "0"],
    ["sweep", "--seeds", "2", "--seed-list", "1"],
    ["sweep", "--max-seeds", "5"],  # needs --precision
    ["sweep", "--jobs", "2", "--scheduler", "tcp://h:1"],
    ["plot"],
    ["model", "sfb-misclass", "--levels", "2", "--bins", "0", "--nonresponsive", "4"],
    ["model", "choke-front", "--mu", "1", "--rates", "0.5,1", "--json"],
    ["queue-lab", "--rates", "0.5,0", "--packets", "10"],
    ["tc", "tc qdisc add dev eth0 root codel fast"],
    ["scenarios"],
    ["qdiscs"],
    ["qdiscs", "red"],
    ["completions", "bash"],
    ["completions", "zsh"],
    ["completions", "fish"],
    ["run", "choke-fig3", "--set", "qdisc.kind=red,sfb"],
    ["run", "choke-fig3", "--set", "flows.web.rate=1Mbps"],
    ["emulate", "choke-fig3", "--app", "udp", "--compare", "--", "true"],
    ["emulate", "choke-fig3", "--app", "udp"],
    ["emulate", "choke-fig3", "--", "true"],
]


@needs_binary
@pytest.mark.parametrize("argv", SAME, ids=lambda a: " ".join(a) or "(none)")
def test_the_same_argv_prints_the_same_from_both_installs(argv):
    theirs = subprocess.run([str(BINARY), *argv], capture_output=True, text=True, timeout=120)
    ours = run_cli(*argv)
    assert (ours.returncode, ours.stdout, ours.stderr) == (theirs.returncode, theirs.stdout, theirs.stderr)
    assert "_cmd_" not in ours.stdout + ours.stderr


def test_errors_suggest_and_never_show_internal_names():
    proc = run_cli("swep")
    assert proc.returncode == 2
    assert "tip: a similar subcommand exists: 'sweep'" in proc.stderr
    proc = run_cli("run", "--seeed", "3")
    assert proc.returncode == 2
    assert "tip: a similar argument exists: '--seed'" in proc.stderr
    proc = run_cli("sweep", "--max-seeds", "5")
    assert proc.returncode == 2 and "--precision" in proc.stderr
    for argv in (["frobnicate"], [], ["help", "frobnicate"], ["model"]):
        proc = run_cli(*argv)
        assert proc.returncode == 2
        assert "_cmd" not in proc.stderr and "_cmd" not in proc.stdout


def test_help_is_on_stdout_with_status_0_and_lists_every_subcommand():
    proc = run_cli("--help")
    assert proc.returncode == 0 and proc.stderr == ""
    for name in ("run", "emulate", "sweep", "repro", "plot", "scenarios", "qdiscs", "tc", "model"):
        assert any(line.strip().startswith(name + " ") for line in proc.stdout.splitlines()), name
    assert run_cli("help", "sweep").stdout == run_cli("sweep", "--help").stdout


def test_the_subcommands_python_runs_have_handlers():
    assert sorted(_cli.HANDLERS) == ["emulate", "plot", "repro", "run", "sweep"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completions_complete_subcommands_and_flags(shell):
    proc = run_cli("completions", shell, script=True)
    assert proc.returncode == 0
    for word in ("run", "sweep", "repro", "queue-lab", "completions", "seed-list"):
        assert word in proc.stdout, word


def test_completions_offer_scenario_names_and_experiment_ids():
    from aqmlab import _aqmlab
    from aqmlab.repro import EXPERIMENTS

    for shell in ("bash", "zsh"):
        script = run_cli("completions", shell).stdout
        for name, _ in _aqmlab.builtin_scenarios():
            assert name in script, (shell, name)
        for experiment in EXPERIMENTS:
            assert experiment in script, (shell, experiment)


def test_the_binarys_list_of_repro_ids_is_the_registrys():
    """`crates/command/src/repro_ids.txt` (compiled into the completion scripts)
    lists every experiment, then the papers, then "all"; `make repro-ids`
    rewrites it."""
    from aqmlab.repro import EXPERIMENTS

    listed = ROOT / "crates" / "command" / "src" / "repro_ids.txt"
    if not listed.exists():
        pytest.skip("not in aqmlab's source tree")
    papers = sorted({e.paper for e in EXPERIMENTS.values()})
    assert listed.read_text().split() == list(dict.fromkeys([*EXPERIMENTS, *papers, "all"]))
