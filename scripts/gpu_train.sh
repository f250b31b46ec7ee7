#!/usr/bin/env bash
# Train the embedded model's LoRA adapter at scale on one CUDA GPU with no network, within a time budget,
# and write the adapter (PEFT files and llama.cpp GGUF) with the run's summary and log under $OUT.
#
#   OUT=/some/folder scripts/gpu_train.sh DATA [BASE_GGUF]
#
# DATA: dataset folder(s) from `pddlworlds train rollout` / `train data` (comma-separated, FOLDER:SHARE as
# for `train fit --data`), e.g. the compact state-choice data (docs/training.md, "The compact form").
# BASE_GGUF: the base model's GGUF staged in the repository tree (default: the first models/base/*.gguf).
# A float copy staged beside it (the folder `load_base_model` writes, `<stem>-f32-<sha16>`) is used as is;
# else transformers dequantises the GGUF once (about a minute; needs the `gguf` package).
#
# Nothing is fetched. The machine needs torch (with CUDA), transformers, peft, gguf, numpy, tqdm, gymnasium
# and fast-downward-translate; the check below names the missing ones (carry them as wheels). The repository's src/ is put on
# PYTHONPATH, so pddlworlds need not be installed.
#
# Settings (environment, with defaults): MINUTES=10 (training minutes; with the load, the packing and the
# export the run ends within 15 minutes), MAX_LEN=4096 (tokens per packed sequence), ACCUMULATE=4, LR=2e-4,
# WARMUP=20, SCHEDULE=linear, EPOCHS=1, STEPS=0 (0: EPOCHS decide), RANK=16, ALPHA=32, PRECISION=bf16,
# INIT= (a warm-start adapter), TRAIN_LAYERS=0 (all), AGENTS= (all), SEED=0, WORK=/tmp/pddlworlds-gpu-train
# (the run folder: the same command resumes from its checkpoint), ALLOW_CPU=0 (1: run without a GPU, to test
# the path). VOCAB=choice-vocab fits on the cut vocabulary eval plays on: BASE_GGUF may then be the cut model
# (74 MB where the full one is 253; `llm.vocab_trim.choice_vocab_model_path` writes it), and TOKENIZER a folder
# with the full model's tokenizer files (the data is tokenised as the full model tokenises it, then mapped).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
data="${1:?usage: OUT=folder scripts/gpu_train.sh DATA [BASE_GGUF]}"
base="${2:-}"
out="${OUT:?set OUT to the folder the adapter is written to}"
if [[ -z "$base" ]]; then
  base="$(ls models/base/*.gguf 2>/dev/null | head -n 1 || true)"
  [[ -n "$base" ]] || { echo "gpu_train: no BASE_GGUF given and no models/base/*.gguf staged" >&2; exit 2; }
fi
[[ -f "$base" ]] || { echo "gpu_train: base model $base: no such file" >&2; exit 2; }
for folder in ${data//,/ }; do
  folder="${folder%%:*}"
  [[ -f "$folder/calls.jsonl" ]] || { echo "gpu_train: data folder $folder has no calls.jsonl" >&2; exit 2; }
done

work="${WORK:-/tmp/pddlworlds-gpu-train}"
mkdir -p "$out" "$work"
export PYTHONPATH="$here/src${PYTHONPATH:+:$PYTHONPATH}"
export PDDLWORLDS_CACHE="${PDDLWORLDS_CACHE:-$work/cache}"
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
python="${PYTHON:-python3}"

# A staged float copy goes where load_base_model looks for it.
stem="$(basename "$base" .gguf)"
staged="$(ls -d "$(dirname "$base")/$stem"-f32-* 2>/dev/null | head -n 1 || true)"
if [[ -n "$staged" ]]; then
  mkdir -p "$PDDLWORLDS_CACHE/models"
  ln -sfn "$(cd "$staged" && pwd)" "$PDDLWORLDS_CACHE/models/$(basename "$staged")"
fi

"$python" - "${ALLOW_CPU:-0}" <<'EOF'
import importlib.util, sys
# module -> the distribution to carry (the planner's translator parses the data's problems)
needed = {"torch": "torch", "transformers": "transformers", "peft": "peft", "gguf": "gguf", "numpy": "numpy",
          "tqdm": "tqdm", "gymnasium": "gymnasium", "fast_downward": "fast-downward-translate"}
missing = [wheel for module, wheel in needed.items() if importlib.util.find_spec(module) is None]
if missing:
    sys.exit(f"gpu_train: missing Python packages: {', '.join(missing)} (carry them as wheels; nothing is fetched)")
import torch
if not torch.cuda.is_available():
    if sys.argv[1] != "1":
        sys.exit("gpu_train: torch sees no CUDA device (ALLOW_CPU=1 runs on the CPU, to test the path)")
    print("gpu_train: no CUDA device; running on the CPU (ALLOW_CPU=1)")
else:
    print(f"gpu_train: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
EOF

precision="${PRECISION:-bf16}"
if [[ "${ALLOW_CPU:-0}" == "1" ]] && ! "$python" -c "import torch,sys; sys.exit(not torch.cuda.is_available())"; then
  precision="${PRECISION:-fp32}"
fi
args=(train fit --data "$data" --out "$work/run" --base-model "$base" --seed "${SEED:-0}"
      --max-len "${MAX_LEN:-4096}" --accumulate "${ACCUMULATE:-4}" --lr "${LR:-2e-4}" --warmup "${WARMUP:-20}"
      --schedule "${SCHEDULE:-linear}" --epochs "${EPOCHS:-1}" --rank "${RANK:-16}" --alpha "${ALPHA:-32}"
      --max-minutes "${MINUTES:-10}" --checkpoint-every "${CHECKPOINT_EVERY:-200}" --precision "$precision"
      --threads "${THREADS:-$(nproc)}" --no-progress)
[[ "${STEPS:-0}" != "0" ]] && args+=(--steps "$STEPS")
[[ -n "${INIT:-}" ]] && args+=(--init "$INIT")
[[ -n "${VOCAB:-}" ]] && args+=(--vocab "$VOCAB")
[[ -n "${TOKENIZER:-}" ]] && args+=(--tokenizer "$TOKENIZER")
[[ "${TRAIN_LAYERS:-0}" != "0" ]] && args+=(--train-layers "$TRAIN_LAYERS")
[[ -n "${AGENTS:-}" ]] && args+=(--agents "$AGENTS")
echo "gpu_train: pddlworlds ${args[*]}"
start=$(date +%s)
"$python" -c "import sys; from pddlworlds.cli import main; sys.exit(main(sys.argv[1:]))" "${args[@]}" \
  | tee "$out/fit.json"

cp "$work/run/adapter.gguf" "$work/run/summary.json" "$work/run/log.jsonl" "$work/run/data.json" "$out/"
cp "$work/run/adapter/adapter_config.json" "$work/run/adapter/adapter_model.safetensors" "$out/"
"$python" - "$out/summary.json" "$(( $(date +%s) - start ))" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"gpu_train: {s['steps_done']} of {s['steps_planned']} steps, {s['tokens_trained']} tokens in "
      f"{s['train_seconds']} s of training ({s['tokens_per_second']} tokens/s), {sys.argv[2]} s in all, on "
      f"{s['machine']['device']}; adapter {s['adapter_gguf_sha256'][:12]}… written with summary and log")
EOF
