"""Shared helpers: the `aqmlab` command run as a user runs it, in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHOKE_FIG3 = ROOT / "scenarios" / "choke-fig3.toml"


def run_cli(*args: str, script: bool = False, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m aqmlab ARGS`, or the installed `aqmlab` console script."""
    if script:
        exe = Path(sysconfig.get_path("scripts")) / ("aqmlab.exe" if os.name == "nt" else "aqmlab")
        assert exe.exists(), f"the console script is not installed at {exe}"
        cmd = [str(exe), *args]
    else:
        cmd = [sys.executable, "-m", "aqmlab", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=cwd)


def cargo_binary() -> Path | None:
    """The `aqmlab` binary cargo built for this tree, the newest of the release and
    debug builds (AQMLAB_BIN names another); None when there is none."""
    if os.environ.get("AQMLAB_BIN"):
        return Path(os.environ["AQMLAB_BIN"])
    targets = [Path(os.environ["CARGO_TARGET_DIR"])] if os.environ.get("CARGO_TARGET_DIR") else []
    targets.append(ROOT / "target")
    found = [t / p / "aqmlab" for t in targets for p in ("release", "debug")]
    found = [f for f in found if f.exists()]
    return max(found, key=lambda f: f.stat().st_mtime) if found else None


def cli_error(*args: str) -> str:
    """The one-line message the CLI prints for a usage error (status 2)."""
    proc = run_cli(*args)
    assert proc.returncode == 2, proc
    assert proc.stderr.startswith("error: "), proc.stderr
    return proc.stderr.removeprefix("error: ").rstrip("\n")


@pytest.fixture(autouse=True)
def _no_emulation_calibration(monkeypatch):
    """Every test sees the emulator's built-in rate guard, not a calibration
    this machine's user made (a test about calibration sets its own file)."""
    monkeypatch.setenv("AQMLAB_EMULATE_CALIBRATION", "/nonexistent/aqmlab-tests/emulate-calibration.json")


@pytest.fixture
def choke_text() -> str:
    return CHOKE_FIG3.read_text()
