"""FQ-CoDel's "do not drop below one MTU" rule and the TCP profile, one at a time.

    python3 bench/fq_codel_mtu_rule.py --bin target/release/aqmlab --seeds 3

The CHOKe dumbbell under FQ-CoDel (bench/scenarios/a-fq_codel.toml: 32 NewReno
flows and a 2 Mbit/s CBR flow over 1 Mbit/s, 1000-byte packets) four ways: the
MTU rule applied to each flow's queue (ns-3's) or to the qdisc's whole backlog
(Linux's), and the simulator's TCP under the ns-2 profile or the Linux one.
Prints, as means over the seeds, the CBR flow's goodput against its max-min
share, Jain's index among the TCP flows, and the TCP flows' timeouts.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

SCENARIO = Path(__file__).parent / "scenarios" / "a-fq_codel.toml"


def run(binary: str, per_flow: bool, profile: str, seed: int) -> dict:
    text = SCENARIO.read_text()
    text = text.replace("per_flow_mtu = true", f"per_flow_mtu = {str(per_flow).lower()}")
    text = text.replace('min_rto = "200ms"', f'min_rto = "200ms"\nprofile = "{profile}"')
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
        f.write(text)
        f.flush()
        out = subprocess.run(
            [binary, "run", f.name, "--json", "--seed", str(seed)], capture_output=True, text=True, check=True
        )
    r = json.loads(out.stdout)
    return {
        "cbr_kbps": r["groups"]["udp"]["goodput_bps"] / 1e3,
        "fair_kbps": r["flows"][-1]["fair_share_bps"] / 1e3,
        "jain": r["fairness"]["tcp"]["jain"],
        "timeouts": sum(f["timeouts"] for f in r["flows"] if f["group"] == "tcp"),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default="target/release/aqmlab")
    p.add_argument("--seeds", type=int, default=3)
    a = p.parse_args()
    print("| MTU rule | TCP profile | CBR goodput (fair share) | Jain (TCP) | TCP timeouts |")
    print("|---|---|---|---|---|")
    for per_flow in (True, False):
        for profile in ("ns2", "linux"):
            rows = [run(a.bin, per_flow, profile, s) for s in range(1, a.seeds + 1)]
            m = {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]}
            rule = "each flow's queue (ns-3)" if per_flow else "whole backlog (Linux)"
            print(
                f"| {rule} | `{profile}` | {m['cbr_kbps']:.1f} kbit/s ({m['fair_kbps']:.1f}) "
                f"| {m['jain']:.3f} | {m['timeouts']:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
