# One way to run checks, shared by developers and .ci/run.
PYTHON ?= python3
PY_SOURCES = python tests benches scripts

.PHONY: build develop lint test test-py test-rust stubtest typecheck bench

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

# The Python façade against the stubs and its own annotations.
typecheck:
	$(PYTHON) -m mypy python/onnxfast

test-py:
	pytest

test-rust:
	cargo test --workspace

test: test-py test-rust

bench:
	$(PYTHON) benches/bench_load.py

# Fuzzing (cargo-fuzz, stable toolchain, no sanitizer): `make fuzz-smoke`
# runs each target for FUZZ_SECONDS (60 by default) from the committed
# regression inputs; findings land in rust/onnxfast-core/fuzz/artifacts/.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS = decode check tensor external_data infer evaluate
.PHONY: fuzz-smoke fuzz-build
fuzz-build:
	cd rust/onnxfast-core && cargo fuzz build -O --sanitizer none

fuzz-smoke: fuzz-build
	cd rust/onnxfast-core && for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/corpus/$$t && cp -n fuzz/regressions/$$t/* fuzz/corpus/$$t/ ; \
		cargo fuzz run -O --sanitizer none $$t fuzz/corpus/$$t -- \
			-max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 || exit 1; \
	done
