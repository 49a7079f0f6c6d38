"""The smoke version of bench/vs_ns3.py as a pytest: both simulators, a few flows for
ten seconds, loose agreement.  Skipped unless Debian's libns3-dev is installed (CI
does not install ns-3).  Run: `pytest bench/test_smoke.py`."""

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.skipif(not Path("/usr/include/ns3/core-module.h").exists(), reason="libns3-dev is not installed")
def test_ns3_and_aqmlab_agree_loosely_on_the_smoke_experiment():
    r = subprocess.run([sys.executable, str(HERE / "vs_ns3.py"), "--smoke"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert "1 passed, 0 failed" in r.stdout
