"""Writing a run folder (its format is `artefacts.runs`): the lock that keeps a second `eval` out, the
configuration, and appending episode lines with one `os.write` each, fsync'ed. A run folder may be shared,
so every file is written without following a symbolic link (`files.atomic_write`, `files.open_no_follow`)."""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..artefacts.runs import (
    CONFIG_FILE,
    EPISODES_FILE,
    ERRORS_FILE,
    LOCK_FILE,
    EpisodeLines,
    RunFolderError,
    json_line,
    read_config,
    read_episodes,
)
from ..files import atomic_write, open_no_follow
from .errors import EvaluationError

__all__ = ["RunStore", "path_problem", "utc_now"]


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")


class RunStore:
    """The files of one run folder; `lock()` keeps a second `eval` from writing to it at the same time."""

    def __init__(self, out: str | os.PathLike[str]):
        self.out = Path(out)
        self.config_path = self.out / CONFIG_FILE
        self.episodes_path = self.out / EPISODES_FILE
        self.errors_path = self.out / ERRORS_FILE

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        import fcntl

        if self.out.exists() and not self.out.is_dir():
            raise EvaluationError(f"--out {self.out} is a file, not a folder: choose another --out")
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            fd = open_no_follow(self.out / LOCK_FILE, os.O_RDWR | os.O_CREAT)
        except OSError as exc:
            raise EvaluationError(path_problem(exc, self.out)) from exc
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
                raise EvaluationError(
                    f"{self.out} is being written by another eval (pid {holder}); wait for it or stop it"
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            yield
        finally:
            os.close(fd)  # releases the lock

    def read_config(self) -> dict[str, Any] | None:
        try:
            return read_config(self.config_path)
        except RunFolderError as exc:
            raise EvaluationError(f"{exc}; move it away to start anew") from exc

    def write_config(self, config: dict[str, Any]) -> None:
        atomic_write(self.config_path, json.dumps(config, indent=2, sort_keys=True) + "\n", fsync=True)

    def read_episodes(self, repair: bool = False) -> EpisodeLines:
        """`artefacts.runs.read_episodes` of this folder; with `repair`, a torn last line is also cut off
        the file, and a whole last line without its newline gets one, so the next append starts afresh."""
        found = read_episodes(self.episodes_path)
        path = self.episodes_path
        if repair and path.is_file() and path.stat().st_size > found.complete_bytes:
            fd = open_no_follow(path, os.O_WRONLY | os.O_APPEND, keep_content=True)
            try:
                if found.unterminated:
                    os.write(fd, b"\n")
                else:
                    os.ftruncate(fd, found.complete_bytes)
                os.fsync(fd)
            finally:
                os.close(fd)
        return found

    def load_lines(self, repair: bool = False) -> list[dict[str, Any]]:
        """`read_episodes(repair).lines`."""
        return self.read_episodes(repair).lines

    def rewrite_episodes(self, lines: list[dict[str, Any]]) -> None:
        """Replace the episode file by `lines` at once (a resume dropping the episodes it re-runs)."""
        atomic_write(self.episodes_path, b"".join(json_line(line) for line in lines), fsync=True)

    def append(self, line: dict[str, Any], path: Path | None = None) -> None:
        """Append one line: a single `os.write` on an O_APPEND descriptor, then fsync.

        Only the process holding `lock()` appends, so a short write (a full disk) is undone by cutting the
        file back to its size before the write, and never leaves a torn line in the middle of the file.
        """
        target = path or self.episodes_path
        payload = json_line(line)
        fd = open_no_follow(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, keep_content=True)
        try:
            size = os.fstat(fd).st_size
            try:
                written = os.write(fd, payload)
            except OSError:
                os.ftruncate(fd, size)
                raise
            if written != len(payload):
                os.ftruncate(fd, size)
                raise OSError(f"short write to {target}: {written} of {len(payload)} bytes (disk full?)")
            os.fsync(fd)
        finally:
            os.close(fd)


def path_problem(exc: OSError, fallback: Path) -> str:
    """An output-path failure in one line naming the path (read-only, full disk, a file in the way...)."""
    path = exc.filename or fallback
    reasons = {
        errno.EACCES: "permission denied (a read-only folder?)",
        errno.EROFS: "read-only file system",
        errno.ENOSPC: "no space left on the device",
        errno.EDQUOT: "disk quota exceeded",
        errno.ENOTDIR: "a file stands where a folder should be",
        errno.EEXIST: "a file stands where a folder should be",
        errno.ENOENT: "no such folder",
        errno.ELOOP: "a symbolic link stands there; move it away",
    }
    return f"cannot write {path}: {reasons.get(exc.errno, exc.strerror or str(exc))}"
