"""`make test` runs every step and lists every failure at the end, exiting non-zero
(CI's .ci/run calls it under `set -e`). Checked on the real Makefile with its
steps replaced by stand-ins that pass or fail at once."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _make(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    text = (ROOT / "Makefile").read_text()
    stand_ins = "\nok:\n\t@echo ran ok\nbad1:\n\t@false\nbad2:\n\t@false\n"
    (tmp_path / "Makefile").write_text(text + stand_ins)
    return subprocess.run(
        ["make", "--no-print-directory", "test", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_every_step_runs_and_every_failure_is_listed(tmp_path):
    proc = _make(tmp_path, "INSTALL=ok", "STEPS=bad1 ok bad2")
    assert proc.returncode != 0
    # The step after the first failure still ran, and both failures are named.
    assert proc.stdout.count("ran ok") == 2, proc.stdout
    assert "make test: FAILED: bad1 bad2" in proc.stderr


def test_a_failed_install_skips_only_the_steps_that_need_it(tmp_path):
    proc = _make(tmp_path, "INSTALL=bad1", "STEPS=ok bad2", "NEEDS_NO_INSTALL=ok")
    assert proc.returncode != 0
    assert "ran ok" in proc.stdout
    assert "FAILED: bad1 (not run, for want of bad1: bad2)" in proc.stderr


def test_all_steps_passing_is_success(tmp_path):
    proc = _make(tmp_path, "INSTALL=ok", "STEPS=ok ok")
    assert proc.returncode == 0, proc.stderr
    assert "every step passed" in proc.stdout


def test_ci_runs_make_test_and_fails_with_it():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in ci and ci.rstrip().endswith("make test")
