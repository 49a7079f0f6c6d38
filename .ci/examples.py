#!/usr/bin/env python3
"""The example outputs in README.md and docs/*.md, produced by running them.

Every fenced block of those pages with a line ``$ aqmlab ...`` is an example:
its commands are run (in a temporary folder, through this interpreter's
``python -m aqmlab``) and the block becomes each command's line followed by what
it printed on stdout. So no example can say what this build does not print:

    python3 .ci/examples.py check    # exit 1 naming every block that differs
    python3 .ci/examples.py write    # rewrite the blocks with what the commands print

``tests/python/test_examples.py`` runs ``check``. A block that shows output for
illustration only (made up, or from a run too long for CI) has no ``$`` line.
What a command prints that differs from run to run (the time a sweep took and
where it wrote its tables: its last line) is left out of the block.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("README.md", "docs/*.md")
PROMPT = "$ "
#: What a command prints that changes between runs: dropped from the block.
VARYING = (re.compile(r"^\d+ runs \(\d+ simulated, \d+ from cache.*\) in [0-9.]+ s; tables in .*$"),)
#: One command may run this long (the README's sweep takes about 10 s on two cores).
TIMEOUT_S = 600


@dataclass
class Block:
    """A fenced example block: ``path``, its lines ``start``..``end`` (the
    fences excluded, 0-based) and their text."""

    path: Path
    start: int
    end: int
    lines: list[str]

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.start}"

    def commands(self) -> list[str]:
        return [line[len(PROMPT) :] for line in self.lines if line.startswith(PROMPT)]


def pages() -> list[Path]:
    out: list[Path] = []
    for pattern in PAGES:
        out.extend(sorted(ROOT.glob(pattern)))
    return out


def blocks(path: Path) -> list[Block]:
    """The example blocks of ``path``: fenced blocks with a ``$ aqmlab`` line."""
    lines = path.read_text().split("\n")
    found = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            body = lines[i + 1 : j]
            if any(line.startswith(PROMPT + "aqmlab ") for line in body):
                found.append(Block(path, i + 1, j, body))
            i = j + 1
        else:
            i += 1
    return found


def run(command: str, cwd: str) -> list[str]:
    """What ``command`` (``aqmlab ...``) prints on stdout, its varying lines left out."""
    argv = shlex.split(command)
    if argv[0] != "aqmlab":
        raise SystemExit(f"an example runs aqmlab only, not {argv[0]!r}")
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.run(
        [sys.executable, "-m", "aqmlab", *argv[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=env,
    )
    if proc.returncode != 0:
        raise SystemExit(f"`{command}` exited with status {proc.returncode}:\n{proc.stderr}")
    out = proc.stdout.rstrip("\n").split("\n")
    return [line.rstrip() for line in out if not any(p.match(line) for p in VARYING)]


def produce(block: Block) -> list[str]:
    """The block's lines as its commands print them today."""
    out: list[str] = []
    with tempfile.TemporaryDirectory() as cwd:
        for command in block.commands():
            out.append(PROMPT + command)
            out.extend(run(command, cwd))
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("check", "write"):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    write = argv[0] == "write"
    stale = []
    for path in pages():
        found = blocks(path)
        if not found:
            continue
        lines = path.read_text().split("\n")
        # From the last block up, so earlier blocks' line numbers stay valid.
        for block in reversed(found):
            new = produce(block)
            if new == block.lines:
                continue
            stale.append(block.where)
            if write:
                lines[block.start : block.end] = new
            else:
                diff = difflib.unified_diff(block.lines, new, "on the page", "printed now", lineterm="")
                print(f"{block.where}: the example is not what the command prints:", file=sys.stderr)
                print("\n".join(diff), file=sys.stderr)
        if write:
            path.write_text("\n".join(lines))
    if write:
        print(f"rewrote {len(stale)} block(s): {', '.join(stale) or 'none'}")
        return 0
    if stale:
        print(f"stale examples: {', '.join(stale)} (python3 .ci/examples.py write)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
