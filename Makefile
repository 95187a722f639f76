# Quick start: `make run` (set up, then chat UI on the built-in corpus) and `make test`.
.PHONY: setup run ask test test-fast lint bench clean-store

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

lint:
	.venv/bin/ruff check rag ui evals tests benchmarks

bench: setup
	.venv/bin/python benchmarks/bench_core.py

clean-store:
	rm -rf vectorstore/chroma
