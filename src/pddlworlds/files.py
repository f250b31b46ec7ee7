"""Writing files so that no reader, and no run killed mid-write, ever sees half of one, and so that nothing
outside the folder written to is ever touched.

Every module that stores something a later process reads (plans, the planner index, run configurations,
reports, plots, the task cache, the assembled model file) writes it through `atomic_write`; a file written in
place (a lock, an appended log) is opened with `open_no_follow`. A run folder or an insight store may be
shared, so a symbolic link planted under one of our file names must never lead a write elsewhere:
`atomic_write` replaces such a link (`os.replace` renames over the link, not its target), and
`open_no_follow` replaces it by a plain file before opening, never opening the link's target for writing.
A folder we create parts in (`own_folder`) must be a plain folder, not a link to somewhere else.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

__all__ = ["FolderLinkError", "atomic_write", "file_sha256", "open_no_follow", "own_folder", "refuse_folder_link",
           "write_figure"]


def atomic_write(
    path: str | os.PathLike[str],
    content: str | bytes | Callable[[IO[str]], None],
    *,
    fsync: bool = False,
) -> None:
    """Write `path` through a temporary file in the same folder and `os.replace` it into place.

    `content` is the text or bytes to write, or a function that writes text to the open handle. With
    `fsync` the data (and the folder entry) reach the disk before this returns, for files a resumed run
    must trust. On any failure the temporary file is removed and the old file, if any, stays whole. A
    symbolic link at `path` is replaced by the file; what it pointed to is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # O_EXCL: a new file
    try:
        binary = isinstance(content, bytes)
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o644)
            if isinstance(content, (str, bytes)):
                handle.write(content)
            else:
                content(handle)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
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


def write_figure(path: str | os.PathLike[str], figure: Any, **options: Any) -> None:
    """A matplotlib figure saved as PNG through `atomic_write` (matplotlib's own `savefig(path)` opens the
    path, following a link); `options` go to `savefig` (`dpi=...`)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", **options)
    atomic_write(path, buffer.getvalue())


def open_no_follow(
    path: str | os.PathLike[str], flags: int, mode: int = 0o644, *, keep_content: bool = False
) -> int:
    """`os.open(path, flags, mode)` for a file we write in place inside a folder of ours (a lock, an appended
    log), never through a symbolic link: a link standing at `path` is first replaced by a plain file, empty,
    or with `keep_content` holding the bytes a reader saw through the link (when it led to a regular file),
    so the link's target is never opened for writing. Returns the descriptor (not inherited by children)."""
    path = os.fspath(path)
    flags |= os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(path, flags, mode)
    except OSError as exc:
        if exc.errno != errno.ELOOP or not os.path.islink(path):
            raise
    content = b""
    if keep_content:
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.stat(path).st_mode):
                with open(path, "rb") as handle:
                    content = handle.read()
    atomic_write(path, content)  # renames a plain file over the link
    return os.open(path, flags, mode)  # a link planted again in between: ELOOP, for the caller to report


class FolderLinkError(OSError):
    """A folder we write parts of is a symbolic link (it could lead writes anywhere)."""


def refuse_folder_link(path: str | os.PathLike[str]) -> None:
    """`FolderLinkError` when `path`, a folder we write parts of, is a symbolic link (one planted in a shared
    folder could lead our writes anywhere)."""
    if os.path.islink(path):
        raise FolderLinkError(errno.ELOOP, "a symbolic link stands where a folder of this run should be", str(path))


def own_folder(path: str | os.PathLike[str]) -> Path:
    """`path` made (with its parents) if missing, as a folder we write parts of (`refuse_folder_link`)."""
    refuse_folder_link(path)
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks (model files are hundreds of MB), as hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
