#!/usr/bin/env bash
# Two builds of aqmlab side by side on one scenario, alternating, N pairs: the CPU
# seconds (user + sys, from the kernel) and events per CPU second of each run. On a
# shared, noisy machine the pairwise ratio is the figure to read.
#   bench/pair.sh N SCENARIO BIN_A BIN_B
set -euo pipefail
n=$1 scenario=$2 a=$3 b=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for _ in $(seq "$n"); do
    for bin in "$a" "$b"; do
        /usr/bin/time -f "%U %S" -o "$tmp/time" "$bin" run "$scenario" --json -q > "$tmp/out"
        python3 - "$bin" "$tmp/time" "$tmp/out" <<'PY'
import json, os, sys
user, sys_ = map(float, open(sys.argv[2]).read().split()[-2:])
events = json.load(open(sys.argv[3]))["events"]
cpu = user + sys_
print(f"{os.path.basename(sys.argv[1])} cpu={cpu:.2f}s events={events} per_cpu_s={events / cpu / 1e6:.2f}M")
PY
    done
done
