#!/usr/bin/env bash
# Create .venv and install the project offline-capable: CPU torch, a portable llama.cpp build, every
# extra (serve: API + UI, eval: plots, dev: test tools).
# Idempotent: a second run takes seconds. Usage: scripts/setup.sh [--no-browser]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
WHEELS=${RAG_WHEEL_CACHE:-$HOME/.cache/iclr-rag/wheels}
LLAMA_CPP_VERSION=0.3.36
# Portable CPU flags: a "native" build can emit instructions (AMX, AVX-512) that a VM rejects.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAMA_CURL=OFF"

step() { printf '\n==> %s\n' "$*"; }

if [ ! -x "$VENV/bin/python" ]; then
  step "creating $VENV"
  "$PY" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
"${PIP[@]}" install -q --upgrade pip setuptools wheel

step "installing CPU torch 2.13.0"
"${PIP[@]}" install -q torch==2.13.0

if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl >/dev/null 2>&1; then
  step "compiling llama-cpp-python $LLAMA_CPP_VERSION (first time only: about 8-10 minutes on 2 cores)"
  mkdir -p "$WHEELS"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "${PIP[@]}" wheel --no-deps --no-cache-dir -w "$WHEELS" \
    "llama-cpp-python==$LLAMA_CPP_VERSION"
fi

step "installing the project and its dependencies"
"${PIP[@]}" install -q --find-links "$WHEELS" --only-binary llama-cpp-python -e ".[serve,eval,dev]"

if [ "${1:-}" != "--no-browser" ] && ! command -v chromium >/dev/null 2>&1; then
  step "installing Debian chromium for the browser tests"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "chromium missing: run 'sudo apt-get install chromium chromium-driver' for the browser tests" >&2
  fi
fi
step "setup done"
