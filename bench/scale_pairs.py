"""Two builds of aqmlab on bench/scale.py's flows scenarios, alternating run by run.

On a shared machine one build's table after the other's is measured at different
loads; here each row runs both builds back to back (their order swapped every
repetition), so the pairwise ratio is the figure to read.

    python3 bench/scale_pairs.py A_BINARY B_BINARY [--flows 10,1000,10000,100000] [--reps 3] [--out FILE]
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    p.add_argument("--flows", default="10,1000,10000,100000")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--out", type=Path)
    a = p.parse_args()
    builds = [("a", a.a), ("b", a.b)]
    rows = []
    for rep in range(a.reps):
        for n in [int(x) for x in a.flows.split(",")]:
            for name, binary in builds if rep % 2 == 0 else builds[::-1]:
                toml = scale.dumbbell(f"scale-{n}", "1Gbps", "10s", "2s", 2500, scale.tcp_flows(n))
                r = scale.measured_run(binary, toml)
                r.update(flows=n, build=name, binary=str(binary), rep=rep)
                rows.append(r)
                print(
                    f"{rep} {name} {n:>7} events={r['events']:,} cpu={r['cpu']:.2f} "
                    f"Mev/s={r['events'] / r['cpu'] / 1e6:.2f} "
                    f"ns/pkt={r['cpu'] / r['bottleneck_packets'] * 1e9:.0f} "
                    f"rss={r['max_rss_bytes'] / 2**20:.1f}MiB",
                    flush=True,
                )
    if a.out:
        a.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
