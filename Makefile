# One way to run checks, shared by developers and .ci/run.
PYTHON ?= python3
PY_SOURCES = python tests benches scripts

.PHONY: build develop lint test test-py test-rust stubtest bench

build:
	$(PYTHON) -m pip install .

develop:
	maturin develop --release

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	ruff check $(PY_SOURCES)
	ruff format --check $(PY_SOURCES)

stubtest:
	$(PYTHON) -m mypy.stubtest onnxfast._onnxfast

test-py:
	pytest

test-rust:
	cargo test --workspace

test: test-py test-rust

bench:
	$(PYTHON) benches/bench_load.py
