# Quick start: `make run` (set up, then chat UI on the built-in corpus) and `make test`.
.PHONY: setup run ask test test-fast lint bench clean-store fuzz

setup:
	scripts/setup.sh

run: setup
	.venv/bin/rag serve

ask: setup
	.venv/bin/rag chat

test: setup
	scripts/test.sh

test-fast: setup
	.venv/bin/python -m pytest -m "not slow" -q

# schemathesis (all checks) against a real `rag serve`, and the hypothesis property tests, with a
# larger budget than the test suite's (RAG_FUZZ_EXAMPLES cases per operation/test; RAG_FUZZ_SEED).
fuzz: setup
	RAG_FUZZ_EXAMPLES=$${RAG_FUZZ_EXAMPLES:-50} .venv/bin/python -m pytest -q -s -p no:cacheprovider \
		tests/test_fuzz.py tests/test_properties.py

lint:
	.venv/bin/ruff check rag ui evals tests benchmarks

bench: setup
	.venv/bin/python benchmarks/bench_core.py

clean-store:
	rm -rf vectorstore/chroma
