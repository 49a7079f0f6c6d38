#!/usr/bin/env python3
"""aqmlab beside ns-2.35 (the seed papers' simulator) on the same scenarios.

Three things, each from one command:

    python3 bench/vs_ns2.py a-red ten-gred --seeds 5   # bench experiments, side by side
    python3 bench/vs_ns2.py repro choke-fig3 --seeds 2  # the ns-2 column of REPRODUCTION.md
    python3 bench/vs_ns2.py all                         # every table: bench/results/ns2-*,
                                                        # then docs/validation.md's
    python3 bench/vs_ns2.py --smoke                     # a few seconds; loose agreement

An experiment is a dumbbell of bench/experiments.py (`EXPERIMENTS`, shared with
bench/vs_ns3.py, and `NS2_EXPERIMENTS`), written as an aqmlab scenario; a
reproduction point is the scenario dict `aqmlab repro` simulates. Either goes to
ns-2 through bench/ns2/spec.py (the scenario as an ns-2 network with aqmlab's TCP
model) and bench/ns2/peer.tcl, and comes back through bench/ns2/result.py as the
tables of an aqmlab Result, so both simulators are measured by the same code.

Seeds draw start times in each simulator's own generator: seed k of one is not
seed k of the other, so means over seeds are compared. One ns process at a time.
`ns` is installed with apt-get (Debian's `ns2`, 2.35) when missing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import tomllib

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH / "ns2"))

import result as ns2result  # noqa: E402
import spec as ns2spec  # noqa: E402
from experiments import EXPERIMENTS, NS2_EXPERIMENTS, scenario_toml  # noqa: E402

RESULTS = BENCH / "results"
ALL = {**EXPERIMENTS, **NS2_EXPERIMENTS}
#: The bench experiments `all` runs (the ns-3 ones ns-2 can run in minutes).
BENCH_SET = ["a-droptail", "a-red", "b", "a-drr", *NS2_EXPERIMENTS.keys() - {"a-drr"}]

#: Seeds `all` gives an experiment when not 5: (b)'s 400 flows at 45 Mbit/s take
#: ns-2 about two minutes a run.
BENCH_SEEDS = {"b": 3}

#: Fixed before any run (the fidelity issue's): |aqmlab - ns-2| of the means.
TOLERANCE = {
    "utilization": ("abs", 0.02, "2 points"),
    "loss_pct": ("rel", 0.10, "10% relative"),
    "mean_queue": ("rel", 0.10, "10%"),
    "udp_share": ("abs", 0.02, "2 points"),
    "jain": ("abs", 0.03, "0.03"),
}
LABELS = {
    "utilization": "bottleneck utilization",
    "loss_pct": "bottleneck loss (%)",
    "mean_queue": "mean queue (packets)",
    "udp_share": "UDP share of the link",
    "jain": "Jain, TCP goodput",
    "tcp_goodput_mbps": "TCP goodput (Mbit/s)",
    "timeouts": "TCP timeouts",
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def ensure_ns2() -> None:
    if shutil.which("ns"):
        return
    log("ns (Debian's ns2, 2.35) is missing: installing it with apt-get")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run([*sudo, "apt-get", "update", "-q"], env=env, check=True)
    subprocess.run([*sudo, "apt-get", "install", "-y", "-q", "ns2"], env=env, check=True)


def ns2_version() -> str:
    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "ns2"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


# ---- measuring either simulator's result ----------------------------------------------


def metrics(result, link: str = "left->right") -> dict[str, float]:
    """The compared numbers, from an aqmlab Result or an Ns2Result alike."""
    links = result.links.set_index("name")
    L = links.loc[link]
    lf = result.link_flows
    lf = lf[lf["link"] == link].set_index("flow")
    f = result.flows.set_index("id")
    thr = lf["throughput_bps"].reindex(f.index).fillna(0.0)
    tcp, udp = f[f["kind"] == "tcp"], f[f["kind"] == "cbr"]
    total = float(thr.sum())
    arrivals = float(L["arrivals"])
    return {
        "utilization": float(L["utilization"]),
        "loss_pct": 100 * float(L["drops_total"]) / arrivals if arrivals else 0.0,
        "mean_queue": float(L["mean_queue_packets"]),
        "udp_share": float(thr[udp.index].sum()) / total if total else 0.0,
        "jain": ns2result.jain(tcp["goodput_bps"]),
        "tcp_goodput_mbps": float(tcp["goodput_bps"].sum()) / 1e6,
        "timeouts": float(tcp["timeouts"].sum()),
    }


def mean_sd(xs: list[float]) -> tuple[float, float]:
    xs = [x for x in xs if x == x]
    if not xs:
        return math.nan, math.nan
    return statistics.mean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0


def within(key: str, ns2: float, ours: float) -> bool | None:
    if key not in TOLERANCE or ns2 != ns2 or ours != ours:
        return None
    kind, tol, _ = TOLERANCE[key]
    if kind == "abs":
        return abs(ours - ns2) <= tol + 1e-12
    return abs(ours - ns2) <= tol * abs(ns2) + 1e-12


# ---- bench experiments -------------------------------------------------------------------


def scenario_of(name: str) -> dict:
    e = ALL[name]
    if name in EXPERIMENTS:
        return tomllib.loads(scenario_toml(name, e))
    return tomllib.loads(scenario_toml(name, e, "bench/vs_ns2.py", "bench/ns2/peer.tcl"))


def run_bench(name: str, seeds: int, duration: str | None = None, tcp: dict | None = None) -> dict:
    import aqmlab

    scen = scenario_of(name)
    if duration is not None:
        scen["duration"] = duration
        scen["warmup"] = f"{ns2spec.seconds(duration) / 5!r}s"
    log(f"== {name}: {ALL[name]['desc']}")
    runs: dict[str, list[dict]] = {"ns2": [], "aqmlab": []}
    for seed in range(1, seeds + 1):
        sp = ns2spec.spec(scen, seed, tcp)
        r = ns2result.run(sp, seed)
        m = metrics(r)
        m["wall"] = r.wall
        runs["ns2"].append(m)
        t0 = time.perf_counter()
        a = aqmlab.run(scen, seed=seed)
        m2 = metrics(a)
        m2["wall"] = time.perf_counter() - t0
        runs["aqmlab"].append(m2)
        log(f"  seed {seed}: ns-2 {short(m)}  |  aqmlab {short(m2)}")
    rows = {}
    for key in LABELS:
        n, o = mean_sd([m[key] for m in runs["ns2"]]), mean_sd([m[key] for m in runs["aqmlab"]])
        rows[key] = {"ns2": n, "aqmlab": o, "within": within(key, n[0], o[0])}
    return {
        "experiment": name,
        "description": ALL[name]["desc"],
        "ns2_tcp_overrides": tcp or {},
        "scenario": scen,
        "seeds": seeds,
        "runs": runs,
        "rows": rows,
    }


def short(m: dict) -> str:
    return (
        f"util {m['utilization']:.3f} loss {m['loss_pct']:.2f}% q {m['mean_queue']:.1f} "
        f"udp {m['udp_share']:.3f} jain {m['jain']:.3f}"
    )


def fmt(x: float) -> str:
    if x != x:
        return "-"
    a = abs(x)
    return f"{x:.0f}" if a >= 1000 else f"{x:.1f}" if a >= 100 else f"{x:.3g}"


def bench_table(res: dict) -> str:
    knobs = ", ".join(f"{k} {v}" for k, v in res.get("ns2_tcp_overrides", {}).items())
    out = [
        f"**{res['experiment']}**: {res['description']} ({res['seeds']} seeds each; mean ± sd)"
        + (f"; ns-2 with {knobs}" if knobs else ""),
        "",
        "| quantity | ns-2.35 | aqmlab | tolerance | within |",
        "|---|---|---|---|---|",
    ]
    for key, row in res["rows"].items():
        (n, ns), (o, os_) = row["ns2"], row["aqmlab"]
        tol = TOLERANCE.get(key, (None, None, ""))[2]
        ok = {True: "yes", False: "**no**", None: ""}[row["within"]]
        out.append(f"| {LABELS[key]} | {fmt(n)} ± {fmt(ns)} | {fmt(o)} ± {fmt(os_)} | {tol} | {ok} |")
    return "\n".join(out) + "\n"


# ---- the reproduction's points ------------------------------------------------------------


#: The order `repro all` runs the experiments in: the ones the fidelity work names
#: first, then the rest of each paper, the aggregate FQ paper's FIFO points last
#: (the longest).
REPRO_FIRST = ["choke-fig3", "sfb-table1", "sfred-nlred-fig11", "sfred-nlred-fig19-20"]


def run_repro(ids: list[str], seeds: int, duration: str | None) -> dict:
    """ns-2's value of every check of `ids` that depends only on points ns-2 can
    run, from the reproduction's own scenarios, measure and checks; written to
    bench/results/ns2-repro.json after each experiment, merged into what is there
    when it was made with the same seeds and duration."""
    import repro_peer

    from aqmlab.repro import resolve

    chosen = [e.id for e in resolve(ids)]
    order = [i for i in REPRO_FIRST if i in chosen]
    order += [i for i in chosen if i not in order and not i.startswith("aggfq")]
    order += [i for i in chosen if i not in order]
    path = RESULTS / "ns2-repro.json"
    old = json.loads(path.read_text()) if path.exists() else None

    def save(doc: dict) -> None:
        if old and old.get("seeds") == doc["seeds"] and old.get("duration") == doc["duration"]:
            merged = {**old, "date": doc["date"], "aqmlab": doc["aqmlab"]}
            merged["experiments"] = {**old["experiments"], **doc["experiments"]}
            merged["skipped"] = {**old["skipped"], **doc["skipped"]}
            for k in doc["experiments"]:
                merged["skipped"].pop(k, None)
            doc = merged
        write_atomic(path, json.dumps(doc, indent=1, default=float) + "\n")

    res = repro_peer.run(order, seeds, duration, log=log, save=save)
    log(f"wrote {path.relative_to(ROOT)}")
    return res


# ---- main -----------------------------------------------------------------------------


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", nargs="*", help=f"experiments ({', '.join(ALL)}), or `repro [IDS]`, or `all`")
    p.add_argument("--seeds", type=int, default=None, help="seeds per point (bench 5, repro 2)")
    p.add_argument("--duration", help="shorten every run (warm-up a fifth), e.g. 20s")
    p.add_argument("--smoke", action="store_true", help="a few seconds of the smoke experiment")
    p.add_argument(
        "--ns2-tcp",
        action="append",
        default=[],
        metavar="VAR=VALUE",
        help="a diagnostic: set an Agent/TCP variable in ns-2 (results go to ns2-NAME-VAR_VALUE.*)",
    )
    o = p.parse_args()
    if o.seeds is not None and o.seeds < 1:
        p.error("--seeds must be at least 1")
    ensure_ns2()
    if o.smoke:
        return smoke()
    what = o.what or ["a-red", "a-droptail"]
    if what[0] in ("repro", "all"):
        if what[0] == "all":
            for n in BENCH_SET:
                bench_one(n, o.seeds or BENCH_SEEDS.get(n, 5), o.duration)
            write_summary()
            ids = ["all"]
        else:
            ids = what[1:] or ["all"]
        run_repro(ids, o.seeds or 2, o.duration)
        if what[0] == "all":
            subprocess.run([sys.executable, str(BENCH / "validation.py")], check=True)
        return 0
    for n in what:
        if n not in ALL:
            p.error(f"unknown experiment {n!r} (known: {', '.join(ALL)}, or repro, or all)")
    tcp = {}
    for kv in o.ns2_tcp:
        if "=" not in kv:
            p.error(f"--ns2-tcp {kv!r}: write VAR=VALUE")
        k, v = kv.split("=", 1)
        tcp[k] = v
    for n in what:
        bench_one(n, o.seeds or 5, o.duration, tcp)
    if not tcp:
        write_summary()
    return 0


def bench_one(name: str, seeds: int, duration: str | None, tcp: dict | None = None) -> None:
    res = run_bench(name, seeds, duration, tcp)
    if tcp:
        name += "-" + "-".join(f"{k.strip('_')}_{v}" for k, v in tcp.items())
    res["ns2_version"] = ns2_version()
    res["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    text = bench_table(res)
    print(text, flush=True)
    if duration is None:
        write_atomic(RESULTS / f"ns2-{name}.json", json.dumps(res, indent=1) + "\n")
        write_atomic(RESULTS / f"ns2-{name}.md", text)


def write_summary() -> None:
    """bench/results/ns2-bench.md: one line per experiment run so far."""
    lines = [
        "# aqmlab beside ns-2.35: bench experiments",
        "",
        "Written by `python3 bench/vs_ns2.py all`; means over seeds, ns-2.35 / aqmlab. "
        "Tolerances fixed before the runs: utilization 2 points, loss 10% relative, "
        "mean queue 10%, UDP share 2 points, Jain 0.03; **bold** is outside.",
        "",
        "| experiment | seeds | utilization | loss (%) | mean queue | UDP share | Jain (TCP) |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in ALL:
        f = RESULTS / f"ns2-{n}.json"
        if not f.exists():
            continue
        res = json.loads(f.read_text())
        cells = []
        for key in ("utilization", "loss_pct", "mean_queue", "udp_share", "jain"):
            row = res["rows"][key]
            text = f"{fmt(row['ns2'][0])} / {fmt(row['aqmlab'][0])}"
            cells.append(f"**{text}**" if row["within"] is False else text)
        lines.append(f"| {n} | {res['seeds']} | " + " | ".join(cells) + " |")
    write_atomic(RESULTS / "ns2-bench.md", "\n".join(lines) + "\n")


def smoke() -> int:
    """The smoke experiment for 5 s, one seed: the simulators agree loosely (TCP
    goodput within 25%, UDP share within 25 points), as vs_ns3.py --smoke."""
    res = run_bench("smoke", 1, "5s")
    print(bench_table(res), flush=True)
    (tn, _), (ta, _) = res["rows"]["tcp_goodput_mbps"]["ns2"], res["rows"]["tcp_goodput_mbps"]["aqmlab"]
    (un, _), (ua, _) = res["rows"]["udp_share"]["ns2"], res["rows"]["udp_share"]["aqmlab"]
    ok = tn > 0 and abs(ta - tn) / tn <= 0.25 and abs(ua - un) <= 0.25
    print(f"{int(ok)} passed, {int(not ok)} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
