"""A LoRA adapter file checked before llama.cpp sees it: llama.cpp trusts the file and crashes on a bad one.

What is checked, in order, each failure a one-line `AdapterError` naming the file and what is wrong: the file
is not empty and starts with the GGUF magic; its header and tensor table read (`gguf_header`, which checks
every length against the file's size);
`general.type` is "adapter" (a base model GGUF says "model") and `adapter.type` "lora" with a finite
positive `adapter.lora.alpha`; `general.architecture` is the base model's; every tensor is a `.lora_a` /
`.lora_b` of a tensor the base model has, in f16 or f32, A of shape [in, rank] and B of [rank, out] (ggml
order, as `training/gguf_adapter.py` writes them), in complete pairs of one rank; every tensor's data lies
inside the file and the file ends where the last tensor's (aligned) data ends.

None of this sees a changed byte inside tensor data: that is a legal adapter with other weights. An adapter
with a card beside it (`NAME.md` next to `NAME.gguf`, as the shipped one has) that states its
"adapter sha256" is also checked against that digest, which catches any changed byte.
"""

from __future__ import annotations

import functools
import math
import os
import re
from pathlib import Path

from ..files import file_sha256
from .gguf_header import GGUFHeader, GGUFHeaderError, read_header

__all__ = ["AdapterError", "card_sha256", "check_adapter"]

_MAGIC = b"GGUF"
_TENSOR = re.compile(r"^(.+)\.lora_([ab])$")
_CARD_DIGEST = re.compile(r"adapter sha256\s*`?([0-9a-f]{64})`?", re.IGNORECASE)


class AdapterError(ValueError):
    """An adapter file llama.cpp must not be given; the message names the file and what is wrong."""


#: The tensor types an adapter may have (`training/gguf_adapter.py` writes f16, or f32 on request).
ADAPTER_TYPES = {"f16", "f32"}


def _read(path: Path, what: str) -> GGUFHeader:
    try:
        return read_header(path)
    except GGUFHeaderError as exc:
        raise AdapterError(f"{path}: not a readable GGUF {what} ({exc})") from None
    except OSError as exc:
        raise AdapterError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None


def _text(header: GGUFHeader, key: str) -> str | None:
    value = header.metadata.get(key)
    return value if isinstance(value, str) else None


@functools.lru_cache(maxsize=4)
def _base_model(path: str, size: int, mtime_ns: int) -> tuple[str | None, dict[str, tuple[int, ...]]]:
    """(architecture, tensor name -> ggml shape) of a base model GGUF (cached by path, size and time)."""
    header = _read(Path(path), "model")
    return _text(header, "general.architecture"), {t.name: t.shape for t in header.tensors}


def card_sha256(adapter: Path) -> str | None:
    """The "adapter sha256" the card beside `adapter` (same name, `.md`) states, or None (no card, no digest)."""
    card = adapter.with_suffix(".md")
    if not card.is_file():
        return None
    found = _CARD_DIGEST.search(card.read_text(encoding="utf-8", errors="replace"))
    return found.group(1).lower() if found else None


def _check_tensors(path: Path, header: GGUFHeader, base_shapes: dict[str, tuple[int, ...]], base: Path) -> None:
    if not header.tensors:
        raise AdapterError(f"{path}: the adapter has no tensors")
    ranks: dict[str, dict[str, int]] = {}
    for tensor in header.tensors:
        name = tensor.name
        match = _TENSOR.match(name)
        if not match:
            raise AdapterError(f"{path}: tensor {name!r} is not a LoRA tensor (NAME.lora_a or NAME.lora_b)")
        target, side = match.group(1), match.group(2)
        if target not in base_shapes:
            raise AdapterError(f"{path}: tensor {name!r} adapts {target!r}, which the base model {base.name} lacks")
        if tensor.type_name not in ADAPTER_TYPES:
            raise AdapterError(f"{path}: tensor {name!r} is {tensor.type_name}; an adapter's tensors are f16 or f32")
        shape = tensor.shape
        n_in, n_out = base_shapes[target][:2]
        if len(shape) != 2 or (side == "a" and shape[0] != n_in) or (side == "b" and shape[1] != n_out):
            want = f"[{n_in}, rank]" if side == "a" else f"[rank, {n_out}]"
            raise AdapterError(f"{path}: tensor {name!r} has shape {list(shape)}, {target} needs {want}")
        rank = shape[1] if side == "a" else shape[0]
        if rank < 1:
            raise AdapterError(f"{path}: tensor {name!r} has rank {rank}")
        pair = ranks.setdefault(target, {})
        if side in pair:
            raise AdapterError(f"{path}: tensor {name!r} appears twice")
        pair[side] = rank
    for target, pair in ranks.items():
        if set(pair) != {"a", "b"}:
            missing = "lora_b" if "a" in pair else "lora_a"
            raise AdapterError(f"{path}: {target} has no {missing} tensor (LoRA tensors come in pairs)")
        if pair["a"] != pair["b"]:
            raise AdapterError(f"{path}: {target} has lora_a of rank {pair['a']} but lora_b of rank {pair['b']}")


def _check_extent(path: Path, header: GGUFHeader, size: int) -> None:
    end = header.data_start
    for tensor in header.tensors:
        start, length = tensor.offset, tensor.n_bytes or 0
        if start % header.alignment:
            raise AdapterError(f"{path}: tensor {tensor.name!r}'s data offset {start} is not aligned")
        if start + length > size:
            raise AdapterError(f"{path}: the data of tensor {tensor.name!r} lies past the end of the file (truncated?)")
        end = max(end, start + length)
    padded = -(-end // header.alignment) * header.alignment
    if not end <= size <= padded:
        raise AdapterError(
            f"{path}: the file is {size} bytes but its header declares data up to byte {end} "
            "(a damaged or appended-to file)"
        )


def check_adapter(adapter: str | os.PathLike[str], base_model: str | os.PathLike[str]) -> None:
    """Raise `AdapterError` (a ValueError) unless `adapter` is a LoRA adapter llama.cpp can apply to
    `base_model`; FileNotFoundError when either file is missing."""
    path, base = Path(adapter), Path(base_model)
    for f, what in ((path, "LoRA adapter"), (base, "model")):
        if not f.is_file():
            raise FileNotFoundError(f"{what} file not found: {f}")
    size = path.stat().st_size
    if size == 0:
        raise AdapterError(f"{path}: empty file, not a LoRA adapter")
    with open(path, "rb") as handle:
        head = handle.read(4)
    if head != _MAGIC:
        raise AdapterError(f"{path}: not a GGUF file (it starts with {head!r}; a llama.cpp adapter starts with GGUF)")
    header = _read(path, "file")
    kind = _text(header, "general.type")
    if kind != "adapter":
        hint = " (a model, not an adapter: give it to --llm embedded:PATH)" if kind == "model" else ""
        raise AdapterError(f"{path}: general.type is {kind!r}, an adapter's is 'adapter'{hint}")
    if (lora := _text(header, "adapter.type")) != "lora":
        raise AdapterError(f"{path}: adapter.type is {lora!r}; only 'lora' adapters are supported")
    alpha = header.metadata.get("adapter.lora.alpha")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not (math.isfinite(alpha) and alpha > 0):
        raise AdapterError(f"{path}: adapter.lora.alpha is {alpha}, expected a positive number")
    stat = base.stat()
    arch, base_shapes = _base_model(str(base.resolve()), stat.st_size, stat.st_mtime_ns)
    if (mine := _text(header, "general.architecture")) != arch:
        raise AdapterError(f"{path}: made for architecture {mine!r}, but the base model {base.name} is {arch!r}")
    _check_tensors(path, header, base_shapes, base)
    _check_extent(path, header, size)
    expected = card_sha256(path)
    if expected is not None and (actual := file_sha256(path)) != expected:
        raise AdapterError(
            f"{path}: sha256 {actual[:16]}… differs from the {expected[:16]}… its card "
            f"{path.with_suffix('.md').name} states (the file was changed or damaged)"
        )
