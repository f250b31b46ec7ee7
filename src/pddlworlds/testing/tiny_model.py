"""A tiny, randomly initialised Gemma 3 GGUF with the shipped model's tokenizer, for tests of mechanics.

Tests that check how training works (determinism, resuming, warm starts, which layers train, the adapter's
export to llama.cpp, stopping on SIGTERM) need a model of the shipped one's architecture and vocabulary,
not its 270M trained weights: `write_tiny_gemma3` writes one of a few hundred thousand parameters in the
transformer layers (the embedding keeps the shipped 262,144-token vocabulary) that transformers
(`training.trainer.load_base_model`) and llama.cpp (`EmbeddedLLM`) both load, in about a second where the
shipped model takes a minute to dequantise for training.

The head size stays the shipped 256: llama.cpp scales Gemma 3's queries by 1/sqrt(head size) and
transformers by 1/sqrt(query_pre_attn_scalar), 256 by default, so both run the same model only there.
Norm weights are stored as llama.cpp's converter stores them (1 + the Hugging Face weight).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np

__all__ = ["TINY_GEMMA3", "save_float_copy", "tokenizer_metadata", "write_tiny_gemma3"]

#: The tiny model's shape: 6 layers so that Gemma 3's pattern of 5 sliding-window layers and 1 global one
#: is there once; a sliding window of 16 tokens so that the test prompts reach past it.
TINY_GEMMA3 = {"layers": 6, "hidden": 64, "heads": 1, "kv_heads": 1, "head_dim": 256, "ffn": 128,
               "sliding_window": 16, "context": 4096}


_SCALARS = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "?", 10: "<u8", 11: "<i8",
            12: "<f8"}
_STRING, _ARRAY = 8, 9


def tokenizer_metadata(path: str | os.PathLike[str]) -> list[tuple[str, object, int, int | None]]:
    """(key, value, value type, element type) of every `tokenizer.*` entry of a GGUF file's metadata, read
    directly (gguf's GGUFReader takes about a minute over a 262,144-token vocabulary; this, a second)."""
    import mmap

    out = []
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        pos = 0

        def take(fmt: str):
            nonlocal pos
            value = struct.unpack_from(fmt, data, pos)
            pos += struct.calcsize(fmt)
            return value[0]

        def string() -> str:
            nonlocal pos
            n = take("<Q")
            pos += n
            return bytes(data[pos - n : pos]).decode("utf-8")

        def value(kind: int):
            nonlocal pos
            if kind in _SCALARS:
                width = np.dtype(_SCALARS[kind]).itemsize
                pos += width
                return np.frombuffer(data, _SCALARS[kind], 1, pos - width)[0].item()
            if kind == _STRING:
                return string()
            inner, count = take("<I"), take("<Q")
            if inner in _SCALARS:
                width = np.dtype(_SCALARS[inner]).itemsize * count
                pos += width
                return np.frombuffer(data, _SCALARS[inner], count, pos - width).tolist(), inner
            return [value(inner) for _ in range(count)], inner

        if bytes(data[:4]) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        pos = 8
        _, n_values = take("<Q"), take("<Q")
        for _ in range(n_values):
            key, kind = string(), take("<I")
            got = value(kind)
            if key.startswith("tokenizer."):
                if kind == _ARRAY:
                    out.append((key, got[0], kind, got[1]))
                else:
                    out.append((key, got, kind, None))
    return out


def write_tiny_gemma3(path: str | os.PathLike[str], *, seed: int = 0, base: str | os.PathLike[str] | None = None,
                      **shape: int) -> Path:
    """Write a tiny Gemma 3 GGUF (f32 layers, f16 embedding) to `path`, its tokenizer copied from `base`
    (default: the shipped model); `shape` overrides entries of `TINY_GEMMA3`. Same seed, same file."""
    import gguf

    from ..llm import default_model_path

    s = {**TINY_GEMMA3, **shape}
    tokenizer = tokenizer_metadata(Path(base) if base is not None else default_model_path())
    n_vocab = len(next(v for k, v, _, _ in tokenizer if k == "tokenizer.ggml.tokens"))
    rng = np.random.default_rng(seed)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    writer = gguf.GGUFWriter(tmp, "gemma3")
    writer.add_name("tiny-gemma3-test")
    writer.add_context_length(s["context"])
    writer.add_embedding_length(s["hidden"])
    writer.add_block_count(s["layers"])
    writer.add_feed_forward_length(s["ffn"])
    writer.add_head_count(s["heads"])
    writer.add_head_count_kv(s["kv_heads"])
    writer.add_key_length(s["head_dim"])
    writer.add_value_length(s["head_dim"])
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_freq_base(1_000_000.0)
    writer.add_sliding_window(s["sliding_window"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    for key, value, kind, sub_type in tokenizer:
        writer.add_key_value(key, value, gguf.GGUFValueType(kind),
                             sub_type=None if sub_type is None else gguf.GGUFValueType(sub_type))

    def weight(n_out: int, n_in: int) -> np.ndarray:  # numpy order [out, in]: ggml's [in, out]
        return (rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float32)

    def norm(n: int) -> np.ndarray:
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    h, q, kv, ffn = s["hidden"], s["heads"] * s["head_dim"], s["kv_heads"] * s["head_dim"], s["ffn"]
    writer.add_tensor("token_embd.weight", (0.05 * rng.standard_normal((n_vocab, h))).astype(np.float16))
    writer.add_tensor("output_norm.weight", norm(h))
    for i in range(s["layers"]):
        for name, array in (
            ("attn_norm", norm(h)), ("attn_q", weight(q, h)), ("attn_k", weight(kv, h)), ("attn_v", weight(kv, h)),
            ("attn_q_norm", norm(s["head_dim"])), ("attn_k_norm", norm(s["head_dim"])), ("attn_output", weight(h, q)),
            ("post_attention_norm", norm(h)), ("ffn_norm", norm(h)), ("ffn_gate", weight(ffn, h)),
            ("ffn_up", weight(ffn, h)), ("ffn_down", weight(h, ffn)), ("post_ffw_norm", norm(h)),
        ):
            writer.add_tensor(f"blk.{i}.{name}.weight", array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(tmp, path)
    return path


#: llama.cpp's tensor names in a Gemma 3 layer -> transformers' (inside `model.layers.N.`).
_LAYER_NAMES = {
    "attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj", "attn_q_norm": "self_attn.q_norm", "attn_k_norm": "self_attn.k_norm",
    "attn_output": "self_attn.o_proj", "post_attention_norm": "post_attention_layernorm",
    "ffn_norm": "pre_feedforward_layernorm", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj", "post_ffw_norm": "post_feedforward_layernorm",
}


def save_float_copy(gguf_path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> Path:
    """Save to `folder` what `training.trainer.load_base_model` caches for a Gemma 3 GGUF of f32/f16 tensors
    (as `write_tiny_gemma3` writes): the transformers configuration, float32 weights and tokenizer, built
    directly. transformers' own conversion reads the GGUF's metadata twice with gguf's reader, most of a
    minute each over the 262,144-token vocabulary; `tests/training/test_tiny_model.py` checks the two agree."""
    import torch
    import transformers

    from ..llm.gguf_header import read_header

    gguf_path, folder = Path(gguf_path), Path(folder)
    header = read_header(gguf_path)
    meta = header.metadata
    if meta.get("general.architecture") != "gemma3":
        raise ValueError(f"{gguf_path}: a Gemma 3 GGUF is needed, not {meta.get('general.architecture')!r}")
    tokenizer = {key: value for key, value, _, _ in tokenizer_metadata(gguf_path)}

    def g(key: str):
        return meta[f"gemma3.{key}"]

    config = transformers.Gemma3TextConfig(
        vocab_size=len(tokenizer["tokenizer.ggml.tokens"]),
        hidden_size=g("embedding_length"),
        intermediate_size=g("feed_forward_length"),
        num_hidden_layers=g("block_count"),
        num_attention_heads=g("attention.head_count"),
        num_key_value_heads=g("attention.head_count_kv"),
        head_dim=g("attention.key_length"),
        max_position_embeddings=g("context_length"),
        rms_norm_eps=g("attention.layer_norm_rms_epsilon"),
        sliding_window=g("attention.sliding_window"),
        rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": g("rope.freq_base")},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0}},
        bos_token_id=tokenizer["tokenizer.ggml.bos_token_id"],
        eos_token_id=tokenizer["tokenizer.ggml.eos_token_id"],
        pad_token_id=tokenizer["tokenizer.ggml.padding_token_id"],
        unk_token_id=tokenizer["tokenizer.ggml.unknown_token_id"],
        tie_word_embeddings=True,
        dtype=torch.float32,
    )
    if "general.name" in meta:  # as transformers' conversion records it
        config._model_name_or_path = meta["general.name"]
    dtypes = {0: np.float32, 1: np.float16}
    state = {}
    data = np.memmap(gguf_path, dtype=np.uint8, mode="r")
    for t in header.tensors:
        if t.type not in dtypes:
            raise ValueError(f"{gguf_path}: tensor {t.name} is {t.type_name}; only f32 and f16 are read here")
        count = int(np.prod(t.shape))
        array = np.frombuffer(data, dtypes[t.type], count, t.offset).reshape(tuple(reversed(t.shape)))
        array = array.astype(np.float32)
        if t.name == "token_embd.weight":
            name = "model.embed_tokens.weight"
        elif t.name == "output_norm.weight":
            name = "model.norm.weight"
        else:
            _, layer, short, _ = t.name.split(".")
            name = f"model.layers.{layer}.{_LAYER_NAMES[short]}.weight"
        if name.endswith("norm.weight"):  # llama.cpp's converter stores 1 + the weight Gemma's RMSNorm scales by
            array = array - 1.0
        state[name] = torch.from_numpy(np.ascontiguousarray(array))
    del data
    model = transformers.Gemma3ForCausalLM(config)
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or set(missing) - {"lm_head.weight"}:
        raise ValueError(f"{gguf_path}: tensors do not fit Gemma 3 (missing {missing[:3]}, unknown {unexpected[:3]})")
    model.tie_weights()
    tok = transformers.AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name,
                                                     tokenizer_type=config.model_type)
    tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    folder.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, folder)
    return folder
