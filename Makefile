# The whole test suite: `make test` (what CI runs through .ci/run).
#
# It changes nothing outside this folder: every Python package goes into a virtual
# environment of its own (.venv-test, made from $(PYTHON) on first use), and every
# build into target/ (or $CARGO_TARGET_DIR). Expect about 4-5 GB there: a release
# build for the wheel and an optimised test build.
PYTHON ?= python3
VENV ?= .venv-test
PY := $(VENV)/bin/python

# The wheel a cluster installs: manylinux2014 (glibc 2.17), abi3 for CPython 3.9+,
# linked by zig so any Linux builds it. The tests run against this same wheel.
WHEELS := target/wheels
# Every Python package installed here is pinned by constraints.txt.
PIP_INSTALL := $(PY) -m pip install --quiet --constraint constraints.txt

.PHONY: test install wheel wheel-check lint rust-test py-test python-versions repro-ids

test: install lint rust-test py-test wheel-check python-versions

$(PY):
	@echo "make: creating $(VENV) for the tests (nothing is installed outside it)"
	$(PYTHON) -m venv $(VENV)

# Builds the manylinux wheel and installs it with the test tools, in $(VENV).
install: wheel
	$(PIP_INSTALL) --force-reinstall --no-deps "$$(ls $(WHEELS)/aqmlab-*.whl)"
	$(PIP_INSTALL) "$$(ls $(WHEELS)/aqmlab-*.whl)[test]"

wheel: $(PY)
	$(PIP_INSTALL) maturin ziglang uv
	rm -rf $(WHEELS)
	# maturin finds zig (`python -m ziglang`) and the interpreter on PATH: the venv's.
	PATH="$(abspath $(VENV))/bin:$$PATH" $(PY) -m maturin build --quiet --release --zig --compatibility manylinux2014 --out $(WHEELS)

# The wheel alone in a clean venv runs the default scenario, from the command and
# from Python, and a sweep on a local Dask cluster; its tag is manylinux2014 and
# abi3; the sdist builds.
wheel-check: $(PY)
	bash .ci/wheel_check.sh $(PY) $(WHEELS) constraints.txt

# constraints.txt resolves, wheels only, on every Python version pyproject allows.
python-versions: $(PY)
	PATH="$(abspath $(VENV))/bin:$$PATH" $(PY) .ci/python_versions.py check

lint: $(PY)
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(PY) -m ruff check python tests/python .ci
	$(PY) -m ruff format --check python tests/python .ci

rust-test:
	cargo test

py-test: $(PY)
	$(PY) -m pytest -q tests/python

# Regenerates the list of repro ids the completion scripts offer
# (crates/command/src/repro_ids.txt) from the Python registry, after adding an
# experiment (with $(PYTHON) able to import aqmlab).
repro-ids:
	$(PYTHON) -c "from aqmlab.repro import EXPERIMENTS as E; print('\\n'.join(dict.fromkeys([*E, *sorted({e.paper for e in E.values()}), 'all'])))" > crates/command/src/repro_ids.txt
