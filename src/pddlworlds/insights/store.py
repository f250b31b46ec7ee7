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

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..files import atomic_write

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "SCALE_KINDS",
    "InsightStore",
    "InsightStoreError",
    "Rule",
    "check_scale",
    "scale_kind",
]

FORMAT = "pddlworlds-insights"
FORMAT_VERSION = 1
#: The scale kinds, broadest first: the order rules are listed and shown in.
SCALE_KINDS = ("general", "domain", "task")
_NAME = re.compile(r"^[A-Za-z0-9_+\-.]+$")


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

    def save(self, path: str | os.PathLike[str]) -> None:
        atomic_write(path, self.to_json(), fsync=True)

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
            if not isinstance(rule_id, int) or isinstance(rule_id, bool) or rule_id < 1:
                raise InsightStoreError(f"{where}: id {rule_id!r} is not a positive integer")
            if rule_id in seen:
                raise InsightStoreError(f"{where}: id {rule_id} is used twice")
            if not isinstance(text, str) or not text.strip():
                raise InsightStoreError(f"{where} (id {rule_id}): text must be a non-empty string")
            if not isinstance(score, int) or isinstance(score, bool):
                raise InsightStoreError(f"{where} (id {rule_id}): score {score!r} is not an integer")
            try:
                scale = check_scale(str(item["scale"]))
            except ValueError as exc:
                raise InsightStoreError(f"{where} (id {rule_id}): {exc}") from None
            seen.add(rule_id)
            if score > 0:  # a rule edited down to zero by hand is dropped, as an update would
                rules.append(Rule(rule_id, scale, " ".join(text.split()), score))
        next_id = data.get("next_id", max(seen, default=0) + 1)
        if not isinstance(next_id, int) or next_id <= max(seen, default=0):
            next_id = max(seen, default=0) + 1
        revision = data.get("revision", 0)
        store = cls(rules, next_id, revision if isinstance(revision, int) else 0)
        store.sort()
        return store

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> InsightStore:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InsightStoreError(f"{path}: cannot read the insight file ({exc.strerror})") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InsightStoreError(f"{path}, line {exc.lineno}: not valid JSON ({exc.msg})") from None
        return cls.from_dict(data, str(path))
