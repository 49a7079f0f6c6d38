"""Paths as the system has them: a scenario in a folder whose name is not UTF-8
runs from ``aqmlab.run`` (given as ``bytes``, as a ``str`` with surrogate escapes,
or as a ``Path``) and from the ``aqmlab`` command, and an error names it lossily."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import aqmlab

from conftest import CHOKE_FIG3

pytestmark = pytest.mark.skipif(os.name == "nt" or sys.platform == "darwin", reason="POSIX byte file names")


@pytest.fixture
def odd_folder(tmp_path: Path) -> bytes:
    """A folder named with byte 0xff holding choke-fig3 as ``s.toml``; its path as bytes."""
    folder = os.fsencode(tmp_path) + b"/runs-\xff"
    os.mkdir(folder)
    with open(folder + b"/s.toml", "wb") as f:
        f.write(CHOKE_FIG3.read_bytes())
    return folder


def test_run_takes_a_path_that_is_not_utf8_as_bytes_str_or_path(odd_folder: bytes) -> None:
    path = odd_folder + b"/s.toml"
    for arg in (path, os.fsdecode(path), Path(os.fsdecode(path))):
        r = aqmlab.run(arg, duration="2s", warmup="1s")
        assert r.run["scenario"].item() == "choke-fig3", arg
    # Overrides read the file first, by the same path.
    r = aqmlab.run(path, duration="2s", warmup="1s", seed=3, name="renamed")
    assert r.run["scenario"].item() == "renamed"
    with pytest.raises(ValueError, match=re.escape("runs-\ufffd/missing.toml: cannot read scenario file")):
        aqmlab.run(odd_folder + b"/missing.toml")


def test_the_command_runs_a_scenario_in_a_folder_named_with_0xff(odd_folder: bytes) -> None:
    path = odd_folder + b"/s.toml"
    out = odd_folder + b"/out"
    args = ["run", path, "--duration", "2s", "--warmup", "1s", "--json", "--out", out, "--pcap", "bottleneck"]
    proc = subprocess.run(
        [sys.executable, "-m", "aqmlab", *args],
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["scenario"] == "choke-fig3"
    assert os.path.isfile(out + b"/summary.json")
    assert [n for n in os.listdir(out) if n.endswith(b".pcap")], os.listdir(out)


def test_a_sweep_and_its_tables_live_in_a_folder_named_with_0xff(odd_folder: bytes) -> None:
    # The run store and the tables are read back through pyarrow, which takes
    # paths as UTF-8: a name that is not UTF-8 is read by its bytes.
    path = odd_folder + b"/s.toml"
    out = odd_folder + b"/sweep"
    args = ["sweep", path, "--seeds", "2", "--duration", "1s", "--warmup", "0s", "--out", out]
    proc = subprocess.run([sys.executable, "-m", "aqmlab", *args], capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert os.path.isfile(out + b"/runs.parquet")
    # Run again: both runs now come from the store, read by the folder's bytes.
    again = subprocess.run([sys.executable, "-m", "aqmlab", *args], capture_output=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert b"2 from cache" in again.stdout + again.stderr
    # A run's tables read back for a plot, from and into the same folder.
    run_out = odd_folder + b"/run"
    cmd = [sys.executable, "-m", "aqmlab"]
    run = [*cmd, "run", path, "--duration", "2s", "--warmup", "1s", "--out", run_out, "--quiet"]
    assert subprocess.run(run, capture_output=True, timeout=300).returncode == 0
    figure = odd_folder + b"/q.png"
    plot = subprocess.run([*cmd, "plot", run_out, "--out", figure], capture_output=True, timeout=300)
    assert plot.returncode == 0, plot.stderr
    assert os.path.getsize(figure) > 0
