"""The stored unsolvability proofs under `planners/unsolvable.csv` (data made by `scripts/generate_unsolvable.py`).

Kept apart from the plan index because an unsolvable problem has no plan and no length: what it has is a
proof (the method that established that no plan exists, its time and the number of states it covered).
The environment reads this file to know which problems only a claim of `impossible` solves, the expert
to know when to make that claim, and `pddlworlds list` to show whether a problem is solvable.
Problem names are unique within a domain across splits (a variant keeps its name in every split that
holds it), so rows are keyed by (domain, problem).
"""

from __future__ import annotations

import csv
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from pathlib import Path

from ..files import atomic_write
from ..worlds.catalogue import data_dir

__all__ = [
    "PROOF_COLUMNS",
    "Proof",
    "is_unsolvable",
    "proofs_file",
    "read_proofs",
    "solvability",
    "solvable_text",
    "split_unsolvable",
    "unsolvable_problems",
    "write_proofs",
]


@dataclass(frozen=True)
class Proof:
    """One unsolvable problem: where it came from, what was removed, and how no plan was proven."""

    domain: str
    problem: str
    parent_split: str  # the split of the solvable problem it was derived from
    parent: str
    removal: str  # the removal's registry name, e.g. "no-pump"
    description: str  # what was removed or added, in words
    trivial: bool  # unsolvable at a glance (see unsolvable.trivial_reason)
    trivial_reason: str
    method: str  # "exhaustive-bfs" or "fast-downward:<planner>"
    time_s: float
    states: int  # reachable states enumerated (BFS) or states Fast Downward expanded
    notes: str = ""


PROOF_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Proof))


def proofs_file() -> Path:
    return data_dir("planners") / "unsolvable.csv"


def _parse(row: dict[str, str]) -> Proof:
    return Proof(
        domain=row["domain"],
        problem=row["problem"],
        parent_split=row["parent_split"],
        parent=row["parent"],
        removal=row["removal"],
        description=row["description"],
        trivial=row["trivial"].lower() == "true",
        trivial_reason=row["trivial_reason"],
        method=row["method"],
        time_s=float(row["time_s"]),
        states=int(row["states"]),
        notes=row.get("notes", ""),
    )


def read_proofs(path: str | Path | None = None) -> list[Proof]:
    """Every stored proof; empty when none are stored. A malformed row raises naming file and line."""
    try:
        path = Path(path) if path is not None else proofs_file()
    except FileNotFoundError:
        return []
    if not path.is_file():
        return []
    return list(_read_cached(str(path), path.stat().st_mtime_ns))


@lru_cache(maxsize=4)
def _read_cached(path: str, _mtime: int) -> tuple[Proof, ...]:
    out = []
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in PROOF_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing columns {', '.join(missing)}")
        for row in reader:
            try:
                out.append(_parse(row))
            except (KeyError, ValueError) as exc:
                raise ValueError(f"{path}, line {reader.line_num}: malformed proof row: {exc}") from exc
    return tuple(out)


def unsolvable_problems(domain: str) -> dict[str, Proof]:
    """Problem -> its stored proof, for one domain."""
    return {p.problem: p for p in read_proofs() if p.domain == domain}


def is_unsolvable(domain: str, problem: str) -> bool:
    """True only when a stored proof says no plan exists."""
    return problem in unsolvable_problems(domain)


def split_unsolvable(domain: str, split: str) -> list[str]:
    """The problems of a shipped domain's split that a stored proof says are unsolvable."""
    from ..worlds.catalogue import get_domain

    known = unsolvable_problems(domain)
    return [p for p in get_domain(domain).problems(split) if p in known]


def solvability(domain: str, problem: str, optimal_length: int | None) -> bool | None:
    """False with a stored proof of unsolvability, True with a stored plan length, else None (unknown)."""
    if is_unsolvable(domain, problem):
        return False
    return True if optimal_length is not None else None


def solvable_text(domain: str, problem: str, optimal_length: int | None) -> str:
    """How `pddlworlds list` shows solvability: yes (a stored plan), no, no (trivial), or ? (unknown)."""
    proof = unsolvable_problems(domain).get(problem)
    if proof is not None:
        return "no (trivial)" if proof.trivial else "no"
    return "yes" if optimal_length is not None else "?"


def write_proofs(proofs: list[Proof], path: str | Path | None = None) -> Path:
    """Replace the proof file with `proofs`, sorted by (domain, problem), written atomically."""
    from ..worlds.grounding import natural_key

    path = Path(path) if path is not None else proofs_file()

    def write(handle) -> None:
        writer = csv.DictWriter(handle, fieldnames=list(PROOF_COLUMNS), lineterminator="\n")
        writer.writeheader()
        for proof in sorted(proofs, key=lambda p: (p.domain, natural_key(p.problem))):
            row = asdict(proof)
            row["trivial"] = "true" if proof.trivial else "false"
            row["time_s"] = f"{proof.time_s:.3f}"
            writer.writerow(row)

    atomic_write(path, write)
    return path
