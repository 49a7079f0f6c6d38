#!/usr/bin/env python3
"""constraints.txt on every Python version pyproject.toml allows.

CI has one interpreter, and pip evaluates environment markers against the running
interpreter even with --python-version, so the check resolves with uv, which
evaluates them for the target version:

    python3 .ci/python_versions.py check    # every version resolves, wheels only
    python3 .ci/python_versions.py update   # re-pin: newest wheels per version, merged

`update` writes one file whose lines carry `python_version` markers where the
versions differ, so `pip install -c constraints.txt .` works everywhere unchanged.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"
PYPROJECT = ROOT / "pyproject.toml"
# Every CPython minor version `requires-python` admits that has wheels today.
VERSIONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
PLATFORM = "x86_64-manylinux_2_28"
# Build and check tools pinned beside the package's own dependencies.
TOOLS = ("maturin>=1.9.4,<2", "ziglang", "uv")
HEADER = """\
# The exact Python packages CI and `make` install: a pip constraints file
# (`pip install -c constraints.txt ...`). pyproject.toml keeps the ranges a
# library must declare; this file pins what the tests run against, on every
# Python version pyproject allows (lines differ by `python_version` markers).
# `python3 .ci/python_versions.py check` resolves it for each version (CI runs
# it); `python3 .ci/python_versions.py update` re-pins it (needs uv).
"""


def floor_matches() -> None:
    text = PYPROJECT.read_text()
    m = re.search(r'requires-python\s*=\s*">=(\d+\.\d+)"', text)
    if not m or m.group(1) != VERSIONS[0]:
        sys.exit(f"python_versions: requires-python in pyproject.toml does not start at {VERSIONS[0]}")


def compile_for(version: str, constraints: Path | None, out: Path) -> subprocess.CompletedProcess:
    with tempfile.NamedTemporaryFile("w", suffix=".in", delete=False) as tools:
        tools.write("\n".join(TOOLS) + "\n")
    cmd = ["uv", "pip", "compile", str(PYPROJECT), tools.name, "--extra", "test", "--extra", "dask"]
    cmd += ["--python-version", version, "--python-platform", PLATFORM, "--only-binary", ":all:"]
    cmd += ["--no-header", "--no-annotate", "--quiet", "-o", str(out)]
    if constraints is not None:
        cmd += ["-c", str(constraints)]
    try:
        return subprocess.run(cmd, capture_output=True, text=True)
    finally:
        Path(tools.name).unlink()


def check() -> int:
    floor_matches()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for v in VERSIONS:
            proc = compile_for(v, CONSTRAINTS, Path(tmp) / f"{v}.txt")
            print(f"python {v}: {'resolves' if proc.returncode == 0 else 'DOES NOT RESOLVE'}")
            if proc.returncode != 0:
                failed += 1
                print(proc.stderr, file=sys.stderr)
    return 1 if failed else 0


def pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split(";")[0].split("==")
            out[name.strip()] = version.strip()
    return out


def marker(lo: int, hi: int) -> str:
    """The marker for VERSIONS[lo..=hi]; empty for all of them."""
    if lo == 0 and hi == len(VERSIONS) - 1:
        return ""
    if lo == hi:
        return f'python_version == "{VERSIONS[lo]}"'
    if hi == len(VERSIONS) - 1:
        return f'python_version >= "{VERSIONS[lo]}"'
    if lo == 0:
        return f'python_version < "{VERSIONS[hi + 1]}"'
    return f'python_version >= "{VERSIONS[lo]}" and python_version < "{VERSIONS[hi + 1]}"'


def update() -> int:
    floor_matches()
    per_version = []
    with tempfile.TemporaryDirectory() as tmp:
        for v in VERSIONS:
            out = Path(tmp) / f"{v}.txt"
            proc = compile_for(v, None, out)
            if proc.returncode != 0:
                print(proc.stderr, file=sys.stderr)
                return 1
            per_version.append(pins(out))
    lines = []
    for name in sorted(set().union(*per_version), key=str.lower):
        versions = [p.get(name) for p in per_version]
        i = 0
        while i < len(VERSIONS):
            j = i
            while j + 1 < len(VERSIONS) and versions[j + 1] == versions[i]:
                j += 1
            if versions[i] is not None:
                m = marker(i, j)
                lines.append(f"{name}=={versions[i]}" + (f"; {m}" if m else ""))
            i = j + 1
    CONSTRAINTS.write_text(HEADER + "\n".join(lines) + "\n")
    print(f"python_versions: wrote {len(lines)} pins to {CONSTRAINTS}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["check"]:
        sys.exit(check())
    if sys.argv[1:] == ["update"]:
        sys.exit(update())
    sys.exit("usage: python_versions.py check | update")
