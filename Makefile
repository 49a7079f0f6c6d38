# The whole test suite: `make test` (what CI runs through .ci/run).
PYTHON ?= python3

# The wheel a cluster installs: manylinux2014 (glibc 2.17), abi3 for CPython 3.9+,
# linked by zig so any Linux builds it. The tests run against this same wheel.
WHEELS := target/wheels
# Every Python package installed here is pinned by constraints.txt.
PIP_INSTALL := $(PYTHON) -m pip install --quiet --constraint constraints.txt

.PHONY: test install wheel wheel-check lint rust-test py-test face

test: install lint rust-test py-test wheel-check

# Builds the manylinux wheel and installs it with the test tools.
install: wheel
	$(PYTHON) -m pip uninstall --quiet --yes aqmlab
	$(PIP_INSTALL) "$$(ls $(WHEELS)/aqmlab-*.whl)[test]"

wheel:
	$(PIP_INSTALL) maturin ziglang
	rm -rf $(WHEELS)
	$(PYTHON) -m maturin build --quiet --release --zig --compatibility manylinux2014 --out $(WHEELS)

# The wheel alone in a clean venv runs the default scenario, from the command and
# from Python; its tag is manylinux2014 and abi3; the sdist builds.
wheel-check:
	bash .ci/wheel_check.sh $(PYTHON) $(WHEELS) constraints.txt

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(PYTHON) -m ruff check python tests/python
	$(PYTHON) -m ruff format --check python tests/python

rust-test:
	cargo test

py-test:
	$(PYTHON) -m pytest -q tests/python

# Regenerates python/aqmlab/_face.json (help texts and completion scripts the
# Python package prints) from the clap tree, after a change to the command line.
face:
	AQMLAB_UPDATE_FACE=1 cargo test -p aqmlab-cli --test face the_python_packages_copy
