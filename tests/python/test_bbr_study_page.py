"""docs/tcp.md's study of BBR against CUBIC under the fair AQMs: its two tables
(BBR v1 and BBRv3 in the BBR group) are what `bench/bbr_vs_cubic.py` prints
with this build. A change to the simulator's TCP shows here; the tables are
then made again with the commands the page names.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import ROOT

PAGE = ROOT / "docs" / "tcp.md"


@pytest.mark.parametrize("variant", ["bbr", "bbr3"])
def test_the_study_tables_are_this_builds(variant):
    exe = Path(sysconfig.get_path("scripts")) / ("aqmlab.exe" if os.name == "nt" else "aqmlab")
    args = [sys.executable, str(ROOT / "bench" / "bbr_vs_cubic.py"), "--bin", str(exe), "--seeds", "3"]
    args += ["--variant", variant]
    out = subprocess.run(args, capture_output=True, text=True, timeout=600, check=True).stdout
    table = "\n".join(line for line in out.splitlines() if line.startswith("|"))
    assert table.count("\n") >= 11, out
    assert table in PAGE.read_text(), f"docs/tcp.md's {variant} table is not this build's:\n{table}"
