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
