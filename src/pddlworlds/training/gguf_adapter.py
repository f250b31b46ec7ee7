"""A PEFT LoRA adapter as a llama.cpp GGUF LoRA adapter, written with the `gguf` package.

llama.cpp reads an adapter file whose `general.type` is "adapter", `adapter.type` "lora",
`adapter.lora.alpha` the LoRA alpha, and whose tensors are named after the base model's tensors with
`.lora_a` / `.lora_b` appended (`blk.3.attn_q.weight.lora_a`); A is stored as [rank, in] and B as
[out, rank] in torch order. The scale llama.cpp applies is alpha / rank, as PEFT's. Every tensor is
checked against the base GGUF (name and shape) before anything is written. `read_adapter` goes the other
way (a GGUF adapter or a PEFT folder -> PEFT tensor names, float32, rank, alpha), for warm starts.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["HF_TO_GGUF", "AdapterWeights", "export_adapter", "gguf_tensor_name", "peft_tensor_name", "read_adapter"]

#: Hugging Face module path (inside a decoder layer) -> llama.cpp tensor name (inside `blk.N`).
HF_TO_GGUF = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}
_PEFT_NAME = re.compile(r"^(?:base_model\.model\.)?model\.layers\.(\d+)\.(.+)\.lora_([AB])\.weight$")
_GGUF_NAME = re.compile(r"^blk\.(\d+)\.([a-z_]+)\.weight\.lora_([ab])$")
_GGUF_TO_HF = {v: k for k, v in HF_TO_GGUF.items()}


@dataclass(frozen=True)
class AdapterWeights:
    """A LoRA adapter's tensors by PEFT name (`base_model.model.model.layers.N.<module>.lora_A.weight`),
    float32 in torch order, with its rank and alpha."""

    tensors: dict[str, np.ndarray]
    rank: int
    alpha: float
    source: str


def gguf_tensor_name(peft_name: str) -> str:
    """`base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight` -> `blk.3.attn_q.weight.lora_a`."""
    m = _PEFT_NAME.match(peft_name)
    if not m or m.group(2) not in HF_TO_GGUF:
        raise ValueError(f"adapter tensor {peft_name!r} has no llama.cpp name (known: {', '.join(HF_TO_GGUF)})")
    return f"blk.{m.group(1)}.{HF_TO_GGUF[m.group(2)]}.weight.lora_{m.group(3).lower()}"


def peft_tensor_name(gguf_name: str) -> str:
    """`blk.3.attn_q.weight.lora_a` -> `base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight`."""
    m = _GGUF_NAME.match(gguf_name)
    if not m or m.group(2) not in _GGUF_TO_HF:
        raise ValueError(f"adapter tensor {gguf_name!r} is not a LoRA tensor of {', '.join(_GGUF_TO_HF)}")
    return f"base_model.model.model.layers.{m.group(1)}.{_GGUF_TO_HF[m.group(2)]}.lora_{m.group(3).upper()}.weight"


def _field(reader, key: str):
    field = reader.fields.get(key)
    if field is None:
        return None
    value = field.parts[field.data[0]]
    return bytes(value).decode() if field.types and field.types[0].name == "STRING" else value[0].item()


def _read_gguf(path: Path) -> AdapterWeights:
    import gguf

    reader = gguf.GGUFReader(path)
    if _field(reader, "general.type") != "adapter" or _field(reader, gguf.Keys.Adapter.TYPE) != "lora":
        raise ValueError(f"{path}: not a llama.cpp LoRA adapter (general.type/adapter.type)")
    alpha = _field(reader, gguf.Keys.Adapter.LORA_ALPHA)
    if alpha is None:
        raise ValueError(f"{path}: no {gguf.Keys.Adapter.LORA_ALPHA}")
    tensors = {}
    for t in reader.tensors:
        # the reader's arrays are in torch order already (ggml's dimensions reversed)
        shape = tuple(int(x) for x in reversed(t.shape))
        tensors[peft_tensor_name(t.name)] = np.asarray(t.data, dtype=np.float32).reshape(shape).copy()
    return _checked(tensors, float(alpha), str(path))


def _read_peft(folder: Path) -> AdapterWeights:
    from safetensors.numpy import load_file

    config_file, weights_file = folder / "adapter_config.json", folder / "adapter_model.safetensors"
    for f in (config_file, weights_file):
        if not f.is_file():
            raise FileNotFoundError(f"not a PEFT adapter folder: {f} is missing")
    config = json.loads(config_file.read_text())
    if config.get("use_rslora") or config.get("use_dora"):
        raise ValueError(f"{config_file}: rsLoRA/DoRA adapters are not plain LoRA")
    tensors = {name: array.astype(np.float32) for name, array in load_file(weights_file).items()}
    for name in tensors:
        gguf_tensor_name(name)  # a clear error for a tensor we cannot place
    weights = _checked(tensors, float(config["lora_alpha"]), str(folder))
    if weights.rank != int(config["r"]):
        raise ValueError(f"{config_file}: r={config['r']} but the tensors have rank {weights.rank}")
    return weights


def _checked(tensors: dict[str, np.ndarray], alpha: float, source: str) -> AdapterWeights:
    if not tensors:
        raise ValueError(f"{source}: no LoRA tensors")
    ranks = {a.shape[0] for n, a in tensors.items() if ".lora_A." in n} | {
        a.shape[1] for n, a in tensors.items() if ".lora_B." in n
    }
    if len(ranks) != 1:
        raise ValueError(f"{source}: LoRA tensors of different ranks {sorted(ranks)}")
    return AdapterWeights(tensors, ranks.pop(), alpha, source)


def read_adapter(path: str | os.PathLike[str]) -> AdapterWeights:
    """The weights of a llama.cpp GGUF LoRA adapter (f16/f32 -> float32) or of a PEFT adapter folder."""
    path = Path(path)
    if path.is_dir():
        return _read_peft(path)
    if not path.is_file():
        raise FileNotFoundError(f"adapter not found: {path}")
    return _read_gguf(path)


def export_adapter(
    adapter_dir: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    *,
    base_gguf: str | os.PathLike[str] | None = None,
    dtype: str = "f16",
) -> Path:
    """Write `out_path` from a PEFT adapter folder; `base_gguf` (default: the shipped model) gives the
    architecture and the tensor shapes to check against."""
    adapter_dir = Path(adapter_dir)
    config_file = adapter_dir / "adapter_config.json"
    weights_file = adapter_dir / "adapter_model.safetensors"
    if not adapter_dir.is_dir():
        raise ValueError(f"{adapter_dir}: no such folder (a PEFT adapter folder, e.g. <train out>/adapter)")
    for f in (config_file, weights_file):
        if not f.is_file():
            raise ValueError(f"{adapter_dir}: not a PEFT adapter folder: {f.name} is missing")
    try:
        import gguf
        from safetensors import SafetensorError
        from safetensors.numpy import load_file
    except ImportError as exc:
        raise ImportError("exporting an adapter needs gguf and safetensors: pip install 'pddlworlds[train]'") from exc
    from ..files import atomic_write
    from ..llm import default_model_path
    from ..llm.gguf_header import read_header

    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
        rank, alpha = int(config["r"]), float(config["lora_alpha"])
    except (ValueError, RecursionError, TypeError, KeyError) as exc:
        raise ValueError(f"{config_file}: not a LoRA adapter configuration (need r and lora_alpha: {exc!r})") from None
    if config.get("use_rslora") or config.get("use_dora"):
        raise ValueError(f"{config_file}: rsLoRA/DoRA adapters have no llama.cpp LoRA equivalent")

    base = Path(base_gguf) if base_gguf is not None else default_model_path()
    # the header only, by our reader: gguf's GGUFReader takes about a minute over the base model's
    # 262,144-token vocabulary (llm/gguf_header.py), which this needs none of
    header = read_header(base)
    arch = str(header.metadata.get("general.architecture") or "")
    if not arch:
        raise ValueError(f"{base}: no general.architecture (not a model GGUF)")
    base_shapes = {t.name: t.shape for t in header.tensors}  # ggml order: [in, out]

    try:
        weights = load_file(weights_file)
    except (SafetensorError, OSError, ValueError) as exc:  # a truncated or foreign file
        raise ValueError(f"{weights_file}: not a safetensors file ({exc})") from None
    np_dtype = np.float16 if dtype == "f16" else np.float32
    tensors: dict[str, np.ndarray] = {}
    for name in sorted(weights):
        target = gguf_tensor_name(name)
        base_name = target.rsplit(".", 1)[0]
        if base_name not in base_shapes:
            raise ValueError(f"{weights_file}: {name} -> {base_name}, which {base} does not have")
        array = weights[name]
        n_in, n_out = base_shapes[base_name][:2]
        want = (rank, n_in) if target.endswith("lora_a") else (n_out, rank)
        if tuple(array.shape) != want:
            raise ValueError(f"{weights_file}: {name} has shape {tuple(array.shape)}, llama.cpp needs {want}")
        tensors[target] = np.ascontiguousarray(array.astype(np_dtype))
    if not tensors:
        raise ValueError(f"{weights_file}: no LoRA tensors")

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.tmp")
    try:
        writer = gguf.GGUFWriter(tmp, arch)
        writer.add_type(gguf.GGUFType.ADAPTER)
        writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
        writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, alpha)
        for name, array in tensors.items():
            writer.add_tensor(name, array)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        atomic_write(out_path, tmp.read_bytes())
    finally:
        tmp.unlink(missing_ok=True)
    return out_path
