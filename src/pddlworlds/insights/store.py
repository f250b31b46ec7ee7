"""The insight store: a versioned JSON file of rules that a user can read and edit.

    {
      "format": "pddlworlds-insights",
      "format_version": 1,
      "revision": 2,
      "next_id": 4,
      "rules": [
        {"id": 1, "scale": "general", "text": "Check valid actions when an action fails.", "score": 3},
        {"id": 3, "scale": "domain:blocksworld", "text": "Clear a block before picking it up.", "score": 2}
      ]
    }

`scale` is `general`, `domain:<domain name>` or `task:<category>` (see `categories.py`); `score` is a
positive integer (a rule whose score falls to zero is dropped); `id`s are never reused (`next_id`);
`revision` counts the updates written. Rules are kept in a fixed order (scale kind, then id), so two
stores with the same rules write the same bytes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..files import atomic_write, open_no_follow

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_JSON_DEPTH",
    "MAX_RULE_ID",
    "MAX_STORE_BYTES",
    "SCALE_KINDS",
    "InsightStore",
    "InsightStoreError",
    "Rule",
    "check_scale",
    "check_store_path",
    "lock_store",
    "scale_kind",
]

FORMAT = "pddlworlds-insights"
FORMAT_VERSION = 1
#: The scale kinds, broadest first: the order rules are listed and shown in.
SCALE_KINDS = ("general", "domain", "task")
_NAME = re.compile(r"^[A-Za-z0-9_+\-.]+$")
#: Largest store file read (8 MiB; a store of 10 rules per scale over every domain and task is a few kB).
MAX_STORE_BYTES = 8 * 1024 * 1024
#: Deepest JSON nesting read (the format needs 3: the object, its rule list, a rule); deeper input is
#: refused before the JSON reader recurses into it.
MAX_JSON_DEPTH = 16
#: Largest rule id or counter (ids are numbered from 1; larger ones are hand-made garbage).
MAX_RULE_ID = 2**53
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


class InsightStoreError(ValueError):
    """An insight file that cannot be read: the message names the file and the rule."""


def check_scale(scale: str) -> str:
    """`scale` itself when well formed (`general`, `domain:<name>`, `task:<name>`); ValueError otherwise."""
    kind, colon, name = scale.partition(":")
    if kind == "general" and not colon:
        return scale
    if kind in ("domain", "task") and colon and _NAME.match(name):
        return scale
    raise ValueError(f"scale {scale!r} is not general, domain:<name> or task:<name>")


def scale_kind(scale: str) -> str:
    return scale.partition(":")[0]


@dataclass
class Rule:
    id: int
    scale: str
    text: str
    score: int


@dataclass
class InsightStore:
    """The rules and the counters; `save`/`load` read and write the JSON file above."""

    rules: list[Rule] = field(default_factory=list)
    next_id: int = 1
    revision: int = 0

    def sort(self) -> None:
        self.rules.sort(key=lambda r: (SCALE_KINDS.index(scale_kind(r.scale)), r.scale, r.id))

    def get(self, rule_id: int) -> Rule | None:
        return next((r for r in self.rules if r.id == rule_id), None)

    def by_scale(self, scale: str) -> list[Rule]:
        return [r for r in self.rules if r.scale == scale]

    def counts(self) -> dict[str, int]:
        """Rules per scale kind (`general`, `domain`, `task`), every kind present."""
        out = dict.fromkeys(SCALE_KINDS, 0)
        for rule in self.rules:
            out[scale_kind(rule.scale)] += 1
        return out

    def add(self, scale: str, text: str, score: int) -> Rule:
        rule = Rule(self.next_id, check_scale(scale), text, score)
        self.next_id += 1
        self.rules.append(rule)
        self.sort()
        return rule

    def to_dict(self) -> dict[str, Any]:
        self.sort()
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "revision": self.revision,
            "next_id": self.next_id,
            "rules": [asdict(r) for r in self.rules],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    def save(self, path: str | os.PathLike[str], *, through_link: bool = False) -> None:
        """Write the file whole. A symbolic link at `path` is replaced by the file, unless `through_link` (the
        user's own `--insights` path: its target is replaced, the link kept)."""
        atomic_write(os.path.realpath(path) if through_link else path, self.to_json(), fsync=True)

    def copy(self) -> InsightStore:
        return InsightStore.from_dict(self.to_dict())

    @classmethod
    def from_dict(cls, data: Any, source: str = "<insights>") -> InsightStore:
        if not isinstance(data, dict):
            raise InsightStoreError(
                f"{source}: expected a JSON object with 'rules', got {type(data).__name__}"
            )
        if data.get("format", FORMAT) != FORMAT:
            raise InsightStoreError(f"{source}: 'format' is {data.get('format')!r}, expected {FORMAT!r}")
        version = data.get("format_version", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise InsightStoreError(
                f"{source}: format_version {version!r} is not supported (expected {FORMAT_VERSION})"
            )
        raw_rules = data.get("rules", [])
        if not isinstance(raw_rules, list):
            raise InsightStoreError(f"{source}: 'rules' must be a list")
        rules: list[Rule] = []
        seen: set[int] = set()
        for n, item in enumerate(raw_rules):
            where = f"{source}: rules[{n}]"
            if not isinstance(item, dict):
                raise InsightStoreError(f"{where}: expected an object with id, scale, text, score")
            missing = [k for k in ("id", "scale", "text") if k not in item]
            if missing:
                raise InsightStoreError(f"{where}: missing {', '.join(missing)}")
            rule_id, text, score = item["id"], item["text"], item.get("score", 1)
            if not isinstance(rule_id, int) or isinstance(rule_id, bool) or not 1 <= rule_id <= MAX_RULE_ID:
                shown = rule_id if isinstance(rule_id, (int, float)) and len(repr(rule_id)) < 30 else "given"
                raise InsightStoreError(f"{where}: id {shown} is not an integer from 1 to {MAX_RULE_ID}")
            if rule_id in seen:
                raise InsightStoreError(f"{where}: id {rule_id} is used twice")
            if not isinstance(text, str) or not text.strip():
                raise InsightStoreError(f"{where} (id {rule_id}): text must be a non-empty string")
            if not isinstance(score, int) or isinstance(score, bool) or abs(score) > MAX_RULE_ID:
                raise InsightStoreError(f"{where} (id {rule_id}): score is not an integer up to {MAX_RULE_ID}")
            try:
                scale = check_scale(str(item["scale"]))
            except ValueError as exc:
                raise InsightStoreError(f"{where} (id {rule_id}): {exc}") from None
            seen.add(rule_id)
            if score > 0:  # a rule edited down to zero by hand is dropped, as an update would
                rules.append(Rule(rule_id, scale, " ".join(text.split()), score))
        next_id = data.get("next_id", max(seen, default=0) + 1)
        if not isinstance(next_id, int) or not max(seen, default=0) < next_id <= MAX_RULE_ID + 1:
            next_id = max(seen, default=0) + 1
        revision = data.get("revision", 0)
        valid_revision = isinstance(revision, int) and not isinstance(revision, bool) and 0 <= revision <= MAX_RULE_ID
        store = cls(rules, next_id, revision if valid_revision else 0)
        store.sort()
        return store

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> InsightStore:
        """Read a store file; every problem (unreadable, over `MAX_STORE_BYTES`, not UTF-8, not JSON,
        nested deeper than `MAX_JSON_DEPTH`, not a store) is an `InsightStoreError` naming the file."""
        path = Path(path)
        try:
            if path.stat().st_size > MAX_STORE_BYTES:
                raise InsightStoreError(
                    f"{path}: {path.stat().st_size:,} bytes, over the limit of {MAX_STORE_BYTES:,} for an insight file"
                )
            data = path.read_bytes()
        except OSError as exc:
            raise InsightStoreError(f"{path}: cannot read the insight file ({exc.strerror or exc})") from exc
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise InsightStoreError(
                f"{path}, line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); re-save it as UTF-8"
            ) from None
        depth = _json_depth(text)
        if depth > MAX_JSON_DEPTH:
            raise InsightStoreError(f"{path}: JSON nested deeper than {MAX_JSON_DEPTH} levels; not an insight file")
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InsightStoreError(f"{path}, line {exc.lineno}: not valid JSON ({exc.msg})") from None
        except (ValueError, RecursionError) as exc:  # e.g. a number of more digits than Python converts
            raise InsightStoreError(f"{path}: not a readable JSON file ({str(exc).splitlines()[0][:120]})") from None
        return cls.from_dict(loaded, str(path))


def _json_depth(text: str) -> int:
    """How deep `text`'s brackets nest outside strings (counted only up to just past `MAX_JSON_DEPTH`)."""
    depth = deepest = 0
    for match in re.finditer(r"[\[\]{}]", _STRING.sub('""', text)):
        depth += 1 if match.group() in "[{" else -1
        deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            break
    return deepest


def check_store_path(path: str | os.PathLike[str]) -> Path:
    """The file a store path writes to (a symbolic link resolved), checked before a run plays anything:
    a folder, or a folder that cannot be written, is an `InsightStoreError` naming the path."""
    target = Path(os.path.realpath(path))
    if target.exists() and not target.is_file():
        raise InsightStoreError(f"--insights {path}: is a folder or a device, not a file; give a JSON file's path")
    parent = target.parent
    if parent.exists() and not parent.is_dir():
        raise InsightStoreError(f"--insights {path}: {parent} is a file, not a folder")
    if parent.is_dir() and not os.access(parent, os.W_OK | os.X_OK):
        raise InsightStoreError(f"--insights {path}: cannot write in {parent} (permission denied)")
    return target


@contextlib.contextmanager
def lock_store(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold an exclusive lock on a store for a run that reads, updates and writes it (`<file>.lock` beside
    the file, holding the run's pid); a second run on the same file is refused with the first one's pid.
    Yields the file the store is written to (`check_store_path`)."""
    import fcntl

    target = check_store_path(path)
    lock_path = target.with_name(target.name + ".lock")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = open_no_follow(lock_path, os.O_RDWR | os.O_CREAT)
    except OSError as exc:
        raise InsightStoreError(f"--insights {path}: cannot create {lock_path} ({exc.strerror or exc})") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
            raise InsightStoreError(
                f"--insights {path} is being updated by another run (pid {holder}); wait for it to finish, "
                "or give this run another store"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield target
    finally:
        os.close(fd)  # releases the lock
