"""Plans as IPC text, and the stored plans and index under `planners/` (reading and writing).

The read side of the shipped index lives one layer down in `pddlworlds.artefacts.plans`, because the environment
(below planning) reports optimal lengths too; this module re-exports it and adds everything that writes:
plan files, index rows under an exclusive lock, atomic replaces.
"""

from __future__ import annotations

import contextlib
import csv
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from ..artefacts.plans import index_file, optimal_lengths, plan_file, read_index
from ..files import atomic_write, open_no_follow
from ..worlds.catalogue import DEFAULT_SPLIT
from ..worlds.grounding import natural_key
from .results import Action, action_pddl

__all__ = [
    "INDEX_COLUMNS",
    "as_actions",
    "format_plan",
    "index_file",
    "index_lock",
    "optimal_length",
    "optimal_lengths",
    "parse_plan",
    "plan_file",
    "read_index",
    "stored_plan",
    "update_index",
    "write_plan_file",
]

#: `length`: the stored (shortest) plan's length; `cost`: on a domain with action costs only, the cheapest
#: plan's cost (its plan in `<problem>.cheapest.plan`), empty elsewhere.
INDEX_COLUMNS = ["domain", "split", "problem", "length", "optimal", "planner", "method", "solve_time_s", "notes",
                 "cost"]

_ACTION_RE = re.compile(r"\(([^()]*)\)")


# ---- plan text -----------------------------------------------------------------------------------


def parse_plan(text: str) -> list[Action]:
    """Actions of an IPC plan (`(stack b1 b2)` lines; `;` comments and `0: ... [1]` decorations ignored)."""
    actions: list[Action] = []
    for line in text.splitlines():
        line = line.split(";", 1)[0].strip()
        if not line:
            continue
        match = _ACTION_RE.search(line)
        if match is None:
            raise ValueError(f"not a plan line: {line!r}")
        words = match.group(1).lower().split()
        if not words:
            raise ValueError(f"empty action in plan line: {line!r}")
        actions.append((words[0], tuple(words[1:])))
    return actions


def as_actions(actions: Iterable[Action | str | Sequence]) -> list[Action]:
    """(schema, args) pairs from pairs of any case or from IPC plan text (each string may hold lines)."""
    out: list[Action] = []
    for a in actions:
        if isinstance(a, str):
            out.extend(parse_plan(a))
        else:
            schema, args = a
            out.append((str(schema).lower(), tuple(str(x).lower() for x in args)))
    return out


def format_plan(actions: Sequence[Action], comments: Sequence[str] = (), cost: int | None = None) -> str:
    """IPC format: one `(schema args)` per line, then `; cost = N (general cost)` for a plan of a task with
    action costs (`cost` given: the sum of its actions' costs), else `; cost = N (unit cost)` with N its
    length, as Fast Downward writes them, and comment lines."""
    lines = [action_pddl(a) for a in actions]
    lines.append(f"; cost = {len(actions)} (unit cost)" if cost is None else f"; cost = {cost} (general cost)")
    lines.extend(f"; {c}" for c in comments)
    return "\n".join(lines) + "\n"


# ---- reading -------------------------------------------------------------------------------------


def optimal_length(domain: str, problem: str, split: str = DEFAULT_SPLIT, *, proven: bool = True) -> int | None:
    """The stored optimal plan length (no planning at run time); None if unknown.

    With `proven=False` the best stored length is returned even when not proven optimal (as the
    environment's `info["optimal_length"]` does).
    """
    for row in read_index():
        if row.get("domain") == domain and row.get("split") == split and row.get("problem") == problem:
            if not row.get("length", "").isdigit():
                return None
            if proven and row.get("optimal", "").lower() != "true":
                return None
            return int(row["length"])
    return None


def stored_plan(domain: str, problem: str) -> list[Action] | None:
    """The plan stored under `planners/<domain>/<problem>.plan`, or None."""
    try:
        path = plan_file(domain, problem)
    except FileNotFoundError:
        return None
    if not path.is_file():
        return None
    return parse_plan(path.read_text())


# ---- writing -------------------------------------------------------------------------------------


@contextlib.contextmanager
def index_lock(path: str | os.PathLike | None = None) -> Iterator[None]:
    """Exclusive `fcntl.flock` on `<index>.lock`; every writer of the index must hold it."""
    import fcntl

    path = Path(path) if path is not None else index_file()
    lock_path = path.with_name(path.name + ".lock")
    with os.fdopen(open_no_follow(lock_path, os.O_WRONLY | os.O_CREAT), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def update_index(
    rows: Iterable[dict[str, Any]], path: str | os.PathLike | None = None, columns: Sequence[str] = INDEX_COLUMNS
) -> None:
    """Add or replace rows (keyed by domain, split, problem): locked read-modify-write, atomic replace.

    `columns` come first in the file, then any other columns it already has; other CSVs keyed the same
    way (the scripts' check files) go through here too.
    """
    path = Path(path) if path is not None else index_file()
    with index_lock(path):
        current: dict[tuple[str, str, str], dict[str, str]] = {}
        fields = list(columns)
        if path.is_file():
            with open(path, newline="") as handle:
                reader = csv.DictReader(handle)
                fields += [c for c in (reader.fieldnames or []) if c not in fields]
                for row in reader:
                    current[(row["domain"], row["split"], row["problem"])] = row
        for row in rows:
            row = {k: "" if v is None else str(v) for k, v in row.items()}
            current[(row["domain"], row["split"], row["problem"])] = row

        def write(handle: IO[str]) -> None:
            writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
            writer.writeheader()
            for key in sorted(current, key=lambda k: (k[0], k[1], natural_key(k[2]))):
                writer.writerow({c: current[key].get(c, "") for c in fields})

        atomic_write(path, write)


def write_plan_file(
    domain: str, problem: str, actions: Sequence[Action], comments: Sequence[str] = (),
    path: str | os.PathLike | None = None, cost: int | None = None,
) -> Path:
    """Write `planners/<domain>/<problem>.plan` (or `path`) atomically in IPC format (`cost`: as
    `format_plan`'s, for a task with action costs)."""
    path = Path(path) if path is not None else plan_file(domain, problem)
    atomic_write(path, format_plan(actions, comments, cost))
    return path
