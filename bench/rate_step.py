"""The rate step of docs/links.md: scenarios/rate-step.toml (four NewReno flows,
the bottleneck falling from 10 to 2 Mbit/s at 20 s) under RED, PIE, CoDel and SFB;
the queueing delay over time of each, and the time each takes to bring it back
under its target.

    python bench/rate_step.py [--aqmlab PATH] [--out bench/results]

writes ``rate-step.png`` (the figure) and ``rate-step.md`` (the table) to OUT. The
queueing delay is the bottleneck's backlog in bytes over the rate in force, read
every 10 ms (``[monitor] queue_interval``). A qdisc has recovered at the first
sample after the step that is under its target and from which the delay's mean
over the next second is under it too; the table also gives the mean delay over
the last 15 s (CoDel's target bounds the smallest sojourn of each 100 ms, not
the mean).
The targets: CoDel's and PIE's own (5 and 15 ms); RED's and SFB's thresholds are
in packets, so the delay of RED's ``max_th`` (15 packets) and of SFB's
``bin_size`` (13 packets) at 2 Mbit/s with the scenario's 1,500-byte packets.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "rate-step.toml"
STEP_S, BEFORE_BPS, AFTER_BPS = 20.0, 10e6, 2e6
PACKET_BITS = 1500 * 8
HOLD_S = 1.0
TARGETS_S = {
    "red": 15 * PACKET_BITS / AFTER_BPS,
    "pie": 0.015,
    "codel": 0.005,
    "sfb": 13 * PACKET_BITS / AFTER_BPS,
}


def helpers():
    """python/aqmlab/repro/_helpers.py (``pyplot``, ``save``), read without
    importing the package, which needs its compiled extension."""
    path = ROOT / "python" / "aqmlab" / "repro" / "_helpers.py"
    spec = importlib.util.spec_from_file_location("_helpers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def delays(aqmlab: str, kind: str) -> tuple[list[float], list[float]]:
    """(times, queueing delays) of the bottleneck under ``kind``, seconds."""
    out = subprocess.run(
        [aqmlab, "run", str(SCENARIO), "--set", f"qdisc.kind={kind}", "--json", "--quiet"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    link = next(x for x in json.loads(out)["links"] if x["name"] == "left->right")
    t = link["queue"]["t_s"]
    rate = [BEFORE_BPS if s < STEP_S else AFTER_BPS for s in t]
    return t, [8 * b / r for b, r in zip(link["queue"]["bytes"], rate)]


def recovery(t: list[float], d: list[float], target: float) -> float | None:
    """Seconds from the step to the first sample under ``target`` from which
    the delay's mean over ``HOLD_S`` is under it too; None if there is none."""
    dt = t[1] - t[0]
    hold = round(HOLD_S / dt)
    first = next(i for i, s in enumerate(t) if s >= STEP_S)
    for i in range(first, len(t) - hold):
        if d[i] < target and sum(d[i : i + hold]) / hold < target:
            return t[i] - STEP_S
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aqmlab", default="aqmlab", help="the aqmlab binary")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    h = helpers()
    plt = h.pyplot()
    fig, axes = plt.subplots(len(TARGETS_S), 1, figsize=(8, 9), sharex=True)
    rows = [
        "| qdisc | target | peak delay after the step | back under the target after | mean delay, 25-40 s |",
        "|---|---|---|---|---|",
    ]
    for ax, (kind, target) in zip(axes, TARGETS_S.items()):
        t, d = delays(args.aqmlab, kind)
        back = recovery(t, d, target)
        peak = max(x for s, x in zip(t, d) if s >= STEP_S)
        late = [x for s, x in zip(t, d) if s >= STEP_S + 5]
        settled = sum(late) / len(late)
        ax.plot(t, [1000 * x for x in d], lw=0.8)
        ax.axhline(1000 * target, color="grey", ls="--", lw=0.8)
        ax.axvline(STEP_S, color="red", lw=0.6)
        ax.set_ylabel(f"{kind}\nqueue delay (ms)")
        shown = "never (in 20 s)" if back is None else f"{back:.2f} s"
        rows.append(
            f"| {kind} | {1000 * target:.0f} ms | {1000 * peak:.0f} ms | {shown} | {1000 * settled:.0f} ms |"
        )
    axes[-1].set_xlabel("time (s); the rate falls from 10 to 2 Mbit/s at 20 s")
    h.save(fig, out / "rate-step.png")
    table = "\n".join(rows) + "\n"
    (out / "rate-step.md").write_text(table)
    print(table, end="")


if __name__ == "__main__":
    main()
