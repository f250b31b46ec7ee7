#!/usr/bin/env bash
# Set up everything pddlworlds needs in ./.venv, from nothing. Idempotent: a second run only checks.
#
# llama-cpp-python is built from source with the CPU features named explicitly rather than -march=native:
# the native build crashes with SIGSEGV on the first decode on some of our machines (llama.cpp's AMX path on
# recent Xeons). AVX/AVX2/FMA make the embedded agent about 9x faster per step than an SSE-only build
# (README, "CPU features of the llama.cpp build"); naming them pins them on whatever ggml's defaults do.
# pip's wheel cache keeps the build (about 5-11 minutes on 2 cores) for later runs.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF}"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[llm,dev,ray]"
echo "pddlworlds is set up in .venv ($(.venv/bin/python -c 'import pddlworlds; print(pddlworlds.__version__)'))"
