#!/usr/bin/env python3
"""Writes the generated tables of docs/validation.md from the peers' results in
bench/results/ (ns-2.35: ns2-*.json; ns-3: a-red.json and the others vs_ns3.py
writes; htsim: htsim-2026-11-24/). Each table sits between `<!-- gen:NAME -->` and
`<!-- /gen:NAME -->`; the prose around them is left alone.

    python3 bench/validation.py            # after vs_ns2.py / vs_ns3.py / vs_htsim.py
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
DOC = ROOT / "docs" / "validation.md"
sys.path.insert(0, str(ROOT / "bench"))

from vs_ns2 import ALL, TOLERANCE, fmt  # noqa: E402

KEYS = ("utilization", "loss_pct", "mean_queue", "udp_share", "jain")


def ns2_bench() -> str:
    lines = [
        "| experiment | seeds | utilization | loss (%) | mean queue (packets) | UDP share "
        "| Jain (TCP goodput) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in ALL:
        f = RESULTS / f"ns2-{name}.json"
        if not f.exists():
            continue
        res = json.loads(f.read_text())
        cells = []
        for key in KEYS:
            row = res["rows"][key]
            text = f"{fmt(row['ns2'][0])} / {fmt(row['aqmlab'][0])}"
            cells.append(f"**{text}**" if row["within"] is False else text)
        lines.append(f"| `{name}` | {res['seeds']} | " + " | ".join(cells) + " |")
    tol = ", ".join(f"{k.replace('_pct', '')} {v[2]}" for k, v in TOLERANCE.items())
    return (
        "\n".join(lines)
        + f"\n\nEach cell: ns-2.35 / aqmlab, means over seeds; **bold**: outside the tolerance ({tol}).\n"
    )


def ns2_repro() -> str:
    f = RESULTS / "ns2-repro.json"
    if not f.exists():
        return "(not run yet)\n"
    doc = json.loads(f.read_text())
    ours = _aqmlab_verdicts()
    lines = [
        f"{doc['label']}, run {doc['date']}"
        + (f", every run shortened to {doc['duration']}" if doc.get("duration") else "")
        + ".",
        "",
        "| experiment | checks with an ns-2 value | same verdict as aqmlab | both miss "
        "| only aqmlab misses | only ns-2 misses | ns-2 seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for eid, e in doc["experiments"].items():
        same = both = only_ours = only_ns2 = 0
        for q, v in e["checks"].items():
            mine = ours.get((eid, q))
            if mine is None:
                continue
            same += mine == v["verdict"]
            both += mine == "MISS" and v["verdict"] == "MISS"
            only_ours += mine == "MISS" and v["verdict"] != "MISS"
            only_ns2 += v["verdict"] == "MISS" and mine != "MISS"
        counts = f"{same} | {both} | {only_ours} | {only_ns2}"
        lines.append(f"| `{eid}` | {len(e['checks'])} | {counts} | {e['ns2_seconds']:.0f} |")
    if doc["skipped"]:
        lines += ["", "No point ns-2 can run: " + ", ".join(f"`{k}`" for k in doc["skipped"]) + "."]
    return "\n".join(lines) + "\n"


def _aqmlab_verdicts() -> dict[tuple[str, str], str]:
    """Our verdicts, read from REPRODUCTION.md's blocks (the recorded run)."""
    text = (ROOT / "REPRODUCTION.md").read_text()
    out = {}
    for m in re.finditer(r"^```\n([a-z0-9-]+): .*?\n(.*?)```$", text, re.S | re.M):
        for line in m.group(2).splitlines()[2:]:
            parts = re.split(r"\s{2,}", line.strip())
            if len(parts) >= 3 and parts[-1] in ("PASS", "MISS", "OPEN"):
                out[(m.group(1), parts[0])] = parts[-1]
    return out


def ns3() -> str:
    lines = [
        "| experiment | TCP goodput ns-3 / aqmlab (Mb/s) | difference | UDP share ns-3 / aqmlab "
        "| difference | Jain (TCP) ns-3 / aqmlab |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("a-red", "a-droptail", "b", "c", "a-fq_codel", "b-fq_codel", "a-fq_codel-rto1s"):
        f = RESULTS / f"{name}.json"
        if not f.exists():
            continue
        res = json.loads(f.read_text())
        ns = next(r for r in res["runs"] if r["simulator"] != "aqmlab")
        aq = next(r for r in res["runs"] if r["simulator"] == "aqmlab")
        a = res["agreement"]
        tcp = f"{ns['tcp_bps'] / 1e6:.3f} / {aq['tcp_bps'] / 1e6:.3f} | {a['tcp_goodput_diff'] * 100:+.1f}%"
        udp = (
            f"{ns['udp_share'] * 100:.1f}% / {aq['udp_share'] * 100:.1f}% | {a['udp_share_diff_pp']:+.1f} pp"
        )
        lines.append(f"| `{name}` | {tcp} | {udp} | {a['jain_ns3']:.3f} / {a['jain_aqmlab']:.3f} |")
    return "\n".join(lines) + "\n"


def htsim() -> str:
    folder = RESULTS / "htsim-2026-11-24"
    lines = [
        "| experiment | TCP goodput htsim / aqmlab (Mb/s) | UDP (Mb/s) | Jain (TCP) | bottleneck drops "
        "| timeouts |",
        "|---|---|---|---|---|---|",
    ]
    for f in sorted(folder.glob("*.json")):
        res = json.loads(f.read_text())
        h = next(r for r in res["runs"] if r["sim"] == "htsim")
        q = next(r for r in res["runs"] if r["sim"] == "aqmlab")
        lines.append(
            f"| {res['exp']} | {h['tcp_bps'] / 1e6:.3f} / {q['tcp_bps'] / 1e6:.3f} "
            f"| {h['udp_bps'] / 1e6:.3f} / {q['udp_bps'] / 1e6:.3f} | {h['jain']:.3f} / {q['jain']:.3f} "
            f"| {h['bn_drops']:,} / {q['bn_drops']:,} | {h['timeouts']:,} / {q['timeouts']:,} |"
        )
    return "\n".join(lines) + "\n"


GENERATORS = {"ns2-bench": ns2_bench, "ns2-repro": ns2_repro, "ns3": ns3, "htsim": htsim}


def main() -> int:
    text = DOC.read_text()
    for name, make in GENERATORS.items():
        pat = re.compile(rf"(<!-- gen:{name} -->\n).*?(<!-- /gen:{name} -->)", re.S)
        if not pat.search(text):
            print(f"docs/validation.md has no <!-- gen:{name} --> block", file=sys.stderr)
            return 1
        body = make()
        text = pat.sub(lambda m, b=body: m.group(1) + b + m.group(2), text)
    tmp = DOC.with_suffix(".md.tmp")
    tmp.write_text(text)
    os.replace(tmp, DOC)
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
