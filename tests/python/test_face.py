"""One command tree: the Python package's `aqmlab` has the binary's subcommands
and flags, and prints the binary's help texts and completion scripts.

`_face.json` is generated from the clap tree and checked against it by
`crates/cli/tests/face.rs`, which also checks that the binary prints those very
texts; this file checks the argparse side against the same file."""

from __future__ import annotations

import argparse

import pytest

from aqmlab import __main__ as entry
from aqmlab import _cli

from conftest import run_cli

FACE = _cli.face()
PATHS = [p for p in FACE["commands"] if p]


def argparse_tree() -> dict[str, dict]:
    """{path: {"args": [...], "subcommands": [...]}} of the Python parser."""
    out: dict[str, dict] = {}

    def walk(p: argparse.ArgumentParser, path: str) -> None:
        args, subs = [], []
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, child in a.choices.items():
                    subs.append(name)
                    if name != "help":
                        walk(child, f"{path} {name}".strip())
                continue
            longs = [o[2:] for o in a.option_strings if o.startswith("--")]
            shorts = [o[1:] for o in a.option_strings if not o.startswith("--")]
            args.append(
                {
                    "long": longs[0] if longs else None,
                    "short": shorts[0] if shorts else None,
                    "positional": not a.option_strings,
                    "value": a.metavar if not a.option_strings else (a.nargs != 0),
                }
            )
        out[path] = {"args": sorted(args, key=repr), "subcommands": subs}

    walk(_cli.parser(), "")
    return out


def clap_tree() -> dict[str, dict]:
    out = {}
    for path, c in FACE["commands"].items():
        args = [
            {
                "long": a["long"],
                "short": a["short"],
                "positional": a["positional"],
                "value": a["value"] if a["positional"] else a["value"] is not None,
            }
            for a in c["args"]
        ]
        out[path] = {"args": sorted(args, key=repr), "subcommands": c["subcommands"]}
    return out


def test_the_python_tree_is_the_binarys():
    ours, theirs = argparse_tree(), clap_tree()
    assert sorted(ours) == sorted(theirs)
    for path in theirs:
        assert ours[path] == theirs[path], f"aqmlab {path}"


def test_every_subcommand_has_a_handler_and_a_line_in_the_help():
    top = FACE["commands"][""]
    for name in top["subcommands"]:
        if name != "help":
            assert name in _cli.COMMANDS or any(p.startswith(name + " ") for p in _cli.COMMANDS), name
        assert any(line.strip().startswith(name + " ") for line in top["help"].splitlines()), name
    for path in _cli.COMMANDS:
        assert path in FACE["commands"], f"{path} is not in the binary's tree"


@pytest.mark.parametrize("path", PATHS)
def test_help_and_dash_dash_help_print_the_binarys_texts(path, capsys):
    words = path.split()
    assert entry.main(["aqmlab", *words, "--help"]) == 0
    assert capsys.readouterr().out == FACE["commands"][path]["long_help"]
    assert entry.main(["aqmlab", *words, "-h"]) == 0
    assert capsys.readouterr().out == FACE["commands"][path]["help"]
    assert entry.main(["aqmlab", "help", *words]) == 0
    assert capsys.readouterr().out == FACE["commands"][path]["long_help"]


def test_top_level_help_version_and_errors(capsys):
    assert entry.main(["aqmlab", "--help"]) == 0
    assert capsys.readouterr().out == FACE["commands"][""]["long_help"]
    assert entry.main(["aqmlab", "help"]) == 0
    assert capsys.readouterr().out == FACE["commands"][""]["long_help"]
    assert entry.main(["aqmlab", "model", "help", "choke-back"]) == 0
    assert capsys.readouterr().out == FACE["commands"]["model choke-back"]["long_help"]
    assert entry.main(["aqmlab", "help", "frobnicate"]) == 2
    assert "unrecognized subcommand" in capsys.readouterr().err
    assert entry.main(["aqmlab", "--version"]) == 0
    assert capsys.readouterr().out.startswith("aqmlab ")
    assert entry.main(["aqmlab", "run", "--dur", "1s"]) == 2  # no abbreviations, as clap


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completions_are_the_binarys(shell):
    proc = run_cli("completions", shell, script=True)
    assert proc.returncode == 0
    assert proc.stdout == FACE["completions"][shell]
    # Every subcommand is completed.
    for name in ("run", "sweep", "repro", "queue-lab", "completions"):
        assert name in proc.stdout


def test_a_bad_shell_is_a_usage_error():
    proc = run_cli("completions", "tcsh")
    assert proc.returncode == 2 and proc.stderr.startswith("error: ")


def test_completions_offer_scenario_names_and_experiment_ids():
    from aqmlab import _aqmlab
    from aqmlab.repro import EXPERIMENTS

    for shell in ("bash", "zsh"):
        script = FACE["completions"][shell]
        for name, _ in _aqmlab.builtin_scenarios():
            assert name in script, (shell, name)
        for experiment in EXPERIMENTS:
            assert experiment in script, (shell, experiment)


def test_the_binarys_list_of_repro_ids_is_the_registrys():
    """`crates/cli/src/repro_ids.txt` (compiled into the completion scripts) lists
    every experiment, then the papers, then "all"; `make face` rewrites it."""
    from aqmlab.repro import EXPERIMENTS

    from conftest import ROOT

    listed = ROOT / "crates" / "cli" / "src" / "repro_ids.txt"
    if not listed.exists():
        pytest.skip("not in aqmlab's source tree")
    papers = sorted({e.paper for e in EXPERIMENTS.values()})
    assert listed.read_text().split() == list(dict.fromkeys([*EXPERIMENTS, *papers, "all"]))
