#!/usr/bin/env bash
# Create .venv and install the project offline-capable: CPU torch, a portable llama.cpp build, every
# extra (serve: API + UI, eval: plots, adapt: `rag adapt`'s training, dev: test tools).
# Idempotent: a second run takes seconds. Usage: scripts/setup.sh [--no-browser]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
WHEELS=${RAG_WHEEL_CACHE:-$HOME/.cache/iclr-rag/wheels}
LLAMA_CPP_VERSION=0.3.36
# One llama.cpp build per CPU kind (scripts/llama_build.py): avx512 when the CPU has AVX-512 F/CD/VL/DQ/BW + VBMI
# + VNNI + BF16, else avx2, else sse42; never "native" (it can emit AMX that a VM rejects).
# RAG_LLAMA_CPU_VARIANT=avx2 forces the portable build (e.g. a venv copied to other machines).
# Wheels are cached per variant, so a home shared across machines never hands one CPU another's
# build; rag/models/llm.py refuses to load a build whose instructions the CPU lacks.
LLAMA_VARIANT=${RAG_LLAMA_CPU_VARIANT:-$("$PY" scripts/llama_build.py variant)}
LLAMA_CMAKE_ARGS=$("$PY" scripts/llama_build.py cmake-args "$LLAMA_VARIANT")
LLAMA_WHEELS="$WHEELS/llama-cpp-python-$LLAMA_CPP_VERSION-$LLAMA_VARIANT"

step() { printf '\n==> %s\n' "$*"; }

if [ ! -x "$VENV/bin/python" ]; then
  step "creating $VENV"
  "$PY" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
"${PIP[@]}" install -q --upgrade pip setuptools wheel

step "installing CPU torch 2.13.0"
"${PIP[@]}" install -q torch==2.13.0

if ! ls "$LLAMA_WHEELS"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl >/dev/null 2>&1; then
  # A wheel cached by an older setup (one folder for all CPUs) is kept when its recorded build fits.
  for old in "$WHEELS"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl; do
    if [ -f "$old" ] && [ "$("$PY" scripts/llama_build.py wheel-variant "$old")" = "$LLAMA_VARIANT" ]; then
      mkdir -p "$LLAMA_WHEELS" && cp "$old" "$LLAMA_WHEELS"/
    fi
  done
fi
if ! ls "$LLAMA_WHEELS"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl >/dev/null 2>&1; then
  step "compiling llama-cpp-python $LLAMA_CPP_VERSION for $LLAMA_VARIANT (first time only: about 7 minutes on 2 cores)"
  mkdir -p "$LLAMA_WHEELS"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "${PIP[@]}" wheel --no-deps --no-cache-dir -w "$LLAMA_WHEELS" \
    "llama-cpp-python==$LLAMA_CPP_VERSION"
fi

step "installing the project and its dependencies"
"${PIP[@]}" install -q --find-links "$LLAMA_WHEELS" --only-binary llama-cpp-python -e ".[serve,eval,adapt,fetch,dev]"
if [ "$("$VENV/bin/python" scripts/llama_build.py installed)" != "$LLAMA_VARIANT" ]; then
  step "switching llama-cpp-python to the $LLAMA_VARIANT build"
  "${PIP[@]}" install -q --force-reinstall --no-deps "$LLAMA_WHEELS"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl
fi

if [ "${1:-}" != "--no-browser" ] && ! command -v chromium >/dev/null 2>&1; then
  step "installing Debian chromium for the browser tests"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "chromium missing: run 'sudo apt-get install chromium chromium-driver' for the browser tests" >&2
  fi
fi
step "setup done"
