#!/usr/bin/env python3
"""aqmlab against htsim, side by side, on matched TCP dumbbells (issue #17).

htsim (Broadcom/csg-htsim, the C++ simulator behind the NDP, EQDS and UEC work) is
the closest peer in speed. `bench/htsim/htsim_dumbbell.cpp` is a main program written
against htsim's library (it only calls its API and sets public fields); the aqmlab
scenarios are `bench/htsim/scenarios/<exp>.toml`. How the two are made alike is in
BENCHMARKS.md ("htsim").

htsim is not installed by this script: point it at a checkout of the public
repository (the commit measured is 841d9e7be46bb968eece766aa4b6c044c7799f67; only its
`sim/` folder is needed), with `--htsim-src` or `HTSIM_SRC`. Without one it says so
and exits 0, so a test run or CI without htsim skips it. It builds `libhtsim.a` with
htsim's own Makefile (inside the checkout) and the dumbbell main into
`bench/htsim/build/`.

The two run alternately, htsim then aqmlab, `--pairs` times per experiment. CPU time
(user + sys) of each process comes from the kernel (wait4's rusage, microseconds):
on a shared machine the pairwise CPU ratio is the figure to read. Results go to
`bench/results/htsim/<exp>.json` and `.md` (`--out`).

    HTSIM_SRC=~/csg-htsim python3 bench/vs_htsim.py --pairs 5 --aqmlab target/release/aqmlab
    python3 bench/vs_htsim.py B C --pairs 7 --htsim-src ~/csg-htsim/sim
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
HERE = BENCH / "htsim"
MAIN = HERE / "htsim_dumbbell.cpp"
HARNESS = HERE / "harness.h"
SCENARIOS = HERE / "scenarios"
BUILD = HERE / "build"
RESULTS = BENCH / "results" / "htsim"

# htsim_dumbbell's arguments per experiment; the aqmlab scenario is SCENARIOS/<exp>.toml.
COMMON = ["-pkt", "1000", "-cwnd0", "1", "-init_rto_s", "1", "-scan_ms", "10",
          "-spread_s", "1", "-seed", "1", "-access_pkts", "1000"]  # fmt: skip
A = ["-conns", "32", "-bw_mbps", "1", "-bdelay_ms", "1", "-arate_mbps", "10", "-adelay_ms", "1",
     "-qpkts", "300", "-maxwnd", "300", "-dur_s", "100", "-warmup_s", "20"]  # fmt: skip
B = ["-conns", "400", "-bw_mbps", "45", "-bdelay_ms", "10", "-arate_mbps", "100", "-adelay_ms", "5",
     "-qpkts", "200", "-maxwnd", "131", "-dur_s", "20", "-warmup_s", "5"]  # fmt: skip
EXPERIMENTS = {
    "A": A,
    "B": B,
    "C": ["-conns", "1000", "-bw_mbps", "100", "-bdelay_ms", "10", "-arate_mbps", "1000",
          "-adelay_ms", "1", "-qpkts", "1000", "-maxwnd", "131", "-dur_s", "30", "-warmup_s", "10"],
    "D": ["-conns", "10000", "-bw_mbps", "1000", "-bdelay_ms", "10", "-arate_mbps", "1000",
          "-adelay_ms", "1", "-qpkts", "5000", "-maxwnd", "131", "-dur_s", "5", "-warmup_s", "2"],
    "A-cbr": [*A, "-cbr_mbps", "2"],
    "B-cbr": [*B, "-cbr_mbps", "45"],
}  # fmt: skip


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run(cmd, **kw):
    log("+", " ".join(str(c) for c in cmd))
    return subprocess.run(cmd, check=True, **kw)


def htsim_sim_dir(src: Path) -> Path | None:
    """The checkout's `sim/` folder (given the checkout or the folder itself)."""
    for d in (src / "sim", src):
        if (d / "eventlist.h").exists() and (d / "Makefile").exists():
            return d
    return None


def build_htsim(sim: Path) -> Path:
    """libhtsim.a with htsim's own Makefile (g++ -O3 -g, asserts on), then the main at -O3."""
    run(["nice", "-n", "10", "make", "-C", str(sim), "-j2", "libhtsim.a"], stdout=subprocess.DEVNULL)
    BUILD.mkdir(parents=True, exist_ok=True)
    exe = BUILD / "htsim_dumbbell"
    lib = sim / "libhtsim.a"
    newest_input = max(p.stat().st_mtime for p in (MAIN, HARNESS, lib))
    if not exe.exists() or exe.stat().st_mtime < newest_input:
        run(["nice", "-n", "10", "g++", "-Wall", "-std=c++11", "-g", "-O3", f"-I{sim}", str(MAIN),
             "-o", str(exe), f"-L{sim}", "-lhtsim"])  # fmt: skip
    return exe


def build_aqmlab() -> Path:
    root = BENCH.parent
    run(["nice", "-n", "10", "cargo", "build", "--release", "-p", "aqmlab-cli"], cwd=root)
    return Path(os.environ.get("CARGO_TARGET_DIR", root / "target")) / "release" / "aqmlab"


def timed(cmd: list[str], stdout: Path) -> dict:
    """Runs cmd with stdout to a file; the kernel's CPU seconds of the child."""
    with stdout.open("w") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    err = p.stderr.read().decode() if p.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{cmd[0]} failed: {err[-2000:]}")
    # No peak RSS: Linux carries the forking harness's own resident pages into the
    # child's ru_maxrss at exec, so it would measure this script (bench/scale.py
    # parses its JSON in a child for that reason). Memory is scale.py's business.
    return dict(wall_s=wall, cpu_s=ru.ru_utime + ru.ru_stime, user_s=ru.ru_utime, sys_s=ru.ru_stime)


def run_htsim(exe: Path, exp: str, out: Path) -> dict:
    path = out / f"{exp}.htsim.out"
    args = EXPERIMENTS[exp]
    r = timed([str(exe), *args, *COMMON], path)
    text = path.read_text()
    s = json.loads(text.rsplit("SUMMARY ", 1)[1])
    warm_ms = 1000 * float(args[args.index("-warmup_s") + 1])
    # htsim's TcpSrc prints one "At <ms> RTO ..." line per retransmission timeout.
    rto = [float(m) for m in re.findall(r"^At (\S+) RTO", text, re.M)]
    r.update(sim="htsim", events=s["events"], tcp_bps=s["tcp_goodput_bps"], udp_bps=s["cbr_goodput_bps"],
             jain=s["jain"], util=s["bn_utilization"], bn_drops=s["bn_drops"],
             timeouts=sum(1 for t in rto if t >= warm_ms), fast_recoveries=s["fast_recoveries"])  # fmt: skip
    return r


def run_aqmlab(exe: Path, exp: str, out: Path) -> dict:
    path = out / f"{exp}.aqmlab.json"
    r = timed([str(exe), "run", str(SCENARIOS / f"{exp}.toml"), "--json", "-q"], path)
    d = json.loads(path.read_text())
    tcp = [f for f in d["flows"] if f["group"] == "tcp"]
    bn = next(link for link in d["links"] if link["name"] == "left->right")
    r.update(sim="aqmlab", events=d["events"], tcp_bps=d["groups"]["tcp"]["goodput_bps"],
             udp_bps=d["groups"].get("udp", {}).get("goodput_bps", 0.0), jain=d["fairness"]["tcp"]["jain"],
             util=bn["utilization"], bn_drops=bn["drops_total"], timeouts=sum(f["timeouts"] for f in tcp),
             fast_recoveries=sum(f["fast_recoveries"] for f in tcp))  # fmt: skip
    return r


def summary(exp: str, runs: list[dict]) -> dict:
    h = [r for r in runs if r["sim"] == "htsim"]
    a = [r for r in runs if r["sim"] == "aqmlab"]
    ratios = [x["cpu_s"] / y["cpu_s"] for x, y in zip(h, a)]
    return dict(
        exp=exp,
        cpu_ratios=ratios,
        cpu_ratio_median=statistics.median(ratios),
        htsim_cpu_median=statistics.median(r["cpu_s"] for r in h),
        aqmlab_cpu_median=statistics.median(r["cpu_s"] for r in a),
        htsim_events=h[0]["events"],
        aqmlab_events=a[0]["events"],
    )


def table(exp: str, runs: list[dict], load: tuple) -> str:
    lines = [f"#### {exp}", "", f"load average before, after: {load[0]}, {load[1]}", "",
             "| pair | simulator | CPU s | wall s | events | events/CPU s | TCP Mb/s "
             "| UDP Mb/s | Jain | bn util | bn drops | timeouts | fast rec. |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for i, r in enumerate(runs):
        lines.append(
            f"| {i // 2 + 1} | {r['sim']} | {r['cpu_s']:.3f} | {r['wall_s']:.3f} "
            f"| {r['events']:,} | {r['events'] / max(r['cpu_s'], 1e-9) / 1e6:.2f} M "
            f"| {r['tcp_bps'] / 1e6:.3f} | {r['udp_bps'] / 1e6:.3f} | {r['jain']:.3f} | {r['util']:.4f} "
            f"| {r['bn_drops']:,} | {r['timeouts']:,} | {r['fast_recoveries']:,} |"
        )
    s = summary(exp, runs)
    lines += ["", "htsim / aqmlab CPU per pair: " + ", ".join(f"{x:.2f}x" for x in s["cpu_ratios"])
              + f"; median {s['cpu_ratio_median']:.2f}x (range {min(s['cpu_ratios']):.2f}x to "
              f"{max(s['cpu_ratios']):.2f}x)"]  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("experiments", nargs="*", help=f"of {', '.join(EXPERIMENTS)} (default: all)")
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--htsim-src", type=Path, default=os.environ.get("HTSIM_SRC"),
                   help="a csg-htsim checkout (or its sim/ folder); default $HTSIM_SRC")  # fmt: skip
    p.add_argument("--aqmlab", type=Path, help="the aqmlab binary (default: build it)")
    p.add_argument("--out", type=Path, default=RESULTS, help="where the results go [bench/results/htsim]")
    o = p.parse_args()
    names = o.experiments or list(EXPERIMENTS)
    for n in names:
        if n not in EXPERIMENTS:
            p.error(f"unknown experiment {n!r}; the experiments are {', '.join(EXPERIMENTS)}")
    if o.pairs < 1:
        p.error("--pairs must be at least 1")
    sim = htsim_sim_dir(Path(o.htsim_src).expanduser()) if o.htsim_src else None
    if sim is None:
        where = f" ({o.htsim_src} has no sim/eventlist.h)" if o.htsim_src else ""
        print(f"vs_htsim: skipped: no htsim source{where}; point HTSIM_SRC or --htsim-src at csg-htsim")
        return 0
    exe = build_htsim(sim)
    aqmlab = o.aqmlab or build_aqmlab()
    raw = o.out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    rows = []
    for exp in names:
        before = os.getloadavg()
        runs = []
        for _ in range(o.pairs):
            runs.append(run_htsim(exe, exp, raw))
            runs.append(run_aqmlab(aqmlab, exp, raw))
        load = (before, os.getloadavg())
        text = table(exp, runs, load)
        print(text, flush=True)
        s = summary(exp, runs)
        rows.append(s)
        (o.out / f"{exp}.md").write_text(text)
        doc = dict(exp=exp, htsim_args=EXPERIMENTS[exp] + COMMON, load=load, summary=s, runs=runs,
                   date=time.strftime("%Y-%m-%d %H:%M:%S %Z"))  # fmt: skip
        (o.out / f"{exp}.json").write_text(json.dumps(doc, indent=1) + "\n")
    print("| exp | htsim CPU s (median) | aqmlab CPU s (median) | htsim / aqmlab, pairwise median (range) |")
    print("|---|---|---|---|")
    for s in rows:
        lo, hi = min(s["cpu_ratios"]), max(s["cpu_ratios"])
        print(
            f"| {s['exp']} | {s['htsim_cpu_median']:.3f} | {s['aqmlab_cpu_median']:.3f} "
            f"| {s['cpu_ratio_median']:.2f}x ({lo:.2f}-{hi:.2f}) |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
