# The whole test suite: `make test` (what CI runs through .ci/run).
PYTHON ?= python3

.PHONY: test install lint rust-test py-test

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
