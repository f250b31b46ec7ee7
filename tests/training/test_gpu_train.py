"""Training for a GPU: the bf16 precision option, and `scripts/gpu_train.sh`'s path, run on the CPU (no GPU
here): its refusals and a tiny fit that writes the adapter and its record under $OUT."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pddlworlds.training.trainer import TrainConfig, check_config

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu_train.sh"


def _data(folder: Path) -> Path:
    folder.mkdir(parents=True)
    rows = [{"episode": f"e{i}", "agent": "standard", "domain": "blocksworld", "problem": f"p{i}", "call": 0,
             "purpose": "action", "messages": [{"role": "user", "content": f"Goal: on: b{i} b2\nAction:"}],
             "reply": f" stack b{i} on b2", "stop": ["\n"]} for i in range(3)]
    (folder / "calls.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def _run(tmp_path: Path, data: Path, base: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "OUT": str(tmp_path / "out"), "WORK": str(tmp_path / "work"),
                   "PYTHON": sys.executable, "PDDLWORLDS_CACHE": str(tmp_path / "cache"), **env}
    return subprocess.run(["bash", str(SCRIPT), str(data), str(base)], env=environment, capture_output=True,
                          text=True, timeout=600, check=False)


def test_an_unknown_precision_is_refused_before_anything_loads() -> None:
    with pytest.raises(ValueError, match="unknown precision 'fp16'; precisions: fp32, bf16"):
        check_config(TrainConfig(data="x", out="y", precision="fp16"))


def test_the_script_names_what_is_missing_in_one_line(tmp_path: Path) -> None:
    base = tmp_path / "base.gguf"
    base.write_bytes(b"GGUF")
    result = _run(tmp_path, tmp_path / "nothing", base)
    assert result.returncode == 2 and result.stderr.strip() == f"gpu_train: data folder {tmp_path / 'nothing'} has no calls.jsonl"
    result = _run(tmp_path, _data(tmp_path / "data"), tmp_path / "absent.gguf")
    assert result.returncode == 2 and "absent.gguf: no such file" in result.stderr
    if not shutil.which("nvidia-smi"):  # no GPU here: refused unless the CPU is allowed
        result = _run(tmp_path, tmp_path / "data", base)
        assert result.returncode != 0 and ("no CUDA device" in result.stderr or "missing Python packages" in result.stderr)


@pytest.mark.embedded
@pytest.mark.slow
def test_bf16_training_runs_and_records_its_precision(tmp_path: Path, tiny_base_model: str) -> None:
    from pddlworlds.training.trainer import train

    config = TrainConfig(data=str(_data(tmp_path / "data")), out=str(tmp_path / "run"), steps=1, max_len=128,
                         threads=1, base_model=tiny_base_model, precision="bf16")
    summary = train(config, progress=False)
    assert summary["config"]["precision"] == "bf16" and summary["steps_done"] == 1
    loss = json.loads((tmp_path / "run" / "log.jsonl").read_text().splitlines()[0])["loss"]
    assert math.isfinite(loss) and loss > 0


@pytest.mark.embedded
@pytest.mark.heavy
def test_the_script_trains_on_the_cpu_from_a_staged_base_and_float_copy(tmp_path: Path, tiny_base_model: str) -> None:
    from pddlworlds.training.trainer import float_copy_folder

    staged = tmp_path / "models" / "base"
    staged.mkdir(parents=True)
    base = Path(shutil.copy(tiny_base_model, staged / "tiny-gemma3.gguf"))
    shutil.copytree(float_copy_folder(tiny_base_model), staged / float_copy_folder(tiny_base_model).name)
    result = _run(tmp_path, _data(tmp_path / "data"), base, ALLOW_CPU="1", STEPS="2", MAX_LEN="128", THREADS="1")
    assert result.returncode == 0, result.stderr[-2000:]
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["adapter.gguf", "adapter_config.json", "adapter_model.safetensors", "data.json", "fit.json", "log.jsonl",
         "summary.json"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps_done"] == 2 and summary["config"]["precision"] == "fp32"  # the CPU's default
    assert summary["base_model"]["float_copy"].startswith(str(tmp_path / "cache"))  # the staged copy, linked
    assert (tmp_path / "cache" / "models" / float_copy_folder(base).name).is_symlink()
    assert "gpu_train: 2 of 2 steps" in result.stdout


@pytest.mark.embedded
@pytest.mark.heavy
def test_the_script_fits_on_the_cut_vocabulary_with_a_tokenizer_folder(tmp_path: Path, tiny_base_model: str) -> None:
    """VOCAB and TOKENIZER, as a GPU machine without the full GGUF runs it: the base cut in torch, the data
    tokenised by the tokenizer's files and mapped into the shipped list."""
    from pddlworlds.training.trainer import float_copy_folder

    tokenizer = float_copy_folder(tiny_base_model)  # the shipped model's tokenizer files
    result = _run(tmp_path, _data(tmp_path / "data"), Path(tiny_base_model), ALLOW_CPU="1", STEPS="1",
                  MAX_LEN="128", THREADS="1", VOCAB="choice-vocab", TOKENIZER=str(tokenizer))
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["config"]["vocab"] == "choice-vocab" and summary["config"]["tokenizer"] == str(tokenizer)
    assert summary["vocabulary"]["kept_tokens"] > 1000 and summary["data"]["skipped_uncovered"] == 0
    assert "gpu_train: 1 of 1 steps" in result.stdout
