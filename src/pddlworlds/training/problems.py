"""Training problems: drawn with the seeded generators, checked against every shipped problem.

The training set must never contain a test problem. Two problems are "the same" when one becomes the
other by renaming objects, so `same_up_to_renaming` decides that exactly: a renaming-invariant colour
refinement (Weisfeiler-Leman over objects and atoms) rules most pairs out at once, and the rest get a
backtracking search for an object bijection that maps init and goal onto each other.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .. import generators
from ..generators import gripper
from ..registry import Registry
from ..worlds.catalogue import domains, load_task
from ..worlds.pddl import LiftedTask, normalisation_warnings_ignored

__all__ = [
    "TRAINING_GENERATORS",
    "TRAIN_SEEDS",
    "TrainingProblem",
    "exclude_shipped",
    "find_overlaps",
    "generate_training_problems",
    "same_up_to_renaming",
    "shipped_problem_files",
    "structure_hash",
]

#: Generator seeds of the training problems; seed 0 (`generators.DEFAULT_SEED`) is the shipped split's.
TRAIN_SEEDS: tuple[int, ...] = tuple(range(1001, 1011))

#: Domain -> the generator training problems are drawn from: the shipped split's, except where that
#: family is too small to give new problems (Gripper: one problem per ball count and robby's room).
TRAINING_GENERATORS: Registry[generators.DomainGenerator] = Registry(
    "training generator", {**generators.GENERATORS, "gripper": gripper.MIXED}, plural="generators"
)


@dataclass(frozen=True)
class TrainingProblem:
    """One generated training problem, written to `path`."""

    domain: str
    level: str
    index: int
    seed: int
    name: str  # unique within the domain: s<seed>-<level>-<nn>
    path: Path
    parameters: dict[str, object]


def generate_training_problems(
    out_dir: str | Path,
    *,
    seeds: Iterable[int] = TRAIN_SEEDS,
    per_level: int = 3,
    domain_names: Iterable[str] = generators.DOMAINS,
    levels: Iterable[str] = generators.LEVELS,
) -> list[TrainingProblem]:
    """Write `<out_dir>/<domain>/s<seed>-<level>-<nn>.pddl` for every combination; seed 0 is refused
    because it is the shipped `generated` split's."""
    out = Path(out_dir)
    problems = []
    for seed in seeds:
        if seed == generators.DEFAULT_SEED:
            raise ValueError(f"seed {seed} generates the shipped '{generators.SPLIT}' split: pick another")
        for domain in domain_names:
            for level in levels:
                for index in range(1, per_level + 1):
                    gp = generators.generate_problem(domain, level, index, seed, TRAINING_GENERATORS.get(domain))
                    name = f"s{seed}-{gp.name}"
                    path = out / domain / f"{name}.pddl"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(gp.text, newline="\n")
                    problems.append(TrainingProblem(domain, level, index, seed, name, path, dict(gp.parameters)))
    return problems


def shipped_problem_files(domain: str) -> dict[str, Path]:
    """Every shipped problem of `domain`, all splits: `split/name` -> file."""
    d = domains()[domain]
    return {f"{split}/{name}": d.problem_file(name, split) for split in d.splits() for name in d.problems(split)}


def _facts(task: LiftedTask) -> tuple[list[tuple[str, tuple[str, ...]]], list[tuple[str, tuple[str, ...]]]]:
    init = sorted(task.init)
    goal = sorted((f"{'' if positive else 'not-'}{name}", tuple(args)) for name, args, positive in task.goal)
    return init, goal


def _refine(task: LiftedTask, rounds: int = 4) -> dict[str, str]:
    """Colour of each object after `rounds` of refinement by the (init/goal) facts it appears in."""
    types = dict(task.objects)
    init, goal = _facts(task)
    facts = [("i", n, a) for n, a in init] + [("g", n, a) for n, a in goal]
    colour = {o: f"t:{types[o]}" for o in types}
    for _ in range(rounds):
        seen: dict[str, list[str]] = {o: [] for o in types}
        for part, name, args in facts:
            sig = f"{part}:{name}(" + ",".join(colour.get(a, a) for a in args) + ")"
            for pos, a in enumerate(args):
                if a in seen:
                    seen[a].append(f"{pos}@{sig}")
        colour = {
            o: hashlib.sha256((colour[o] + "|" + "|".join(sorted(seen[o]))).encode()).hexdigest()[:16] for o in types
        }
    return colour


def structure_hash(task: LiftedTask) -> str:
    """A digest equal for problems equal up to object renaming (different digests: different problems)."""
    colour = _refine(task)
    init, goal = _facts(task)
    parts = sorted(f"i:{n}(" + ",".join(colour.get(a, a) for a in args) + ")" for n, args in init)
    parts += sorted(f"g:{n}(" + ",".join(colour.get(a, a) for a in args) + ")" for n, args in goal)
    parts.append("objects:" + ",".join(sorted(colour.values())))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def same_up_to_renaming(a: LiftedTask, b: LiftedTask) -> bool:
    """True when a bijection of objects (same types) maps a's init and goal exactly onto b's."""
    if structure_hash(a) != structure_hash(b):
        return False
    ca, cb = _refine(a), _refine(b)
    init_a, goal_a = (set(x) for x in _facts(a))
    init_b, goal_b = (set(x) for x in _facts(b))
    if len(init_a) != len(init_b) or len(goal_a) != len(goal_b):
        return False
    objects_a = sorted(ca, key=lambda o: (Counter(ca.values())[ca[o]], o))  # rarest colours first
    candidates = {o: [p for p in cb if cb[p] == ca[o]] for o in objects_a}
    mapping: dict[str, str] = {}
    used: set[str] = set()

    def consistent() -> bool:
        for facts_a, facts_b in ((init_a, init_b), (goal_a, goal_b)):
            for name, args in facts_a:
                if all(x in mapping for x in args) and (name, tuple(mapping[x] for x in args)) not in facts_b:
                    return False
        return True

    def search(i: int) -> bool:
        if i == len(objects_a):
            return True
        o = objects_a[i]
        for p in candidates[o]:
            if p in used:
                continue
            mapping[o] = p
            used.add(p)
            if consistent() and search(i + 1):
                return True
            del mapping[o]
            used.discard(p)
        return False

    return search(0)


def _load(domain_file: Path, problem_file: Path) -> LiftedTask:
    with normalisation_warnings_ignored():  # the shipped files' known quirks
        return load_task(domain_file, problem_file)


def _shipped_index(domain: str) -> dict[str, list[tuple[str, LiftedTask]]]:
    domain_file = domains()[domain].domain_file
    shipped: dict[str, list[tuple[str, LiftedTask]]] = {}
    for key, path in shipped_problem_files(domain).items():
        task = _load(domain_file, path)
        shipped.setdefault(structure_hash(task), []).append((key, task))
    return shipped


def find_overlaps(problems: Iterable[TrainingProblem]) -> list[tuple[str, str]]:
    """(training problem, shipped problem) pairs that are the same up to renaming; [] is the proof."""
    overlaps = []
    by_domain: dict[str, list[TrainingProblem]] = {}
    for p in problems:
        by_domain.setdefault(p.domain, []).append(p)
    for domain, items in by_domain.items():
        domain_file = domains()[domain].domain_file
        shipped = _shipped_index(domain)
        for p in items:
            task = _load(domain_file, p.path)
            for key, other in shipped.get(structure_hash(task), []):
                if same_up_to_renaming(task, other):
                    overlaps.append((f"{domain}/{p.name}", f"{domain}/{key}"))
    return overlaps


def exclude_shipped(problems: Iterable[TrainingProblem]) -> tuple[list[TrainingProblem], dict[str, str]]:
    """(kept, dropped): drop every problem equal up to renaming to a shipped one (any split) or to an
    earlier kept one; `dropped` maps each dropped name to what it equals."""
    kept: list[TrainingProblem] = []
    dropped: dict[str, str] = {}
    indexes: dict[str, dict[str, list[tuple[str, LiftedTask]]]] = {}
    for p in problems:
        if p.domain not in indexes:
            indexes[p.domain] = _shipped_index(p.domain)
        index = indexes[p.domain]
        task = _load(domains()[p.domain].domain_file, p.path)
        digest = structure_hash(task)
        same = next((key for key, other in index.get(digest, []) if same_up_to_renaming(task, other)), None)
        if same is not None:
            dropped[f"{p.domain}/{p.name}"] = f"{p.domain}/{same}"
            continue
        index.setdefault(digest, []).append((f"train/{p.name}", task))
        kept.append(p)
    return kept, dropped
