"""The header of a GGUF file (metadata and tensor table), read without trusting it and without reading data.

A small reader of our own rather than the `gguf` package's `GGUFReader`: that one makes a numpy view of every
metadata element, which for the base model's 262,144-token vocabulary took 62 s on the shared machine
(load 14; 1.8 s for the 7.6 MB adapter), and the check runs each time an adapter is loaded. This one skips
arrays by their lengths and reads through a memory map; every length and count is checked against the
file's size, so a damaged header is a `GGUFHeaderError` naming what is wrong, never a long loop or a crash.
Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (versions 2 and 3, little-endian).
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["GGUFHeader", "GGUFHeaderError", "TensorInfo", "read_header"]

MAGIC = b"GGUF"
#: ggml's limit on a tensor's dimensions.
MAX_DIMS = 4
#: Arrays nested deeper than this are refused (the format allows nesting; no real file nests).
MAX_NESTING = 8
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
#: ggml tensor types whose size per element is fixed (F32, F16, BF16, F64, I8..I64): type -> bytes.
ELEMENT_BYTES = {0: 4, 1: 2, 30: 2, 28: 8, 24: 1, 25: 2, 26: 4, 27: 8}
TYPE_NAMES = {0: "f32", 1: "f16", 30: "bf16", 28: "f64", 24: "i8", 25: "i16", 26: "i32", 27: "i64"}


class GGUFHeaderError(ValueError):
    """The file is not a GGUF file, or its header is damaged; the message says what is wrong (no path)."""


@dataclass(frozen=True)
class TensorInfo:
    """One entry of the tensor table: `shape` in ggml order (fastest dimension first), `offset` in the file."""

    name: str
    shape: tuple[int, ...]
    type: int
    offset: int

    @property
    def n_bytes(self) -> int | None:
        """The size of the tensor's data, for types of fixed element size (None for quantised types)."""
        size = ELEMENT_BYTES.get(self.type)
        if size is None:
            return None
        count = 1
        for dim in self.shape:
            count *= dim
        return count * size

    @property
    def type_name(self) -> str:
        return TYPE_NAMES.get(self.type, f"ggml type {self.type}")


@dataclass
class GGUFHeader:
    """What a GGUF file declares: scalar and string metadata (arrays are skipped), the tensor table."""

    version: int
    metadata: dict[str, Any] = field(default_factory=dict)
    tensors: list[TensorInfo] = field(default_factory=list)
    data_start: int = 0
    alignment: int = 32
    size: int = 0


class _Cursor:
    def __init__(self, view: Any, size: int) -> None:
        self.view, self.size, self.pos = view, size, 0

    def take(self, n: int, what: str) -> int:
        if n < 0 or self.pos + n > self.size:
            raise GGUFHeaderError(f"the header ends inside {what} at byte {self.pos} (a truncated file?)")
        start = self.pos
        self.pos += n
        return start

    def unpack(self, fmt: str, what: str) -> Any:
        start = self.take(struct.calcsize(fmt), what)
        return struct.unpack_from(fmt, self.view, start)[0]

    def string(self, what: str) -> str:
        length = self.unpack("<Q", what)
        start = self.take(length, what)
        try:
            return bytes(self.view[start : start + length]).decode("utf-8")
        except UnicodeDecodeError:
            raise GGUFHeaderError(f"{what} at byte {start} is not UTF-8 text") from None

    def skip_string(self, what: str) -> None:
        self.take(self.unpack("<Q", what), what)

    def value(self, kind: int, what: str, depth: int = 0) -> Any:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind], what)
        if kind == _STRING:
            return self.string(what)
        if kind != _ARRAY:
            raise GGUFHeaderError(f"{what} has an unknown value type {kind}")
        if depth >= MAX_NESTING:
            raise GGUFHeaderError(f"{what} nests arrays deeper than {MAX_NESTING}")
        inner, count = self.unpack("<I", what), self.unpack("<Q", what)
        if inner in _SCALARS:
            self.take(count * struct.calcsize(_SCALARS[inner]), what)
        else:
            for _ in range(count):  # each element takes at least 8 bytes, so this ends at the file's end
                if inner == _STRING:
                    self.skip_string(what)
                else:
                    self.value(inner, what, depth + 1)
        return None


def read_header(path: str | os.PathLike[str]) -> GGUFHeader:
    """Read `path`'s GGUF header; raises GGUFHeaderError (damaged or not GGUF) or OSError (unreadable)."""
    path = Path(path)
    size = path.stat().st_size
    if size < len(MAGIC):
        raise GGUFHeaderError(f"{size} bytes, too short for a GGUF file")
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
        return _parse(_Cursor(view, size))


def _parse(cursor: _Cursor) -> GGUFHeader:
    magic = bytes(cursor.view[0:4])
    if magic != MAGIC:
        raise GGUFHeaderError(f"not a GGUF file (it starts with {magic!r}, not {MAGIC!r})")
    cursor.pos = 4
    version = cursor.unpack("<I", "the version")
    if version not in (2, 3):
        raise GGUFHeaderError(f"GGUF version {version}; versions 2 and 3 are read")
    header = GGUFHeader(version=version, size=cursor.size)
    n_tensors = cursor.unpack("<Q", "the tensor count")
    n_values = cursor.unpack("<Q", "the metadata count")
    for i in range(n_values):  # each entry takes at least 12 bytes: the loop ends at the file's end
        key = cursor.string(f"metadata key {i + 1}")
        kind = cursor.unpack("<I", f"the type of {key}")
        header.metadata[key] = cursor.value(kind, key)
    alignment = header.metadata.get("general.alignment", 32)
    if not isinstance(alignment, int) or isinstance(alignment, bool) or alignment < 1 or alignment & (alignment - 1):
        raise GGUFHeaderError(f"general.alignment is {alignment!r}, not a power of two")
    header.alignment = alignment
    infos = []
    for i in range(n_tensors):  # each entry takes at least 24 bytes
        name = cursor.string(f"the name of tensor {i + 1}")
        n_dims = cursor.unpack("<I", f"the dimensions of {name}")
        if not 1 <= n_dims <= MAX_DIMS:
            raise GGUFHeaderError(f"tensor {name!r} has {n_dims} dimensions (1 to {MAX_DIMS})")
        shape = tuple(cursor.unpack("<Q", f"the shape of {name}") for _ in range(n_dims))
        kind = cursor.unpack("<I", f"the type of {name}")
        offset = cursor.unpack("<Q", f"the data offset of {name}")
        infos.append((name, shape, kind, offset))
    header.data_start = -(-cursor.pos // alignment) * alignment
    header.tensors = [TensorInfo(n, s, k, header.data_start + o) for n, s, k, o in infos]
    return header
