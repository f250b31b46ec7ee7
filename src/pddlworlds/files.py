"""Writing files so that no reader, and no run killed mid-write, ever sees half of one.

Every module that stores something a later process reads (plans, the planner index, run configurations,
reports, the task cache, the assembled model file) writes it through `atomic_write`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

__all__ = ["atomic_write", "file_sha256"]


def atomic_write(
    path: str | os.PathLike[str],
    content: str | bytes | Callable[[IO[str]], None],
    *,
    fsync: bool = False,
) -> None:
    """Write `path` through a temporary file in the same folder and `os.replace` it into place.

    `content` is the text or bytes to write, or a function that writes text to the open handle. With
    `fsync` the data (and the folder entry) reach the disk before this returns, for files a resumed run
    must trust. On any failure the temporary file is removed and the old file, if any, stays whole.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if isinstance(content, bytes):
            with os.fdopen(fd, "wb") as raw:
                raw.write(content)
                if fsync:
                    raw.flush()
                    os.fsync(raw.fileno())
        else:
            with os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
                if isinstance(content, str):
                    handle.write(content)
                else:
                    content(handle)
                if fsync:
                    handle.flush()
                    os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        with contextlib.suppress(OSError):
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks (model files are hundreds of MB), as hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
