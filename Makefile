# The whole test suite: `make test` (what CI runs through .ci/run).
PYTHON ?= python3

.PHONY: test install lint rust-test py-test face

test: install lint rust-test py-test

# Builds the Rust extension (release) and installs the package with its test tools.
install:
	$(PYTHON) -m pip install --quiet ".[test]"

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
