"""docs/validation.md's kernel grid, simulated side: the rows
`bench/results/kernel-tcp-resimulated*.md` record are what this build prints
(`bench/emulation/kernel_tcp.py --against`, which re-simulates a row beside
the kernel's recorded column; one page with `--sim-jitter 100us`). A change to
the simulator's TCP shows here; the file is then made again with the command
on its first line, and the page's counts read from it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import ROOT

RESULTS = ROOT / "bench" / "results"
RECORDED = [
    RESULTS / "kernel-tcp-8flows-cbr.md",
    RESULTS / "kernel-tcp-8flows-nocbr.md",
    RESULTS / "kernel-tcp-1-32flows-cbr.md",
    RESULTS / "kernel-tcp-bbr-8flows.md",
]
# Each page and the options it was simulated with: the grid as fixed, and the
# same grid with the simulated access links' delay jittered by 100 us.
PAGES = {
    "kernel-tcp-resimulated.md": [],
    "kernel-tcp-resimulated-jitter100us.md": ["--sim-jitter", "100us"],
}


def rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| TCP |")]


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_recorded_resimulated_rows_are_this_builds(page):
    exe = Path(sysconfig.get_path("scripts")) / ("aqmlab.exe" if os.name == "nt" else "aqmlab")
    args = [sys.executable, str(ROOT / "bench" / "emulation" / "kernel_tcp.py"), "--bin", str(exe)]
    args += [*PAGES[page], "--against", *map(str, RECORDED)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=600, check=True).stdout
    recorded = rows((RESULTS / page).read_text())
    assert len(recorded) == 126, "the file lost rows of the grid"
    assert rows(out) == recorded, "the simulated column changed: run the command on the file's first line"
