"""The files of one run folder: `config.json`, `episodes.jsonl` (one line per finished episode, appended
with one `os.write` and fsync'ed, so a killed run leaves at worst a torn last line) and `errors.jsonl`."""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import atomic_write
from ..records import check_stored
from .errors import EvaluationError

__all__ = [
    "CONFIG_FILE",
    "EPISODES_FILE",
    "ERRORS_FILE",
    "EpisodeFile",
    "RunStore",
    "check_record",
    "is_errored",
    "json_line",
    "line_key",
    "path_problem",
    "utc_now",
]


CONFIG_FILE = "config.json"


EPISODES_FILE = "episodes.jsonl"


ERRORS_FILE = "errors.jsonl"


LOCK_FILE = ".lock"


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")


def json_line(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


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
            fd = os.open(self.out / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
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
        if not self.config_path.is_file():
            return None
        try:
            return json.loads(self.config_path.read_text())
        except ValueError as exc:
            raise EvaluationError(
                f"{self.config_path} is not valid JSON ({exc}); move it away to start anew"
            ) from exc

    def write_config(self, config: dict[str, Any]) -> None:
        atomic_write(self.config_path, json.dumps(config, indent=2, sort_keys=True) + "\n", fsync=True)

    def read_episodes(self, repair: bool = False) -> EpisodeFile:
        """Every stored episode line, in file order, one per episode key (the first; later copies are counted
        as duplicates). A torn last line (a run killed mid-write) is dropped and counted, and with `repair`
        also cut off the file so that the next append starts on a fresh line. A line that is not an episode
        record raises `EvaluationError` naming the file and line."""
        found = EpisodeFile([], 0, 0)
        if not self.episodes_path.is_file():
            return found
        data = self.episodes_path.read_bytes()
        end = data.rfind(b"\n") + 1  # bytes up to the last complete line
        seen: set[tuple[Any, ...]] = set()

        def keep(line: Any, number: int) -> None:
            check_record(line, self.episodes_path, number)
            key = line_key(line)
            if key in seen:
                found.duplicates += 1
                return
            seen.add(key)
            found.lines.append(line)

        for number, raw in enumerate(data[:end].split(b"\n")[:-1], start=1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError as exc:
                raise EvaluationError(
                    f"{self.episodes_path}, line {number}, is not valid JSON ({exc}); only a torn last line "
                    "is expected after a crash: fix or remove that line"
                ) from exc
            keep(line, number)
        if end < len(data):
            tail = data[end:]
            number = data[:end].count(b"\n") + 1
            try:  # a complete last line that only lacks its newline is kept
                line = json.loads(tail)
            except ValueError:
                found.torn += 1
                if repair:
                    os.truncate(self.episodes_path, end)
            else:
                keep(line, number)
                if repair:
                    with open(self.episodes_path, "ab") as handle:
                        handle.write(b"\n")
                        os.fsync(handle.fileno())
        return found

    def load_lines(self, repair: bool = False) -> list[dict[str, Any]]:
        """`read_episodes(repair).lines`."""
        return self.read_episodes(repair).lines

    def rewrite_episodes(self, lines: list[dict[str, Any]]) -> None:
        """Replace `episodes.jsonl` by `lines` at once (a resume dropping the episodes it re-runs)."""
        atomic_write(self.episodes_path, b"".join(json_line(line) for line in lines), fsync=True)

    def append(self, line: dict[str, Any], path: Path | None = None) -> None:
        """Append one line: a single `os.write` on an O_APPEND descriptor, then fsync.

        Only the process holding `lock()` appends, so a short write (a full disk) is undone by cutting the
        file back to its size before the write, and never leaves a torn line in the middle of the file.
        """
        target = path or self.episodes_path
        payload = json_line(line)
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
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
    }
    return f"cannot write {path}: {reasons.get(exc.errno, exc.strerror or str(exc))}"


@dataclass
class EpisodeFile:
    """What `RunStore.read_episodes` found: the episode lines, and how many lines it skipped."""

    lines: list[dict[str, Any]]
    torn: int  # a torn last line (a run killed mid-write)
    duplicates: int  # later copies of an episode already read

    def skipped(self) -> str:
        """The skipped lines in words ("" when none), for reports and resumes."""
        parts = []
        if self.torn:
            parts.append("1 torn last line")
        if self.duplicates:
            parts.append(f"{self.duplicates} duplicate line(s) of episodes already read")
        return " and ".join(parts)


def check_record(line: Any, path: Path, number: int) -> None:
    """Raise `RecordError` (a ValueError) naming the file and line unless `line` is an episode record with
    every field of the type `EpisodeRecord` declares (`records.check_stored`, shared with the viewer)."""
    check_stored(line, source=path, line_no=number)


def is_errored(line: dict[str, Any]) -> bool:
    """An episode stopped by a fault outside the agent (an endpoint's): re-run on resume, never scored."""
    return bool(line.get("error"))


def line_key(line: dict[str, Any]) -> tuple[str, str, str, str, int | None]:
    return (line["agent"], line["domain"], line["split"], line["problem"], line.get("seed"))
