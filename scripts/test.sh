#!/usr/bin/env bash
# Run the whole test suite (slow tests included: full corpus, servers, browser, local LLM).
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 GRADIO_ANALYTICS_ENABLED=False
.venv/bin/ruff check rag ui evals tests benchmarks
.venv/bin/mypy rag
.venv/bin/python -m pytest -q --durations=15 "$@"
