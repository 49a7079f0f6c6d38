"""The output-folder protocol has two implementations: the binary's
(`crates/cli/src/output.rs`) and Python's (`aqmlab._io`, behind the pip
install's `aqmlab run`, sweeps and reproductions). Here each writes into a folder
prepared the same way, and the two must end the same: the same files, the same
record (`.aqmlab-files`), the same temporary files removed and kept, the same
warnings and refusals. The tables' contents are compared in test_cli.py."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import cargo_binary, run_cli

BINARY = cargo_binary()
pytestmark = pytest.mark.skipif(BINARY is None, reason="no aqmlab binary built (cargo build -p aqmlab-cli)")

RUN = ["run", "--duration", "2s", "--warmup", "1s", "-q"]
Writer = Callable[..., subprocess.CompletedProcess]


def _binary(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BINARY), *args], capture_output=True, text=True, timeout=300)


WRITERS: dict[str, Writer] = {"binary": _binary, "python": run_cli}


def _run(write: Writer, folder: Path, *args: str) -> tuple[int, str]:
    """The exit status and stderr of a run into ``folder``, the folder's path
    spelt DIR (each writer has its own)."""
    proc = write(*RUN, "--out", str(folder), *args)
    return proc.returncode, proc.stderr.replace(str(folder), "DIR")


def _state(folder: Path) -> tuple[list[str], str | None]:
    """The folder's file names and its record's text."""
    record = folder / ".aqmlab-files"
    return sorted(p.name for p in folder.iterdir()), record.read_text() if record.exists() else None


def _both(tmp_path: Path, prepare: Callable[[Path], None], *runs: list[str]) -> dict[str, object]:
    """For each writer: a folder made by ``prepare``, the ``runs`` (each a list of
    extra arguments) into it in turn, and what came of them."""
    seen = {}
    for name, write in WRITERS.items():
        folder = tmp_path / name
        folder.mkdir()
        prepare(folder)
        outcomes = [_run(write, folder, *args) for args in runs]
        seen[name] = (outcomes, _state(folder))
    assert seen["binary"] == seen["python"]
    return seen["python"]


def test_both_writers_keep_the_record_remove_stale_tables_and_dead_writers_files(tmp_path):
    gone = subprocess.Popen(["true"])  # a writer that was killed
    gone.wait()
    host = socket.gethostname()
    dead = f".flows.partial-{host}-{gone.pid}.parquet"
    live = f".flows.partial-{host}-{os.getpid()}.parquet"  # this process: running
    elsewhere = f".flows.partial-elsewhere.invalid-{gone.pid}.parquet"  # another host's

    def prepare(folder: Path) -> None:
        (folder / "notes.txt").write_text("mine")
        for partial in (dead, live, elsewhere):
            (folder / partial).write_bytes(b"half a table")

    outcomes, (names, record) = _both(tmp_path, prepare, [], ["--format", "csv"])
    warning = "warning: --out DIR holds files aqmlab did not write (notes.txt); they are left alone\n"
    assert [(status, warning in err) for status, err in outcomes] == [(0, True), (0, True)]
    # The parquet tables of the first run are stale once the second writes csv.
    assert not any(n.endswith(".parquet") and not n.startswith(".") for n in names)
    assert dead not in names and live in names and elsewhere in names
    assert "notes.txt" in names and "summary.json" in names
    assert record is not None
    assert set(record.splitlines()) == {n for n in names if n.endswith(".csv")} | {"summary.json"}


def test_both_writers_refuse_to_replace_a_users_file_and_leave_the_folder_alone(tmp_path):
    def prepare(folder: Path) -> None:
        (folder / "links.csv").write_text("mine")

    [(status, err)], state = _both(tmp_path, prepare, ["--format", "csv"])
    assert status == 2 and "links.csv was not written by aqmlab and would be replaced" in err
    assert state == (["links.csv"], None)


def test_both_writers_take_a_folder_written_before_records_as_theirs(tmp_path):
    def prepare(folder: Path) -> None:
        (folder / "summary.json").write_text("{}")
        (folder / "flows.parquet").write_bytes(b"an old run's table")
        (folder / "notes.parquet").write_bytes(b"not a table's name: the user's")

    [(status, err)], (names, _) = _both(tmp_path, prepare, ["--format", "csv"])
    assert status == 0, err
    assert "flows.parquet" not in names and "notes.parquet" in names
