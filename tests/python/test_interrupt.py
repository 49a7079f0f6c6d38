"""Ctrl-C stops a long run: KeyboardInterrupt in Python, the signal's default
action in the console script (as for the standalone binary)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")

LONG_RUN = """
import aqmlab
print("ready", flush=True)
aqmlab.run("dumbbell-red", duration="100000s")
print("finished", flush=True)
"""


def interrupt(cmd: list[str], wait_for_line: bool, after: float) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if wait_for_line:
            assert proc.stdout.readline() == "ready\n"
        time.sleep(after)  # well inside the run, which would take hours
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def test_ctrl_c_interrupts_aqmlab_run():
    done = interrupt([sys.executable, "-c", LONG_RUN], wait_for_line=True, after=1.0)
    assert "KeyboardInterrupt" in done.stderr
    assert "finished" not in done.stdout
    assert done.returncode != 0


def test_ctrl_c_ends_the_console_script():
    exe = Path(sysconfig.get_path("scripts")) / "aqmlab"
    done = interrupt(
        [str(exe), "run", "dumbbell-red", "--duration", "100000s", "-q"], wait_for_line=False, after=2.0
    )
    assert done.returncode == -signal.SIGINT


#: Sends SIGINT to itself while the package is half imported (when its sweep
#: module is looked for), under ``argv[0]`` as the command has it.
INTERRUPTED_IMPORT = """
import os, signal, sys

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "aqmlab._sweep":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.argv[0] = {argv0!r}
sys.meta_path.insert(0, Interrupt())
import aqmlab
print("imported")
"""


@pytest.mark.parametrize("argv0", ["/usr/local/bin/aqmlab", "-m", "script.py"])
def test_ctrl_c_while_the_command_loads_prints_no_traceback(argv0):
    # The command's imports take tens of milliseconds; a Ctrl-C among them ends it
    # by the signal, as once it runs, with nothing on stderr. Imported as a
    # library (any other argv[0]), Python's KeyboardInterrupt is left alone.
    code = INTERRUPTED_IMPORT.format(argv0=argv0)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "imported" not in done.stdout
    if argv0 == "script.py":
        assert "KeyboardInterrupt" in done.stderr
    else:
        assert done.returncode == -signal.SIGINT and done.stderr == "", done.stderr


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not: it has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_gone(pids: list[int], seconds: float = 30.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.2)
    return [p for p in pids if _alive(p)]


LONG_SWEEP = """
import multiprocessing, sys, threading, time
import aqmlab

def report():
    while len(multiprocessing.active_children()) < 2:
        time.sleep(0.1)
    time.sleep(1.0)  # the workers have their runs
    print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)

threading.Thread(target=report, daemon=True).start()
aqmlab.sweep("dumbbell-red", {"qdisc.limit": [100, 200]}, duration="100000s", jobs=2)
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_workers_end_with_a_killed_parent(sig):
    # Once, the workers of a killed sweep waited for work forever (4 of 4 tries).
    proc = subprocess.Popen([sys.executable, "-c", LONG_SWEEP], stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(p) for p in proc.stdout.readline().split()]
        assert len(workers) == 2
        proc.send_signal(sig)
        proc.wait(timeout=30)
        assert _wait_gone(workers) == []
    finally:
        proc.kill()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_ctrl_c_ends_a_sweep_with_130_no_traceback_and_no_half_output(tmp_path):
    exe = Path(sysconfig.get_path("scripts")) / "aqmlab"
    out = tmp_path / "o"
    # Ctrl-C at a terminal reaches the whole process group: the parent and workers.
    args = ["sweep", "dumbbell-red", "--set", "qdisc.limit=100,200", "--duration", "100000s", "-j2", "-q"]
    proc = subprocess.Popen(
        [str(exe), *args, "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
                workers = [int(p) for p in f.read().split()]
        time.sleep(1.0)  # well inside the runs, which would take hours
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert stderr == "error: interrupted\n"
    assert _wait_gone(workers) == []
    left = [p.name for p in out.rglob("*")] if out.exists() else []
    assert "summary.json" not in left
    assert not [n for n in left if ".partial-" in n]
