"""The progress bar of one run: the pip-installed command under a pseudo-terminal
draws it on stderr, `-q` and a stderr that is not a terminal leave stderr empty,
and `aqmlab.run` feeds it through the extension's callback."""

from __future__ import annotations

import os
import struct
import subprocess
import sysconfig
import time
from pathlib import Path

import pytest

import aqmlab
from aqmlab import _aqmlab, _run_bar

pty = pytest.importorskip("pty")
fcntl = pytest.importorskip("fcntl")
termios = pytest.importorskip("termios")

# A run that takes more than the bar's one second of delay: 1000 TCP flows for
# 1000 simulated seconds (about 3 s).
LONG = ["run", "breathe-fig2"]


def _script() -> str:
    exe = Path(sysconfig.get_path("scripts")) / "aqmlab"
    assert exe.exists(), f"the console script is not installed at {exe}"
    return str(exe)


def _stderr_on_a_terminal(*args: str) -> tuple[int, str, str, float]:
    """Runs the installed `aqmlab ARGS` with stderr on a pseudo-terminal; returns
    the exit status, stdout, what reached the terminal, and the wall seconds."""
    master, slave = pty.openpty()
    # A terminal of 24 x 100 (a new pseudo-terminal has 0 columns, where tqdm
    # draws nothing).
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    started = time.monotonic()
    proc = subprocess.Popen(
        [_script(), *args], stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL
    )
    os.close(slave)
    seen = bytearray()
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        seen += chunk
    out = proc.stdout.read().decode() if proc.stdout else ""
    status = proc.wait(timeout=300)
    os.close(master)
    return status, out, seen.decode(errors="replace"), time.monotonic() - started


def test_the_installed_command_draws_a_bar_of_simulated_seconds_on_a_terminal():
    status, out, err, wall = _stderr_on_a_terminal(*LONG)
    assert status == 0, err
    assert out.startswith("breathe-fig2 (seed 1)")
    if wall < 1.5:
        pytest.skip(f"the run took {wall:.1f} s, too short for the bar's one-second delay")
    assert "simulated " in err and " s / 1000 s" in err, err
    assert "%" in err and "<" in err, err  # the percentage and the time left
    assert "ns" not in err


def test_quiet_leaves_a_terminals_stderr_empty():
    status, out, err, _ = _stderr_on_a_terminal(*LONG, "-q")
    assert status == 0, err
    assert out.startswith("breathe-fig2 (seed 1)")
    assert err == ""


def test_no_bar_when_stderr_is_not_a_terminal():
    proc = subprocess.run([_script(), *LONG], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


def test_run_feeds_its_bar_through_the_extensions_callback(monkeypatch):
    calls: list[tuple[float, float]] = []

    class Recording(_run_bar.RunBar):
        def __call__(self, now_s: float, end_s: float) -> None:
            calls.append((now_s, end_s))

    monkeypatch.setattr(_run_bar, "RunBar", Recording)
    aqmlab.run("choke", duration="30s", progress=True)
    # Called at most ten times a second, and once at the end.
    assert calls and calls[-1] == (30.0, 30.0)
    assert all(end == 30.0 for _, end in calls)
    assert [t for t, _ in calls] == sorted(t for t, _ in calls)
    calls.clear()
    aqmlab.run("choke", duration="30s", progress=False)
    assert calls == []


def test_the_callback_is_called_at_most_ten_times_a_second():
    calls: list[float] = []
    started = time.monotonic()
    _aqmlab.run_builtin_or_path("choke", None, "60s", None, None, lambda now, end: calls.append(now))
    wall = time.monotonic() - started
    assert calls[-1] == 60.0
    assert len(calls) <= 10 * wall + 2, (len(calls), wall)


def test_an_exception_in_the_callback_ends_the_run():
    def boom(now: float, end: float) -> None:
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        _aqmlab.run_builtin_or_path("choke", None, "30s", None, None, boom)


def test_a_sweeps_bar_goes_to_a_terminal_never_into_a_pipe(tmp_path, monkeypatch):
    from aqmlab._runner import progress

    # Into a pipe (a batch job's log): no bar, whatever was asked.
    proc = subprocess.run(
        [
            _script(),
            "sweep",
            "choke-fig3",
            "--set",
            "qdisc.kind=red,choke",
            "--duration",
            "2s",
            "--warmup",
            "1s",
            "--no-cache",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "runs" not in proc.stderr and "\r" not in proc.stderr, proc.stderr
    # On a terminal (or in a notebook), the bar is drawn when asked for.
    monkeypatch.setattr(progress, "on_screen", lambda: True)
    assert progress.Progress(4, 0, True).bar is not None
    assert progress.Progress(4, 0, False).bar is None
    monkeypatch.setattr(progress, "on_screen", lambda: False)
    assert progress.Progress(4, 0, True).bar is None
