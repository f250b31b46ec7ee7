#!/usr/bin/env bash
# Set up everything pddlworlds needs in ./.venv, from nothing. Idempotent: a second run only checks
# (and decodes one token with the embedded model, a few seconds).
#
# llama-cpp-python is built from source with the CPU features named explicitly rather than -march=native:
# the native build crashes with SIGSEGV on the first decode on some of our machines (llama.cpp's AMX path on
# recent Xeons). AVX/AVX2/FMA make the embedded agent about 9x faster per step than an SSE-only build
# (docs/serving.md, "CPU features of the llama.cpp build"); naming them pins them on whatever ggml's defaults do.
# pip's wheel cache keeps the build (about 5-11 minutes on 2 cores) for later runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# The run viewer's browser test drives Debian's chromium through Playwright (no browser download). Without
# root or apt the test is skipped and says why.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ ! -x /usr/bin/chromium ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
        || echo "could not install chromium: the viewer's browser test will be skipped" >&2
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF}"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
.venv/bin/python -m pip install --quiet --upgrade pip
# openenv, trl, inspect, verifiers, export: the framework adapters' packages (none of them changes torch,
# transformers or peft)
.venv/bin/python -m pip install --quiet -e ".[llm,server,dev,ray,train,openenv,trl,inspect,verifiers,export]"

# pip's wheel cache does not key on CMAKE_ARGS, so a llama-cpp-python wheel built earlier with other flags
# (a native build that crashes here, say) would be reused silently. Decode one token with the embedded
# model (and write its cut vocabulary's GGUF into the cache, about 12 s the first time: docs/agents.md, "The
# cut vocabulary"); if that fails, rebuild the same version without the cache and try once more.
SMOKE='from pddlworlds.llm import EmbeddedLLM, Message
EmbeddedLLM(n_ctx=256, n_threads=1).chat([Message("user", "Hello")], max_tokens=1)
from pddlworlds.llm.vocab_trim import choice_vocab_model_path
choice_vocab_model_path()'
if ! smoke_log=$(.venv/bin/python -c "$SMOKE" 2>&1); then
    llama_version=$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')
    echo "llama-cpp-python $llama_version cannot decode here; rebuilding it with CMAKE_ARGS=$CMAKE_ARGS" >&2
    echo "$smoke_log" | tail -5 >&2
    .venv/bin/python -m pip install --quiet --no-cache-dir --force-reinstall --no-deps "llama-cpp-python==$llama_version"
    .venv/bin/python -c "$SMOKE" || { echo "llama-cpp-python still fails to decode after a rebuild" >&2; exit 1; }
fi
echo "pddlworlds is set up in .venv ($(.venv/bin/python -c 'import pddlworlds; print(pddlworlds.__version__)'))"
