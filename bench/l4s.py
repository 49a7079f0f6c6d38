#!/usr/bin/env python3
"""The L4S coexistence experiment of docs/l4s.md: runs the grid with an `aqmlab`
binary, writes bench/results/l4s.json, the tables of docs/l4s.md (between
`<!-- gen:NAME -->` markers) and the figure docs/img/l4s-coexistence.png.

    python3 bench/l4s.py [--aqmlab PATH] [--jobs N]   # runs, then writes
    python3 bench/l4s.py --write-only                  # tables and figure from the JSON
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "l4s.json"
DOC = ROOT / "docs" / "l4s.md"
FIGURE = ROOT / "docs" / "img" / "l4s-coexistence.png"

QDISCS = ("dualpi2", "pie", "red")
VARIANTS = ("prague", "dctcp")
RATES = (40, 120)
RTTS = (10, 20, 50, 100)
SEEDS = (1, 2, 3)

# The tolerances docs/l4s.md fixed before the first run.
RATIO = (0.5, 2.0)
L_P99_MAX_MS = 2.0
C_MEAN_MS = (10.0, 20.0)
STARVED_RATIO = 2.0


def run_one(binary: str, q: str, variant: str, rate: int, rtt: int, seed: int) -> dict:
    # Base RTT = 2 x (0.5 + bottleneck + 0.5) ms.
    delay = rtt / 2 - 1
    cmd = [
        binary,
        "run",
        str(ROOT / "scenarios" / f"l4s-{q}.toml"),
        "--json",
        "--quiet",
        "--seed",
        str(seed),
        "--set",
        f"flows.l4s.variant={variant}",
        "--set",
        f"topology.bottleneck.rate={rate}Mbps",
        "--set",
        f"topology.bottleneck.delay={delay:g}ms",
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    flows = r["flows"]

    def per_flow(groups: tuple[str, ...]) -> float:
        rates = [f["goodput_bps"] for f in flows if f["group"] in groups]
        return sum(rates) / len(rates)

    delays = {d["group"]: d for d in r["delays"] if d["link"] == "left->right"}
    classic = [delays[g] for g in ("cubic", "reno")]
    c_mean = sum(d["mean_s"] * d["count"] for d in classic) / sum(d["count"] for d in classic)
    return {
        "qdisc": q,
        "variant": variant,
        "rate_mbps": rate,
        "rtt_ms": rtt,
        "seed": seed,
        "l4s_bps": per_flow(("l4s",)),
        "cubic_bps": per_flow(("cubic",)),
        "reno_bps": per_flow(("reno",)),
        "ratio": per_flow(("l4s",)) / per_flow(("cubic", "reno")),
        "l_p99_ms": delays["l4s"]["p99_s"] * 1e3,
        "l_mean_ms": delays["l4s"]["mean_s"] * 1e3,
        "c_mean_ms": c_mean * 1e3,
        "utilization": r["links"][0]["utilization"],
    }


def mean_over_seeds(runs: list[dict]) -> list[dict]:
    points: dict[tuple, list[dict]] = {}
    for r in runs:
        points.setdefault((r["qdisc"], r["variant"], r["rate_mbps"], r["rtt_ms"]), []).append(r)
    out = []
    for key, rs in sorted(points.items(), key=lambda kv: (QDISCS.index(kv[0][0]), *kv[0][1:])):
        m = {k: sum(r[k] for r in rs) / len(rs) for k in rs[0] if isinstance(rs[0][k], float)}
        m.update(dict(zip(("qdisc", "variant", "rate_mbps", "rtt_ms"), key)))
        m["seeds"] = len(rs)
        out.append(m)
    return out


def verdict(p: dict) -> str:
    if p["qdisc"] == "dualpi2":
        bad = []
        if not RATIO[0] <= p["ratio"] <= RATIO[1]:
            bad.append("ratio")
        if p["l_p99_ms"] > L_P99_MAX_MS:
            bad.append("L p99")
        if not C_MEAN_MS[0] <= p["c_mean_ms"] <= C_MEAN_MS[1]:
            bad.append("C mean")
        return "ok" if not bad else "outside: " + ", ".join(bad)
    return "starved" if p["ratio"] >= STARVED_RATIO else "not starved"


def table(points: list[dict], qdiscs: tuple[str, ...]) -> str:
    lines = [
        "| qdisc | variant | Mbit/s | RTT (ms) | ratio | scalable / CUBIC / Reno (Mbit/s per flow) "
        "| L p99 (ms) | L mean (ms) | C mean (ms) | util. | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in points:
        if p["qdisc"] not in qdiscs:
            continue
        rates = " / ".join(f"{p[k] / 1e6:.1f}" for k in ("l4s_bps", "cubic_bps", "reno_bps"))
        lines.append(
            f"| {p['qdisc']} | {p['variant']} | {p['rate_mbps']} | {p['rtt_ms']} "
            f"| {p['ratio']:.2f} | {rates} | {p['l_p99_ms']:.2f} | {p['l_mean_ms']:.2f} "
            f"| {p['c_mean_ms']:.1f} | {p['utilization']:.3f} | {verdict(p)} |"
        )
    return "\n".join(lines)


def write_doc(points: list[dict]) -> None:
    text = DOC.read_text()
    for name, qdiscs in (("dualpi2", ("dualpi2",)), ("fifo", ("pie", "red"))):
        body = table(points, qdiscs)
        pattern = re.compile(rf"(<!-- gen:l4s-{name} -->\n).*?(<!-- /gen:l4s-{name} -->)", re.S)
        if not pattern.search(text):
            sys.exit(f"docs/l4s.md has no gen:l4s-{name} markers")
        text = pattern.sub(lambda m, body=body: m.group(1) + body + "\n" + m.group(2), text)
    DOC.write_text(text)


def figure(points: list[dict]) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no figure", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    styles = {"dualpi2": "-", "pie": "--", "red": ":"}
    colors = {
        (v, r): c for (v, r), c in zip([(v, r) for v in VARIANTS for r in RATES], ["C0", "C1", "C2", "C3"])
    }
    for p_q in QDISCS:
        for v in VARIANTS:
            for rate in RATES:
                ps = [p for p in points if (p["qdisc"], p["variant"], p["rate_mbps"]) == (p_q, v, rate)]
                if not ps:
                    continue
                x = [p["rtt_ms"] for p in ps]
                kw = dict(ls=styles[p_q], color=colors[(v, rate)], marker="o", ms=3)
                axes[0].plot(x, [p["ratio"] for p in ps], label=f"{p_q} {v} {rate}M", **kw)
                if p_q == "dualpi2":
                    axes[1].plot(x, [p["l_p99_ms"] for p in ps], label=f"{v} {rate}M", **kw)
                    axes[2].plot(x, [p["c_mean_ms"] for p in ps], label=f"{v} {rate}M", **kw)
    axes[0].axhspan(RATIO[0], RATIO[1], color="0.9")
    axes[0].set(
        xscale="log",
        yscale="log",
        xlabel="base RTT (ms)",
        ylabel="rate per flow, scalable / classic",
        title="rate ratio",
    )
    axes[1].axhline(L_P99_MAX_MS, color="0.5", lw=0.8)
    axes[1].set(xscale="log", xlabel="base RTT (ms)", ylabel="ms", title="DualPI2: L queue delay, p99")
    axes[2].axhspan(C_MEAN_MS[0], C_MEAN_MS[1], color="0.9")
    axes[2].set(xscale="log", xlabel="base RTT (ms)", ylabel="ms", title="DualPI2: classic queue delay, mean")
    axes[0].legend(fontsize=6, ncol=2)
    axes[1].legend(fontsize=7)
    for ax in axes:
        ax.set_xticks(RTTS, [str(r) for r in RTTS])
    fig.tight_layout()
    FIGURE.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(FIGURE, dpi=120)
    print(f"wrote {FIGURE.relative_to(ROOT)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aqmlab", default="aqmlab", help="the aqmlab binary")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--write-only", action="store_true")
    a = ap.parse_args()
    if not a.write_only:
        grid = [(q, v, r, t, s) for q in QDISCS for v in VARIANTS for r in RATES for t in RTTS for s in SEEDS]
        with ThreadPoolExecutor(a.jobs) as pool:
            runs = list(pool.map(lambda g: run_one(a.aqmlab, *g), grid))
        RESULTS.write_text(json.dumps(runs, indent=1) + "\n")
        print(f"wrote {RESULTS.relative_to(ROOT)} ({len(runs)} runs)")
    runs = json.loads(RESULTS.read_text())
    points = mean_over_seeds(runs)
    write_doc(points)
    figure(points)
    for p in points:
        print(
            p["qdisc"],
            p["variant"],
            p["rate_mbps"],
            p["rtt_ms"],
            f"ratio {p['ratio']:.2f} Lp99 {p['l_p99_ms']:.2f} Cmean {p['c_mean_ms']:.1f}",
            verdict(p),
        )


if __name__ == "__main__":
    main()
