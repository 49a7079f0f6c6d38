"""The `aqmlab` console script: the Rust commands through the extension, output
folders that pandas and polars read, and the binary's behaviour where both exist."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

import aqmlab
from aqmlab import __main__ as entry
from aqmlab import _aqmlab

from conftest import CHOKE_FIG3, ROOT, run_cli

# `cargo test` builds the binary where CARGO_TARGET_DIR says (a relative one is
# relative to the workspace). CI runs `cargo test` first: there a missing binary is
# a failure, not a skip.
BINARY = (ROOT / os.environ.get("CARGO_TARGET_DIR", "target")).resolve() / "debug" / "aqmlab"
BINARY_MISSING = not BINARY.exists() and not os.environ.get("CI")


def test_scenarios_lists_the_builtins():
    proc = run_cli("scenarios", script=True)
    assert proc.returncode == 0, proc.stderr
    # A description wraps onto lines of its own, indented under itself.
    names = [line.split()[0] for line in proc.stdout.splitlines() if not line.startswith(" ")]
    assert names == list(aqmlab.scenarios().index)
    assert "(default)" in proc.stdout
    words = proc.stdout.split()
    for description in aqmlab.scenarios()["description"]:
        assert description.endswith("."), description
        n = len(description.split())
        assert any(words[i : i + n] == description.split() for i in range(len(words))), description


def test_qdiscs_lists_the_kinds():
    proc = run_cli("qdiscs", script=True)
    assert proc.returncode == 0
    assert proc.stdout.split() == aqmlab.qdisc_kinds()


def test_qdiscs_kind_prints_its_keys_defaults_and_sources():
    proc = run_cli("qdiscs", "red", script=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == _aqmlab.qdisc_help("red")
    assert proc.stdout.startswith("red: RED")
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[3:]}
    assert "5 packets" in rows["min_th"] and rows["min_th"].endswith("ns-2 thresh_")
    if BINARY.exists():
        assert subprocess.run([BINARY, "qdiscs", "red"], capture_output=True, text=True).stdout == proc.stdout
    proc = run_cli("qdiscs", "fq_magic", script=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: invalid value 'fq_magic' for '[KIND]'")


def test_tc_prints_the_table_the_binary_prints():
    line = "tc qdisc add dev eth0 root sfb limit 1000 max 25 target 20 penalty_rate 10"
    proc = run_cli("tc", line, script=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == _aqmlab.tc_table(line)
    assert 'kind = "sfb"' in proc.stdout and "bins = 16" in proc.stdout
    if BINARY.exists():
        assert subprocess.run([BINARY, "tc", line], capture_output=True, text=True).stdout == proc.stdout
    proc = run_cli("tc", "tc qdisc add dev eth0 root codel fast", script=True)
    assert proc.returncode == 2
    assert proc.stderr == "error: tc line: codel has no option `fast`\n"


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
    assert run_cli(script=True).returncode == 2
    proc = run_cli("--help", script=True)
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[2].startswith("Usage: aqmlab")


def test_main_in_process(capsys):
    assert entry.main(["whatever", "qdiscs"]) == 0
    assert capsys.readouterr().out.split() == aqmlab.qdisc_kinds()


def test_models_and_the_queue_lab_print_what_the_core_prints():
    proc = run_cli("model", "choke-front", "--mu", "1", "--rates", "0.5,1", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == _aqmlab.model_choke_front(1.0, [0.5, 1.0], True)
    assert json.loads(proc.stdout)["p0"] == pytest.approx(0.417, abs=5e-4)  # Table II, row 1
    proc = run_cli("model", "sfb-misclass", "--levels", "2", "--bins", "0", "--nonresponsive", "4")
    assert (proc.returncode, proc.stderr) == (2, "error: --bins = 0 must be at least 1\n")
    proc = run_cli("queue-lab", "--rates", "0.5,1", "--packets", "2000", "--json")
    assert proc.returncode == 0, proc.stderr
    lab = json.loads(proc.stdout)
    assert [f["flow"] for f in lab["flows"]] == [1, 2] and lab["warmup"] == 20
    proc = run_cli("queue-lab", "--rates", "0.5,0", "--packets", "10")
    assert (proc.returncode, proc.stderr) == (
        2,
        "error: --rates: flow 2's rate 0 must be a positive number\n",
    )


def read_both(path):
    """A table by pandas and by polars, as pandas (polars' own types aside)."""
    a = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    b = (pl.read_parquet(path) if path.suffix == ".parquet" else pl.read_csv(path)).to_pandas()
    assert list(a.columns) == list(b.columns), path
    assert len(a) == len(b), path
    return a


def test_run_out_writes_the_schemas_tables_pandas_and_polars_read(tmp_path):
    out = tmp_path / "out"
    proc = run_cli("run", "choke-fig3", "--duration", "22s", "--warmup", "2s", "--out", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(
        [f"{t}.parquet" for t in _aqmlab.table_names()] + ["summary.json", ".aqmlab-files"]
    )
    r = aqmlab.run("choke-fig3", duration="22s", warmup="2s")
    for name in _aqmlab.table_names():
        frame = read_both(out / f"{name}.parquet")
        mine = r.arrow(name).to_pandas()
        if name == "run":
            frame, mine = frame.drop(columns="wall_seconds"), mine.drop(columns="wall_seconds")
        pd.testing.assert_frame_equal(frame, mine, check_dtype=True)
    summary = json.loads((out / "summary.json").read_text())
    assert {k: v for k, v in summary.items() if k != "wall_seconds"} == {
        k: v for k, v in r.summary.items() if k != "wall_seconds"
    }
    # Drops and marks by reason on disk, as in Python.
    links = read_both(out / "links.parquet")
    for prefix in ("drops", "marks"):
        assert {f"{prefix}_{r}" for r in _aqmlab.drop_reasons()} <= set(links.columns)


def test_out_into_a_folder_of_an_earlier_run_never_mixes_them(tmp_path):
    out = tmp_path / "out"
    assert (
        run_cli(
            "run", "choke-fig3", "--duration", "22s", "--warmup", "2s", "--out", str(out), "-q"
        ).returncode
        == 0
    )
    gone = subprocess.Popen(["true"])  # a writer that was killed
    gone.wait()
    (out / f".flows.partial-{socket.gethostname()}-{gone.pid}.parquet").write_bytes(b"killed writer")
    (out / "notes.txt").write_text("mine")  # not a table: left alone
    proc = run_cli(
        "run", "choke-fig3", "--duration", "21s", "--warmup", "1s", "--out", str(out), "--format", "csv", "-q"
    )
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(
        [f"{t}.csv" for t in _aqmlab.table_names()] + ["summary.json", "notes.txt", ".aqmlab-files"]
    )
    assert read_both(out / "run.csv").loc[0, "warmup_s"] == pytest.approx(1.0)
    flows = read_both(out / "flows.csv")
    # The UDP flow has no RTT: an empty cell, read back as missing.
    assert flows.loc[flows["kind"] == "cbr", "rtt_mean_s"].isna().all()
    assert flows["rtt_mean_s"].notna().any()

    # A run that fails before it starts leaves the folder as it was; one that
    # fails after is not marked finished.
    assert run_cli("run", "choke-fig3", "--duration", "soon", "--out", str(out)).returncode == 2
    assert (out / "summary.json").exists()


def test_a_failed_write_leaves_no_partial_and_no_summary(tmp_path, monkeypatch):
    from aqmlab import _io

    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("{}")  # an earlier run's

    def broken(f, table, fmt):
        f.write(b"half a table")
        raise OSError("disk full")

    monkeypatch.setattr(_io, "write_table", broken)
    with pytest.raises(OSError, match="disk full"):
        _io.write_folder(out, {"flows": pd.DataFrame({"a": [1]})}, summary="{}")
    assert sorted(p.name for p in out.iterdir()) == [".aqmlab-files"]


@pytest.mark.skipif(BINARY_MISSING, reason=f"no cargo-built binary at {BINARY} (`cargo test` builds it)")
def test_the_binary_writes_the_same_tables(tmp_path):
    args = ["run", "choke-fig3", "--duration", "21s", "--warmup", "1s", "-q"]
    for fmt in ("parquet", "csv"):
        subprocess.run([str(BINARY), *args, "--out", str(tmp_path / "bin"), "--format", fmt], check=True)
        assert run_cli(*args, "--out", str(tmp_path / "py"), "--format", fmt).returncode == 0
        for name in _aqmlab.table_names():
            a = read_both(tmp_path / "bin" / f"{name}.{fmt}")
            b = read_both(tmp_path / "py" / f"{name}.{fmt}")
            if name == "run":
                a, b = a.drop(columns="wall_seconds"), b.drop(columns="wall_seconds")
            # Parquet keeps the types; in CSV arrow-rs writes 21.0 where pyarrow
            # writes 21, so the reader's guesses differ, the values do not.
            pd.testing.assert_frame_equal(a, b, check_dtype=fmt == "parquet")
    text = subprocess.run([str(BINARY), *args], check=True, capture_output=True, text=True).stdout
    mine = run_cli(*args).stdout
    # The same summary, wall-clock time aside.
    assert text.splitlines()[1:] == mine.splitlines()[1:]


def _script() -> str:
    import sysconfig

    return str(Path(sysconfig.get_path("scripts")) / "aqmlab")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_stdout_that_cannot_be_written_is_an_error_not_a_traceback():
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [_script(), "run", "--duration", "21s", "-q", "--json"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == "error: writing to standard output: No space left on device\n"
    # Started with stdout closed: once an AttributeError traceback.
    proc = subprocess.run(
        ["sh", "-c", 'exec "$0" run --duration 21s -q >&-', _script()], capture_output=True, text=True
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == "error: standard output is closed\n"
    # A reader that went away before the output came.
    child = subprocess.Popen(
        [_script(), "run", "--duration", "21s", "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    child.stdout.close()
    err = child.stderr.read()
    assert child.wait(timeout=120) == 1, err
    assert err == "error: writing to standard output: Broken pipe\n"


@pytest.mark.parametrize("command", [["run", "--duration", "100000s"], ["sweep", "--duration", "100000s"]])
def test_an_out_that_names_a_file_is_refused_before_anything_runs(tmp_path, command):
    file = tmp_path / "results.txt"
    file.write_text("keep me")
    for out, message in [
        (file, f"--out {file}: is a file, not a folder"),
        (file / "sub", f"--out {file / 'sub'}: {file} is a file, so the folder cannot be made"),
    ]:
        proc = run_cli(*command, "-q", "--out", str(out))
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f"error: {message}"), proc.stderr
    assert file.read_text() == "keep me"
