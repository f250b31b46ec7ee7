"""The LoRA side of a fit: wrap the base model, warm-start it from an adapter, and choose which layers
train (`--train-layers`). Kept apart from the training loop (`trainer.py`), which calls it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..files import file_sha256

__all__ = ["lora_model", "set_trainable_layers", "warm_start"]


def lora_model(base: Any, *, rank: int, alpha: float, target_modules: Sequence[str], train_layers: int,
               device: Any) -> Any:
    """`base` wrapped with fresh LoRA weights (`set_trainable_layers` decides which train), in training mode
    on `device`; `base` itself is changed (PEFT wraps it in place)."""
    import peft

    lora = peft.LoraConfig(
        r=rank, lora_alpha=alpha, lora_dropout=0.0, target_modules=list(target_modules),
        bias="none", task_type="CAUSAL_LM",
    )
    model = peft.get_peft_model(base, lora).to(device)
    model.train()
    text_config = getattr(base.config, "text_config", base.config)
    set_trainable_layers(model, train_layers, text_config.num_hidden_layers)
    return model


_LAYER = re.compile(r"\.layers\.(\d+)\.")


def set_trainable_layers(model: Any, train_layers: int, n_layers: int) -> None:
    """Make the LoRA weights of the top `train_layers` transformer layers trainable and freeze the rest
    (0: every layer trains). Autograd then records nothing below the lowest trainable layer, which is
    where the time goes: each frozen layer saves its backward pass."""
    lowest = 0 if train_layers == 0 else max(0, n_layers - train_layers)
    for name, param in model.named_parameters():
        match = _LAYER.search(name)
        if "lora_" in name and match:
            param.requires_grad_(int(match.group(1)) >= lowest)


def warm_start(model: Any, init: str, rank: int, alpha: float) -> dict[str, str]:
    """Load the LoRA weights of adapter `init` into the fresh PEFT `model`; every LoRA tensor of the model must
    come from the adapter, with the same shape, rank and alpha. Returns what was loaded (path, sha256)."""
    import peft
    import torch

    from .gguf_adapter import read_adapter

    weights = read_adapter(init)
    if weights.rank != rank or weights.alpha != alpha:
        raise ValueError(
            f"{init}: rank {weights.rank}, alpha {weights.alpha:g}; this run has --rank {rank} "
            f"--alpha {alpha:g} (pass the adapter's)"
        )
    mine = peft.get_peft_model_state_dict(model)
    missing = sorted(set(mine) - set(weights.tensors))
    extra = sorted(set(weights.tensors) - set(mine))
    if missing or extra:
        raise ValueError(f"{init}: does not fit the model (missing {missing[:3]}, unknown {extra[:3]})")
    state = {}
    for name, current in mine.items():
        array = weights.tensors[name]
        if tuple(array.shape) != tuple(current.shape):
            raise ValueError(f"{init}: {name} has shape {tuple(array.shape)}, the model {tuple(current.shape)}")
        state[name] = torch.from_numpy(array).to(current.device, current.dtype)
    peft.set_peft_model_state_dict(model, state)
    path = Path(init)
    sha = file_sha256(path) if path.is_file() else file_sha256(path / "adapter_model.safetensors")
    return {"path": str(path), "sha256": sha, "tensors": str(len(state))}
