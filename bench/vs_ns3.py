#!/usr/bin/env python3
"""aqmlab against ns-3, side by side, on the same experiments.

For each experiment this script writes the aqmlab scenario (bench/scenarios/*.toml),
builds the ns-3 peer (bench/ns3/aqm_bench.cc, g++ -O3 against Debian's libns3-dev)
and runs the two alternately, ns-3 then aqmlab, for --pairs pairs.  It prints, per
run: wall seconds (of the whole process), CPU seconds, events, events per wall
second, bottleneck packets per wall second, aggregate TCP goodput, UDP goodput and
Jain's index over the TCP flows; then per pair the wall-time ratio ns-3 / aqmlab and
its median and range; then how well the two simulators agree.  Everything also goes
to bench/results/<experiment>.json.

The C++ program is the peer that counts.  `--python` also runs the PyPI wheel's
ns-3 (bench/ns3/aqm_bench.py) on the same experiment, reported beside it.

ns-3 is installed when missing (apt-get install libns3-dev; pip install ns3 for
--python).  Not part of CI's test run: bench/test_smoke.sh runs `--smoke` only when
ns-3 is already installed.

    python3 bench/vs_ns3.py a-red a-droptail --pairs 3 --python
    python3 bench/vs_ns3.py b c --pairs 3
    python3 bench/vs_ns3.py codel-20 pie-20 fq_codel-20 --pairs 5   # seeds 1-5
    python3 bench/vs_ns3.py --smoke

The AQM experiments (codel-*, pie-*, fq_codel-*) run one seed per pair and add
the bottleneck's utilization, loss rate, time-averaged queue and Jain's index,
each against a tolerance fixed before the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from experiments import EXPERIMENTS, MAX_P, MEAN_PKT, PKT, W_Q, scenario_toml

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
NS3_SRC = BENCH / "ns3" / "aqm_bench.cc"
NS3_PY = BENCH / "ns3" / "aqm_bench.py"
BUILD = BENCH / "ns3" / "build"
NS3_LIBS = [
    "ns3-core",
    "ns3-network",
    "ns3-internet",
    "ns3-point-to-point",
    "ns3-applications",
    "ns3-traffic-control",
]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run(cmd, **kw):
    log("+", " ".join(str(c) for c in cmd))
    return subprocess.run(cmd, check=True, **kw)


# ---- installing and building -------------------------------------------------------


def ensure_ns3_cpp():
    if Path("/usr/include/ns3/core-module.h").exists():
        return
    log("libns3-dev is missing: installing it with apt-get")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    run([*sudo, "apt-get", "update", "-q"], env=env)
    run([*sudo, "apt-get", "install", "-y", "-q", "libns3-dev"], env=env)


def ns3_python_available() -> bool:
    r = subprocess.run(
        [sys.executable, "-c", "import importlib.util as u; print(u.find_spec('ns') is not None)"],
        capture_output=True,
        text=True,
    )
    return r.stdout.strip() == "True"


def ensure_ns3_python():
    if not ns3_python_available():
        log("the ns3 wheel is missing: pip install ns3")
        run([sys.executable, "-m", "pip", "install", "ns3"])


def debian_ns3_version() -> str:
    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libns3-dev"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def python_ns3_version() -> str:
    r = subprocess.run([sys.executable, "-m", "pip", "show", "ns3"], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip()
    return "not installed"


def ns3_link_flags() -> list[str]:
    # Debian 12's .pc files for ns-3 are broken (an "-I/usr\\;" flag, and libgsl.so /
    # libsqlite3.so paths that only their -dev packages install), so pkg-config is
    # not used: the headers are in /usr/include/ns3 (dpkg -L libns3-dev) and the
    # libraries are libns3-<module>.so in the default library path.
    return ["-I/usr/include", *(f"-l{lib}" for lib in NS3_LIBS)]


def build_ns3() -> Path:
    ensure_ns3_cpp()
    BUILD.mkdir(parents=True, exist_ok=True)
    exe = BUILD / "aqm_bench"
    if exe.exists() and exe.stat().st_mtime >= NS3_SRC.stat().st_mtime:
        return exe
    run(["nice", "-n", "10", "g++", "-O3", "-std=c++17", str(NS3_SRC), "-o", str(exe), *ns3_link_flags()])
    return exe


def target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def build_aqmlab() -> Path:
    run(["nice", "-n", "10", "cargo", "build", "--release", "-p", "aqmlab-cli"], cwd=ROOT)
    return target_dir() / "release" / "aqmlab"


# ---- one experiment, two simulators --------------------------------------------------


def ns3_args(e: dict, seed: int = 1) -> list[str]:
    a = {
        "tcp": e["tcp"],
        "udpRate": e["udp"] or "0",
        "bnRate": e["bn_rate"],
        "bnDelay": e["bn_delay"],
        "accessRate": e["access_rate"],
        "accessDelay": e["access_delay"],
        "queue": e["queue"],
        "limit": e["limit"],
        "minTh": e.get("min_th", 5),
        "maxTh": e.get("max_th", 15),
        "wq": W_Q,
        "maxP": MAX_P,
        "meanPktSize": MEAN_PKT,
        "duration": e["duration"],
        "warmup": e["warmup"],
        "seed": seed,
        "pktSize": e.get("pkt", PKT),
        "maxWindow": e["max_window"],
        "minRto": e.get("min_rto", "200ms"),
    }
    return [f"--{k}={v}" for k, v in a.items()]


def timed(cmd: list[str]) -> tuple[dict, float, float]:
    """Runs `cmd` (niced), parses the last JSON line; returns it, wall and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(["nice", "-n", "10", *cmd], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    line = [s for s in r.stdout.splitlines() if s.startswith("{")][-1]
    return json.loads(line), wall, cpu


def aqmlab_row(out: dict, wall: float, cpu: float) -> dict:
    groups = out["groups"]
    bn = out["links"][0]
    assert bn["name"] == "left->right", bn["name"]
    return dict(
        simulator="aqmlab",
        wall=wall,
        cpu=cpu,
        inner_wall=out["wall_seconds"],
        events=out["events"],
        bottleneck_packets=bn["tx_packets"],
        tcp_bps=groups["tcp"]["goodput_bps"],
        udp_bps=groups["udp"]["goodput_bps"] if "udp" in groups else 0.0,
        jain=groups["tcp"]["jain"],
        utilization=bn["utilization"],
        loss=bn["drops_total"] / max(bn["arrivals"], 1),
        # The qdisc's backlog; the packet in transmission is not in it.
        queue=bn["mean_queue_packets"],
        timeouts=sum(f.get("timeouts", 0) for f in out["flows"] if f["group"] == "tcp"),
        fast_recoveries=sum(f.get("fast_recoveries", 0) for f in out["flows"] if f["group"] == "tcp"),
    )


def ns3_row(name: str, out: dict, wall: float, cpu: float) -> dict:
    return dict(
        simulator=name,
        wall=wall,
        cpu=cpu,
        inner_wall=out["wall_seconds"],
        events=out["events"],
        bottleneck_packets=out["bottleneck_packets"],
        tcp_bps=out["tcp_goodput_bps"],
        udp_bps=out["udp_goodput_bps"],
        jain=out["jain"],
        utilization=out.get("utilization", 0.0),
        loss=out.get("qdisc_drops_window", 0) / max(out.get("qdisc_arrivals_window", 0), 1),
        # The queue disc's backlog; the device holds one more packet below it,
        # waiting for the one in transmission (queue_device).
        queue=out.get("mean_queue_qdisc", 0.0),
        queue_device=out.get("mean_queue_device", 0.0),
        timeouts=out.get("tcp_timeouts", 0),
        fast_recoveries=out.get("tcp_fast_recoveries", 0),
    )


def derived(r: dict) -> dict:
    r["events_per_s"] = r["events"] / r["wall"]
    r["bottleneck_pkts_per_s"] = r["bottleneck_packets"] / r["wall"]
    total = r["tcp_bps"] + r["udp_bps"]
    r["udp_share"] = r["udp_bps"] / total if total > 0 else 0.0
    return r


def fmt_row(r: dict) -> str:
    return (
        f"| {r['simulator']:<14} | {r['wall']:8.2f} | {r['cpu']:8.2f} | {r['events']:>11,} "
        f"| {r['events_per_s'] / 1e6:7.2f} M | {r['bottleneck_pkts_per_s']:>10,.0f} "
        f"| {r['tcp_bps'] / 1e6:8.3f} | {r['udp_bps'] / 1e6:8.3f} | {r['udp_share'] * 100:5.1f}% "
        f"| {r['jain']:.3f} |"
    )


HEADER = (
    "| simulator      | wall s   | CPU s    | events      | events/s  | bn pkts/s  "
    "| TCP Mb/s | UDP Mb/s | UDP % | Jain  |\n"
    "|----------------|----------|----------|-------------|-----------|------------"
    "|----------|----------|-------|-------|"
)


def run_experiment(name: str, pairs: int, with_python: bool, ns3_exe: Path, aqmlab: Path) -> dict:
    e = EXPERIMENTS[name]
    scen_dir = BENCH / "scenarios"
    scen_dir.mkdir(exist_ok=True)
    scen = scen_dir / f"{name}.toml"
    scen.write_text(scenario_toml(name, e))
    args = ns3_args(e)
    log(f"\n== {name}: {e['desc']}")
    rows, ratios, cpu_ratios = [], [], []
    for i in range(pairs):
        seed_args = []
        if "aqm_tolerance" in e:
            # The AQM comparisons are about results, not speed: one seed per pair.
            args = ns3_args(e, seed=i + 1)
            seed_args = ["--seed", str(i + 1)]
        a = derived(ns3_row("ns-3.37 C++", *timed([str(ns3_exe), *args])))
        b = derived(aqmlab_row(*timed([str(aqmlab), "run", str(scen), "--json", *seed_args])))
        a["pair"] = b["pair"] = i + 1
        rows += [a, b]
        ratios.append(a["wall"] / b["wall"])
        cpu_ratios.append(a["cpu"] / max(b["cpu"], 1e-9))
        log(fmt_row(a))
        log(fmt_row(b))
        log(f"pair {i + 1}: ns-3 / aqmlab wall = {ratios[-1]:.1f}x, CPU = {cpu_ratios[-1]:.1f}x")
    py_rows = []
    if with_python:
        ensure_ns3_python()
        r = derived(ns3_row("ns-3.44 PyPI", *timed([sys.executable, str(NS3_PY), *args])))
        py_rows.append(r)
        log(fmt_row(r))
    ns = [r for r in rows if r["simulator"] != "aqmlab"]
    aq = [r for r in rows if r["simulator"] == "aqmlab"]
    med = lambda rs, k: statistics.median(r[k] for r in rs)  # noqa: E731
    agree = dict(
        tcp_goodput_diff=(med(aq, "tcp_bps") - med(ns, "tcp_bps")) / max(med(ns, "tcp_bps"), 1e-9),
        udp_share_diff_pp=(med(aq, "udp_share") - med(ns, "udp_share")) * 100,
        jain_ns3=med(ns, "jain"),
        jain_aqmlab=med(aq, "jain"),
    )
    if "aqm_tolerance" in e:
        mean = lambda rs, k: statistics.fmean(r[k] for r in rs)  # noqa: E731
        for k in ("utilization", "loss", "queue", "jain"):
            agree[f"{k}_ns3_mean"] = mean(ns, k)
            agree[f"{k}_aqmlab_mean"] = mean(aq, k)
        agree["queue_device_ns3_mean"] = mean(ns, "queue_device")
    result = dict(
        experiment=name,
        description=e["desc"],
        params=e,
        pairs=pairs,
        runs=rows,
        python_runs=py_rows,
        ratio_wall=dict(per_pair=ratios, median=statistics.median(ratios), min=min(ratios), max=max(ratios)),
        ratio_cpu=dict(
            per_pair=cpu_ratios,
            median=statistics.median(cpu_ratios),
            min=min(cpu_ratios),
            max=max(cpu_ratios),
        ),
        events_per_s_aqmlab_median=med(aq, "events_per_s"),
        events_per_s_ns3_median=med(ns, "events_per_s"),
        agreement=agree,
    )
    if py_rows:
        result["ratio_wall_python_vs_aqmlab"] = py_rows[0]["wall"] / med(aq, "wall")
    return result


def report(res: dict) -> str:
    out = [f"### {res['experiment']}: {res['description']}", "", HEADER]
    out += [fmt_row(r) for r in res["runs"] + res["python_runs"]]
    w, c, a = res["ratio_wall"], res["ratio_cpu"], res["agreement"]
    out += [
        "",
        "ns-3 / aqmlab wall time per pair: "
        + ", ".join(f"{x:.1f}x" for x in w["per_pair"])
        + f"; median {w['median']:.1f}x, range {w['min']:.1f}x to {w['max']:.1f}x",
        "ns-3 / aqmlab CPU time per pair: "
        + ", ".join(f"{x:.1f}x" for x in c["per_pair"])
        + f"; median {c['median']:.1f}x, range {c['min']:.1f}x to {c['max']:.1f}x",
        f"aqmlab events/s (median): {res['events_per_s_aqmlab_median'] / 1e6:.2f} M; "
        f"ns-3: {res['events_per_s_ns3_median'] / 1e6:.2f} M",
        f"agreement (medians): aqmlab TCP goodput {a['tcp_goodput_diff'] * 100:+.1f}% vs ns-3, "
        f"UDP share {a['udp_share_diff_pp']:+.1f} pp, Jain {a['jain_aqmlab']:.3f} vs "
        f"{a['jain_ns3']:.3f}",
    ]
    if "aqm_tolerance" in res["params"]:
        out += ["", *aqm_report(res)]
    tol = res["params"].get("tolerance")
    if tol:
        ok = (
            abs(a["udp_share_diff_pp"]) <= tol["udp_share_pp"]
            and abs(a["tcp_goodput_diff"]) <= tol["tcp_goodput"]
        )
        out.append(
            f"tolerance (fixed before the runs): UDP share within {tol['udp_share_pp']} pp, TCP "
            f"goodput within {tol['tcp_goodput'] * 100:.0f}%: {'met' if ok else 'MISSED'}"
        )
    if "ratio_wall_python_vs_aqmlab" in res:
        out.append(f"ns-3.44 PyPI / aqmlab wall (median aqmlab): {res['ratio_wall_python_vs_aqmlab']:.1f}x")
    return "\n".join(out) + "\n"


def aqm_report(res: dict) -> list[str]:
    """The bottleneck side by side (means over the seeds), each against its tolerance."""
    a, tol = res["agreement"], res["params"]["aqm_tolerance"]
    per_seed = [
        f"seed {r['pair']} {r['simulator']}: utilization {r['utilization'] * 100:.2f}%, loss "
        f"{r['loss'] * 100:.2f}%, queue {r['queue']:.2f}"
        + (f" (+{r['queue_device']:.2f} in the device)" if "queue_device" in r else "")
        + f", Jain {r['jain']:.3f}, TCP timeouts {r['timeouts']}, fast recoveries {r['fast_recoveries']}"
        for r in res["runs"]
    ]
    u_ns, u_aq = a["utilization_ns3_mean"] * 100, a["utilization_aqmlab_mean"] * 100
    l_ns, l_aq = a["loss_ns3_mean"], a["loss_aqmlab_mean"]
    q_ns, q_aq = a["queue_ns3_mean"], a["queue_aqmlab_mean"]
    q_dev = q_ns + a["queue_device_ns3_mean"]
    j_ns, j_aq = a["jain_ns3_mean"], a["jain_aqmlab_mean"]

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    rel = lambda x, ref: (x - ref) / ref if ref else float("inf")  # noqa: E731
    return [
        *per_seed,
        "",
        "| measure (mean of seeds) | ns-3 | aqmlab | difference | tolerance | |",
        "|---|---|---|---|---|---|",
        f"| utilization | {u_ns:.2f}% | {u_aq:.2f}% | {u_aq - u_ns:+.2f} pp | {tol['utilization_pp']} pp "
        f"| {verdict(abs(u_aq - u_ns) <= tol['utilization_pp'])} |",
        f"| loss rate | {l_ns * 100:.2f}% | {l_aq * 100:.2f}% | {rel(l_aq, l_ns) * 100:+.1f}% "
        f"| {tol['loss_rel'] * 100:.0f}% | {verdict(abs(rel(l_aq, l_ns)) <= tol['loss_rel'])} |",
        f"| mean queue, packets (ns-3: queue disc) | {q_ns:.2f} | {q_aq:.2f} | {rel(q_aq, q_ns) * 100:+.1f}% "
        f"| {tol['queue_rel'] * 100:.0f}% | {verdict(abs(rel(q_aq, q_ns)) <= tol['queue_rel'])} |",
        f"| mean queue, packets (ns-3: queue disc + device) | {q_dev:.2f} | {q_aq:.2f} "
        f"| {rel(q_aq, q_dev) * 100:+.1f}% | {tol['queue_rel'] * 100:.0f}% "
        f"| {verdict(abs(rel(q_aq, q_dev)) <= tol['queue_rel'])} |",
        f"| Jain (TCP) | {j_ns:.3f} | {j_aq:.3f} | {j_aq - j_ns:+.3f} | {tol['jain']} "
        f"| {verdict(abs(j_aq - j_ns) <= tol['jain'])} |",
    ]


def machine() -> dict:
    mem = ""
    try:
        mem = subprocess.run(["free", "-h"], capture_output=True, text=True).stdout
    except OSError:
        pass
    return dict(
        date=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        cores=os.cpu_count(),
        platform=platform.platform(),
        memory=mem,
        loadavg=os.getloadavg(),
        ns3_debian=debian_ns3_version(),
        ns3_pypi=python_ns3_version(),
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("experiments", nargs="*", help=f"of {', '.join(EXPERIMENTS)}")
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--python", action="store_true", help="also run the PyPI wheel's ns-3")
    p.add_argument("--smoke", action="store_true", help="a tiny run that checks agreement")
    p.add_argument("--aqmlab", type=Path, help="the aqmlab binary (default: build it)")
    o = p.parse_args()
    names = ["smoke"] if o.smoke else (o.experiments or ["a-red", "a-droptail"])
    for n in names:
        if n not in EXPERIMENTS:
            p.error(f"unknown experiment {n!r}")
    ns3_exe = build_ns3()
    aqmlab = o.aqmlab or build_aqmlab()
    pairs = 1 if o.smoke else o.pairs
    if pairs < 1:
        p.error("--pairs must be at least 1")
    info = machine()
    results_dir = BENCH / "results"
    failures = []
    for n in names:
        res = run_experiment(n, pairs, o.python, ns3_exe, aqmlab)
        res["machine"] = info
        text = report(res)
        print(text, flush=True)
        if not o.smoke:
            results_dir.mkdir(exist_ok=True)
            (results_dir / f"{n}.json").write_text(json.dumps(res, indent=2) + "\n")
            (results_dir / f"{n}.md").write_text(text)
        a = res["agreement"]
        if o.smoke and (abs(a["tcp_goodput_diff"]) > 0.25 or abs(a["udp_share_diff_pp"]) > 25):
            failures.append(f"{n}: the simulators disagree: {a}")
    for f in failures:
        print("FAIL", f)
    if o.smoke:
        print(f"{1 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
