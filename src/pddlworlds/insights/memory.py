"""The insight store as a trial memory: one store version per trial in a folder, updated from each
trial's episodes (what `pddlworlds.evaluation.trials.run_trials` calls between trials).

    <folder>/store-0.json       the store the first trial reads (the user's file as it was at the start)
    <folder>/store-<t>.json     the store after trial t (written last, so it marks trial t as updated)
    <folder>/update-<t>.jsonl   trial t's generation calls: experience, reply, operations, rejections

Every version is read back, never rebuilt, so a resumed run reads the store as it was after the last
finished trial. After each update the store is also written to the user's file.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import atomic_write, file_sha256
from ..llm import LLM
from .editing import DEFAULT_CAP, enforce_cap
from .experience import MODES, select_experiences
from .generation import GenerationOptions, update_store
from .prompts import INSIGHT_PROMPTS_VERSION
from .selection import InsightUse
from .store import SCALE_KINDS, InsightStore, lock_store

__all__ = ["InsightCapWarning", "InsightMemory", "store_path"]


class InsightCapWarning(UserWarning):
    """The user's store had more rules in a scale than the cap: the lowest-scored were left out."""


def store_path(folder: str | os.PathLike[str], trial: int) -> Path:
    """The store after `trial` (0: before the first)."""
    return Path(folder) / f"store-{trial}.json"


@dataclass(frozen=True)
class InsightMemory:
    """`--insights PATH` and its options: where the store lives and how it is updated and shown."""

    path: str  # the user's store file: read before the first trial (empty if missing), written after each
    mode: str = "pair"  # experience selection: success | pair
    cap: int = DEFAULT_CAP  # rules per scale
    limit: int | None = None  # rules shown per episode (None: all that apply)
    embedding: str | None = None  # e.g. transformers:<model>: rank rules by similarity to the goal
    max_tokens: int = 160  # per generation call

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown --insight-mode {self.mode!r}; modes: {', '.join(MODES)}")
        if self.cap < 1:
            raise ValueError("--insight-cap must be at least 1")
        if self.limit is not None and self.limit < 1:
            raise ValueError("--insight-limit must be at least 1")

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Keep the user's store to this run from before the first trial to the last update: the path is
        checked (a folder is refused) and locked (a second run on it is refused with this one's pid)."""
        with lock_store(self.path):
            yield

    def prepare(self, folder: Path) -> None:
        """Write store-0 from the user's file once (at most `cap` rules per scale, with a warning when the
        file had more); a resumed run keeps the one it wrote."""
        first = store_path(folder, 0)
        if not first.is_file():
            source = Path(self.path)
            store = InsightStore.load(source) if source.is_file() else InsightStore()
            dropped = enforce_cap(store, self.cap)
            if dropped:
                warnings.warn(
                    f"{source}: {len(dropped)} rule(s) over the cap of {self.cap} per scale (--insight-cap) "
                    "are left out, the lowest-scored first; the store written after each trial keeps the rest",
                    InsightCapWarning,
                    stacklevel=2,
                )
            store.save(first)

    def identity(self, folder: Path) -> dict[str, Any]:
        """What the run records and compares on resume (not the file's path: the first store's content)."""
        return {
            "kind": "insights",
            "mode": self.mode,
            "cap": self.cap,
            "limit": self.limit,
            "embedding": self.embedding,
            "max_tokens": self.max_tokens,
            "prompts_version": INSIGHT_PROMPTS_VERSION,
            "initial_store_sha256": file_sha256(store_path(folder, 0)),
        }

    def done(self, folder: Path, trial: int) -> bool:
        return store_path(folder, trial).is_file()

    def use(self, folder: Path, trial: int) -> InsightUse:
        """What trial `trial`'s episodes read: the store after the trial before."""
        return InsightUse(str(store_path(folder, trial - 1).resolve()), self.limit, self.embedding)

    def update(
        self,
        folder: Path,
        trial: int,
        lines: Sequence[dict[str, Any]],
        earlier: Sequence[Sequence[dict[str, Any]]],
        llm: LLM,
    ) -> None:
        """The store after `trial`, from the one before and the trial's stored episodes (one call each)."""
        store = InsightStore.load(store_path(folder, trial - 1))
        experiences = select_experiences(self.mode, lines, earlier)
        log = update_store(
            store, experiences, llm, GenerationOptions(cap=self.cap, max_tokens=self.max_tokens)
        )
        atomic_write(
            folder / f"update-{trial}.jsonl",
            "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in log),
            fsync=True,
        )
        store.save(store_path(folder, trial))  # last: it marks the trial as updated
        store.save(self.path, through_link=True)

    def columns(self, folder: Path, trial: int) -> dict[str, str]:
        """Rules per scale kind in the store after `trial` ("-" while it is not written)."""
        path = store_path(folder, trial)
        counts = InsightStore.load(path).counts() if path.is_file() else None
        return {f"{kind} rules": str(counts[kind]) if counts else "-" for kind in SCALE_KINDS}
