#!/usr/bin/env bash
# The wheel `make wheel` built, installed alone into a clean venv (as on a cluster's
# node), runs the default scenario from the command and from Python; its tags say
# manylinux2014 and abi3; the sdist builds.
# Usage: wheel_check.sh PYTHON WHEELS_DIR CONSTRAINTS
set -euo pipefail
python=$1
wheels=$(realpath "$2")
constraints=$(realpath "$3")
wheel=$(ls "$wheels"/aqmlab-*.whl)
case $(basename "$wheel") in
    *-cp39-abi3-manylinux2014_x86_64*) ;;
    *) echo "wheel_check: $wheel is not an abi3 manylinux2014 wheel" >&2; exit 1 ;;
esac
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
"$python" -m venv "$venv/env"
# Wheels only: a cluster's node needs no compiler for aqmlab or its dependencies.
"$venv/env/bin/pip" install --quiet --only-binary=:all: --constraint "$constraints" "$wheel[dask]"
cd "$venv"
"$venv/env/bin/aqmlab" run > run.txt
grep -q "^tcp " run.txt || { echo "wheel_check: no TCP row in aqmlab run's summary" >&2; cat run.txt >&2; exit 1; }
"$venv/env/bin/python" -c '
import aqmlab
r = aqmlab.run()
assert r.groups.set_index("group").loc["tcp", "goodput_bps"] > 0, r.groups
print("wheel_check:", aqmlab.__version__, "ran the default scenario")
from dask.distributed import Client, LocalCluster
with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
    with Client(cluster) as client:
        sw = aqmlab.sweep("choke-fig3", {"qdisc.kind": ["red", "choke"]}, seeds=1, client=client,
                          duration="3s", warmup="1s")
assert len(sw.runs) == 2, sw.runs
print("wheel_check: a sweep of", len(sw.runs), "runs on a local Dask cluster")
'
cd - > /dev/null
"$python" -m maturin sdist --out "$venv/sdist"
ls "$venv"/sdist/aqmlab-*.tar.gz > /dev/null
