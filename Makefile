# The whole test suite: `make test` (what CI runs through .ci/run).
#
# `make test` runs every step below even when one fails, then lists the steps
# that failed and exits non-zero (a failing linter does not hide a failing test).
# `make -k` is not needed; each step alone (`make rust-test`) stops at its error.
#
# It changes nothing outside this folder: every Python package goes into a virtual
# environment of its own (.venv-test, made from $(PYTHON) on first use), and every
# build into target/ (or $CARGO_TARGET_DIR). Expect about 8 GB in all: target/
# measured 6.6 GB (a release build for the wheel and an optimised test build) and
# .venv-test 1.4 GB.
PYTHON ?= python3
VENV ?= .venv-test
PY := $(VENV)/bin/python

# The wheel a cluster installs: manylinux2014 (glibc 2.17), abi3 for CPython 3.9+,
# linked by zig so any Linux builds it. The tests run against this same wheel.
WHEELS := target/wheels
# Every Python package installed here is pinned by constraints.txt.
PIP_INSTALL := $(PY) -m pip install --quiet --constraint constraints.txt

.PHONY: test install wheel wheel-check lint lint-rust lint-python rust-test py-test python-versions repro-ids

# The steps of `make test`, in order (each a target of its own). $(INSTALL) first:
# the Python steps need it, and when it fails they are not run (they would fail
# for the same reason), but the Rust ones are.
INSTALL := install
STEPS := lint-rust lint-python rust-test py-test wheel-check python-versions
NEEDS_NO_INSTALL := lint-rust rust-test

test:
	@failed=""; steps="$(STEPS)"; \
	if ! $(MAKE) --no-print-directory $(INSTALL); then \
		failed="$(INSTALL)"; \
		steps="$(filter $(NEEDS_NO_INSTALL),$(STEPS))"; \
		skipped="$(filter-out $(NEEDS_NO_INSTALL),$(STEPS))"; \
	fi; \
	for step in $$steps; do \
		echo "make test: $$step"; \
		$(MAKE) --no-print-directory $$step || failed="$$failed$${failed:+ }$$step"; \
	done; \
	if [ -n "$$failed" ]; then \
		echo "make test: FAILED: $$failed$${skipped:+ (not run, for want of $(INSTALL): $$skipped)}" >&2; \
		exit 1; \
	fi; \
	echo "make test: every step passed"

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

lint: lint-rust lint-python

lint-rust:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

lint-python: $(PY)
	$(PY) -m ruff check python tests/python .ci fuzz/hostile bench
	$(PY) -m ruff format --check python tests/python .ci fuzz/hostile bench

# Every test binary, even after one fails (cargo stops at the first by default).
rust-test:
	cargo test --no-fail-fast

py-test: $(PY)
	$(PY) -m pytest -q tests/python

# Regenerates the list of repro ids the completion scripts offer
# (crates/command/src/repro_ids.txt) from the Python registry, after adding an
# experiment (with $(PYTHON) able to import aqmlab).
repro-ids:
	$(PYTHON) -c "from aqmlab.repro import EXPERIMENTS as E; print('\\n'.join(dict.fromkeys([*E, *sorted({e.paper for e in E.values()}), 'all'])))" > crates/command/src/repro_ids.txt
