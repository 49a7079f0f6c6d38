#!/usr/bin/env python3
"""Rewrites REPRODUCTION.md's result blocks from a fresh `aqmlab repro all`.

Every fenced block of REPRODUCTION.md that opens with `ID: title` is the text table
`aqmlab repro ID` prints; this runs every experiment (through the run cache in
--out), with the peer simulators' columns (--peer, default
bench/results/ns2-repro.json when it exists), and puts each new table in place of
the old one. The prose around the blocks is left as it is: the script prints every
verdict that changed, for the prose to be checked against.

    python3 bench/repro_blocks.py --out repro-out --jobs 2
    python3 bench/repro_blocks.py choke sfb    # some experiments' blocks only
    python3 bench/repro_blocks.py --check     # exit 1 if a block would change
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "REPRODUCTION.md"
NS2 = ROOT / "bench" / "results" / "ns2-repro.json"
BLOCK = re.compile(r"^```\n(?P<body>(?P<id>[a-z0-9-]+): .*?\n)```$", re.S | re.M)


def rows(block: str) -> dict[str, str]:
    """quantity -> verdict of a text table (the first column and the last word)."""
    out = {}
    lines = block.splitlines()
    for line in lines[3:]:
        parts = re.split(r"\s{2,}", line.strip())
        if len(parts) >= 3:
            out[parts[0]] = parts[-1]
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("ids", nargs="*", default=["all"], help="experiments (default: all)")
    p.add_argument("--out", default="repro-out", help="the reproduction's folder (its cache is reused)")
    p.add_argument("--jobs", type=int)
    p.add_argument("--peer", action="append", help="peer JSON files (default: ns-2's when present)")
    p.add_argument("--no-peer", action="store_true", help="no peer columns")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a block would change")
    o = p.parse_args()
    from aqmlab.repro import repro, resolve
    from aqmlab.repro._core import format_table

    peers = o.peer if o.peer is not None else ([str(NS2)] if NS2.exists() else [])
    if o.no_peer:
        peers = []
    table = repro(o.ids, out=o.out, jobs=o.jobs, peers=peers, progress=True)
    chosen = resolve(o.ids)
    new = {e.id: format_table(e, table[table["experiment"] == e.id]) + "\n" for e in chosen}
    text = DOC.read_text()
    changed, verdicts = [], []

    def swap(m: re.Match) -> str:
        eid = m.group("id")
        if eid not in new:
            return m.group(0)
        body = new[eid]
        if body != m.group("body"):
            changed.append(eid)
            old_rows, new_rows = rows(m.group("body")), rows(body)
            for q, v in new_rows.items():
                if q in old_rows and old_rows[q] != v:
                    verdicts.append(f"{eid}: {q}: {old_rows[q]} -> {v}")
        return f"```\n{body}```"

    out = BLOCK.sub(swap, text)
    print(f"{len(changed)} blocks changed: {', '.join(changed) or '-'}")
    for v in verdicts:
        print("verdict", v)
    if o.check:
        return 1 if changed else 0
    tmp = DOC.with_suffix(".md.tmp")
    tmp.write_text(out)
    os.replace(tmp, DOC)
    return 0


if __name__ == "__main__":
    sys.exit(main())
