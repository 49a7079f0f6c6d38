"""What no input, file or signal may make aqmlab do: destroy a file it did not
create, mix two runs in one folder, abort, or take a bad value without a clear
``ValueError`` (Python) or exit status 2 (the command)."""

from __future__ import annotations

import fcntl
import json
import math
import os
import socket
import stat
import subprocess
import sys
import threading
import time

import pandas as pd
import pytest

import aqmlab
from aqmlab import _io
from aqmlab.result import Result

from conftest import cli_error, run_cli

#: A run of a fraction of a second: one TCP flow through a small dumbbell.
SMALL = {
    "name": "small",
    "duration": "300ms",
    "topology": {
        "kind": "dumbbell",
        "access": {"rate": "10Mbps", "delay": "1ms"},
        "bottleneck": {"rate": "1Mbps", "delay": "5ms"},
    },
    "flows": [{"name": "t", "kind": "tcp", "count": 1}],
}


# ---- files are written through, never renamed over --------------------------------------


def test_a_symbolic_link_is_followed_and_kept(tmp_path):
    target = tmp_path / "target.png"
    target.write_bytes(b"old")
    link = tmp_path / "link.png"
    link.symlink_to(target)
    _io.write_atomic(link, lambda f: f.write(b"new"))
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == b"new"


OTHER_USER = 65534  # nobody


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="root's rule")
def test_root_does_not_write_where_another_user_chose(tmp_path):
    # Another user's link to a file of root's: not written through.
    precious = tmp_path / "precious"
    precious.write_bytes(b"root's")
    link = tmp_path / "flows.parquet"
    link.symlink_to(precious)
    os.lchown(link, OTHER_USER, OTHER_USER)
    with pytest.raises(PermissionError, match="symbolic link of user 65534"):
        _io.write_atomic(link, lambda f: f.write(b"new"))
    assert precious.read_bytes() == b"root's"
    # Another user's folder, or a link of theirs on the way: refused, by name.
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, OTHER_USER, OTHER_USER)
    with pytest.raises(ValueError, match=r"--out .*a folder of user 65534"):
        _io.check_folder(theirs)
    with pytest.raises(ValueError, match="a folder of user 65534"):
        with _io.locked(theirs):
            pass
    # A new folder inside theirs: they could swap it for a link once root made it.
    with pytest.raises(ValueError, match=r"would be made in .*theirs, a folder of user 65534"):
        _io.check_folder(theirs / "new" / "deeper")
    assert not (theirs / "new").exists()
    # Unless they ran sudo: their own folder is theirs to choose anyway.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SUDO_UID", str(OTHER_USER))
        _io.check_folder(theirs / "new")
    way = tmp_path / "way"
    way.symlink_to(tmp_path / "mine", target_is_directory=True)
    os.lchown(way, OTHER_USER, OTHER_USER)
    with pytest.raises(ValueError, match="symbolic link of user 65534"):
        _io.check_folder(way / "deeper")
    # Unless the flag says so.
    _io.allow_foreign_out(True)
    try:
        _io.check_folder(theirs)
        _io.write_atomic(link, lambda f: f.write(b"new"))
    finally:
        _io.allow_foreign_out(False)
    assert precious.read_bytes() == b"new"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mounts a tmpfs")
def test_a_full_disk_leaves_no_tables(tmp_path):
    import numpy as np

    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", small]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        out = small / "out"
        tables = {"a": pd.DataFrame({"x": np.arange(1000)}), "b": pd.DataFrame({"x": np.arange(10)})}
        _io.write_folder(out, tables, "csv", summary="{}")
        st = os.statvfs(small)
        (small / "filler").write_bytes(bytes(st.f_bavail * st.f_frsize - 8192))
        bigger = {"a": pd.DataFrame({"x": np.random.default_rng(1).random(20_000)}), "b": tables["b"]}
        for fmt in ["parquet", "csv"]:
            with pytest.raises(OSError, match="No space left on device"):
                _io.write_folder(out, bigger, fmt, summary="{}")
            # Neither the new tables nor the earlier run's (in the other format).
            assert sorted(p.name for p in out.iterdir()) == [".aqmlab-files"]
    finally:
        subprocess.run(["umount", small])


def test_a_fifo_is_written_through_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    _io.write_atomic(fifo, lambda f: f.write(b"through the pipe"))
    reader.join(timeout=10)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    assert got == [b"through the pipe"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_device_behind_a_link_stays_a_device(tmp_path):
    link = tmp_path / "null.png"
    link.symlink_to("/dev/null")
    _io.write_atomic(link, lambda f: f.write(b"x" * 1000))
    assert link.is_symlink() and os.readlink(link) == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(IsADirectoryError):
        _io.write_atomic(tmp_path, lambda f: f.write(b"x"))


def test_plot_out_writes_through_a_link(tmp_path):
    out = tmp_path / "run"
    assert run_cli("run", "--out", str(out), "-q", "--duration", "21s").returncode == 0
    target = tmp_path / "figure.png"
    link = tmp_path / "link.png"
    link.symlink_to(target)
    proc = run_cli("plot", str(out), "--out", str(link), "--kind", "queue")
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink()
    assert target.read_bytes().startswith(b"\x89PNG")


# ---- one writer at a time, and the user's files left alone -------------------------------


def test_two_writers_of_a_folder_take_turns(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out / _io.RECORD, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # this test is the first writer
    done = threading.Event()

    def second() -> None:
        _io.write_folder(out, {"flows": pd.DataFrame({"a": [2]})}, summary="{}")
        done.set()

    t = threading.Thread(target=second, daemon=True)
    t.start()
    time.sleep(1.0)
    assert not done.is_set(), "wrote while another writer held the folder"
    assert sorted(p.name for p in out.iterdir()) == [_io.RECORD]
    os.close(fd)
    t.join(timeout=30)
    assert done.is_set()
    assert (out / "summary.json").is_file() and (out / "flows.parquet").is_file()


def test_a_live_writers_temporary_file_is_left_alone(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        host = socket.gethostname()
        live = out / f".runs{_io.PARTIAL}{host}-{sleeper.pid}.parquet"
        live.write_bytes(b"being written")
        gone = subprocess.Popen(["true"])  # a writer that is no longer running
        gone.wait()
        killed = out / f".runs{_io.PARTIAL}{host}-{gone.pid}.parquet"
        killed.write_bytes(b"killed")
        _io.write_folder(out, {"flows": pd.DataFrame({"a": [1]})}, summary="{}")
        assert live.exists(), "another writer's temporary file was deleted"
        assert not killed.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_an_empty_out_is_a_usage_error(tmp_path):
    (tmp_path / "flows.csv").write_text("mine")
    for args in (
        ["run", "--out", "", "-q"],
        ["sweep", "--out", "", "-q"],
        ["repro", "choke-fig3", "--out", "", "-q"],
        ["plot", str(tmp_path), "--out", ""],
    ):
        proc = run_cli(*args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        # The parser's own words: an empty value is no value.
        assert "a value is required for '--out" in proc.stderr, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flows.csv"]


def test_files_aqmlab_did_not_write_are_never_removed(tmp_path):
    (tmp_path / "flows.csv").write_text("mine")
    (tmp_path / "notes.txt").write_text("mine")
    # A run that would replace the user's table is refused before it starts.
    message = cli_error("run", "--out", str(tmp_path), "--format", "csv", "-q", "--duration", "21s")
    assert "flows.csv was not written by aqmlab" in message
    # One that writes beside it warns, and leaves it.
    proc = run_cli("run", "--out", str(tmp_path), "-q", "--duration", "21s")
    assert proc.returncode == 0, proc.stderr
    assert "holds files aqmlab did not write (flows.csv, notes.txt)" in proc.stderr
    assert (tmp_path / "flows.csv").read_text() == "mine"
    assert (tmp_path / "notes.txt").read_text() == "mine"
    # aqmlab's own tables of the other format are still replaced on a rerun.
    assert (
        run_cli("run", "--out", str(tmp_path), "-q", "--duration", "21s", "--format", "csv").returncode == 2
    )
    other = tmp_path / "other"
    assert run_cli("run", "--out", str(other), "-q", "--duration", "21s", "--format", "csv").returncode == 0
    assert run_cli("run", "--out", str(other), "-q", "--duration", "21s").returncode == 0
    assert not list(other.glob("*.csv"))


def test_a_summary_that_does_not_parse_is_no_finished_run(tmp_path):
    out = tmp_path / "run"
    assert run_cli("run", "--out", str(out), "-q", "--duration", "21s").returncode == 0
    (out / "summary.json").write_text("{")
    with pytest.raises(ValueError, match=r"summary\.json is not a run's summary"):
        Result.read(out)


# ---- bounded seeds ----------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["sweep"], ["repro", "choke-fig3"]])
@pytest.mark.parametrize("seeds", ["1000000000", "18446744073709551617"])
def test_huge_seed_counts_exit_2_at_once(tmp_path, command, seeds):
    started = time.monotonic()
    proc = run_cli(*command, "--seeds", seeds, "--out", str(tmp_path / "o"), "-q")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "1,000,000" in proc.stderr or "too large" in proc.stderr, proc.stderr
    assert time.monotonic() - started < 60


def test_sweep_refuses_too_many_runs_and_repeated_values():
    with pytest.raises(ValueError, match="must be between 1 and"):
        aqmlab.sweep(SMALL, seeds=10**9)
    with pytest.raises(ValueError, match="more than"):
        aqmlab.sweep(SMALL, seeds=iter(range(10**12)))
    with pytest.raises(ValueError, match="lists 100 twice"):
        aqmlab.sweep(SMALL, {"qdisc.limit": [100, 100]})
    assert "lists 100 twice" in cli_error("sweep", "--set", "qdisc.limit=100,100", "-q")


# ---- seeds until precise: bad targets and counts are ValueErrors, at once -----------------


@pytest.mark.parametrize("width", ["1e-300", "5e-324", "0.0000000000000000000001%"])
def test_a_vanishing_precision_stops_at_max_seeds_without_overflow(width):
    from aqmlab.stats import Precision, parse_precision, seeds_wanted

    p = parse_precision(f"tcp_goodput_bps={width}")
    assert seeds_wanted(3, 1e6, 5e4, p, cap=40) == 40
    assert seeds_wanted(3, 1e6, 5e4, p) >= 2**62
    # A target met at once still asks for one more seed, never above the cap.
    loose = Precision("tcp_goodput_bps", 1e9, False)
    assert seeds_wanted(3, 1e6, 5e4, loose, cap=40) == 4


def test_precision_and_baseline_of_the_wrong_type_are_value_errors():
    for precision in [{"tcp_goodput_bps": "2%"}, ["tcp_goodput_bps=2%"], 0.02]:
        with pytest.raises(ValueError, match="precision must be a string"):
            aqmlab.sweep(SMALL, precision=precision, max_seeds=4)
    with pytest.raises(ValueError, match="max_seeds"):
        aqmlab.sweep(SMALL, precision="t_goodput_bps=1e-300", max_seeds=10**12)
    with pytest.raises(ValueError, match="baseline must be a mapping"):
        aqmlab.sweep(SMALL, {"qdisc.limit": [50, 100]}, baseline="qdisc.limit=50")


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda v: aqmlab.sweep(SMALL, fail_fast=v), "fail_fast"),
        (lambda v: aqmlab.sweep(SMALL, progress=v), "progress"),
        (lambda v: aqmlab.sweep(SMALL, emulate=v), "emulate"),
        (lambda v: aqmlab.run(SMALL, progress=v), "progress"),
        (lambda v: aqmlab.emulate(SMALL, strict=v), "strict"),
        (lambda v: aqmlab.repro("choke", fail_fast=v), "fail_fast"),
        (lambda v: aqmlab.repro("choke", cache=v), "cache"),
    ],
)
@pytest.mark.parametrize("value", ["yes", "no", 1, 0.0])
def test_a_flag_that_is_not_a_bool_is_a_value_error(call, name, value):
    # A truthy "no" must not switch a flag on; nothing runs before the check.
    with pytest.raises(ValueError, match=f"^{name} = "):
        call(value)


def test_an_unknown_metric_of_statistics_is_a_value_error():
    result = aqmlab.sweep(SMALL, jobs=1)
    for metrics in [["nope"], "nope", ["jain_all", 3]]:
        with pytest.raises(ValueError, match="no metric"):
            result.statistics(metrics)
    assert set(result.statistics("jain_all")["metric"]) == {"jain_all"}


@pytest.mark.parametrize("seeds", ["1,1", "3,4,3", "7,18446744073709551616"])
def test_a_bad_seed_list_names_the_flag(seeds):
    assert cli_error("sweep", "--seed-list", seeds, "-q").startswith(f"--seed-list {seeds}: ")


# ---- the run store: a damaged entry is a miss --------------------------------------------------


def test_a_damaged_stored_run_is_simulated_again(tmp_path):
    cache = tmp_path / "cache"
    first = aqmlab.sweep(SMALL, cache_dir=cache, jobs=1)
    assert first.simulated == 1
    (entry,) = cache.glob("*.parquet")
    data = bytearray(entry.read_bytes())
    # The body damaged, the footer (its last kilobyte and the magic) intact.
    for i in range(8, len(data) // 2):
        data[i] ^= 0x5A
    entry.write_bytes(bytes(data))
    again = aqmlab.sweep(SMALL, cache_dir=cache, jobs=1)
    assert again.simulated == 1 and again.cached == 0
    assert len(again.runs) == 1
    third = aqmlab.sweep(SMALL, cache_dir=cache, jobs=1)
    assert third.cached == 1


# ---- the Python front end: ValueError, and integers as the binary reads them -------------------


@pytest.mark.parametrize("seed", [" 5", "5 ", "\u0665", "18446744073709551616", "-1", "0x5"])
def test_the_python_command_reads_integers_as_the_binary_does(seed):
    message = cli_error("run", "--seed", seed, "--duration", "21s", "-q")
    assert "Traceback" not in message


def test_a_plus_sign_is_read_as_the_binary_reads_it():
    assert run_cli("run", "--seed", "+5", "--duration", "21s", "-q").returncode == 0


@pytest.mark.parametrize(
    ("value", "where"),
    [
        (math.nan, "flows[0].rate = nan"),
        (math.inf, "flows[0].rate = inf"),
        (None, "flows[0].rate = None"),
        ({1, 2}, "flows[0].rate"),
        (b"1Mbps", "flows[0].rate"),
        (2**70, "flows[0].rate = 1180591620717411303424"),
    ],
)
def test_values_a_scenario_cannot_hold_name_their_key(value, where):
    scenario = json.loads(json.dumps(SMALL))
    scenario["flows"] = [{"name": "u", "kind": "cbr", "rate": value}]
    with pytest.raises(ValueError) as e:
        aqmlab.run(scenario)
    assert str(e.value).startswith(where), str(e.value)


def test_bad_structures_raise_value_error():
    deep: list = []
    node = deep
    for _ in range(5000):
        node.append([])
        node = node[0]
    with pytest.raises(ValueError, match="nested more than"):
        aqmlab.run({**SMALL, "description": deep})
    with pytest.raises(ValueError, match="is not a string"):
        aqmlab.run({**SMALL, 3: "x"})
    with pytest.raises(ValueError, match="no table 'nope'"):
        aqmlab.run(SMALL).arrow("nope")
    with pytest.raises(ValueError, match="must be a dict"):
        aqmlab.sweep(SMALL, [("qdisc.limit", [1])])
    with pytest.raises(ValueError, match="is not a string"):
        aqmlab.sweep(SMALL, {1: [1]})
    # An integer TOML cannot hold is refused under its key, in a set and a grid.
    for big in [2**63, {"x": [2**64 - 1]}]:
        with pytest.raises(ValueError, match=r"qdisc\.limit: an integer too large.*2\^63 - 1"):
            aqmlab.run(SMALL, set={"qdisc.limit": big})
    with pytest.raises(ValueError, match=r"qdisc\.limit: an integer too large"):
        aqmlab.sweep(SMALL, {"qdisc.limit": [10, 2**63]})


def test_a_cache_dir_that_is_a_file_is_a_value_error(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        aqmlab.sweep(SMALL, cache_dir=f)


def test_a_sweep_over_a_file_names_the_file_and_line(tmp_path, choke_text):
    path = tmp_path / "bad.toml"
    path.write_text(choke_text.replace('kind = "red"', 'kind = "red"\nnonsense = 1', 1))
    with pytest.raises(ValueError) as e:
        aqmlab.sweep(str(path))
    assert str(e.value).startswith(f"{path}:"), str(e.value)
    assert "<dict>" not in str(e.value)
