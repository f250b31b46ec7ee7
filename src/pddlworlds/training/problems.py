"""Training problems: drawn with the seeded generators, checked against every shipped problem and
against the held-out problems that adapters are validated on.

The training set must never contain a test problem. Two problems are "the same" when one becomes the
other by renaming objects, so `same_up_to_renaming` decides that exactly: a renaming-invariant colour
refinement (Weisfeiler-Leman over objects and atoms) rules most pairs out at once, and the rest get a
backtracking search for an object bijection that maps init and goal onto each other.
"""

from __future__ import annotations

import hashlib
import tempfile
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
    "HELD_OUT",
    "HELD_OUT_PER_LEVEL",
    "HELD_OUT_SEEDS",
    "TRAINING_GENERATORS",
    "TRAIN_SEEDS",
    "TrainingProblem",
    "exclude_shipped",
    "find_overlaps",
    "draw_held_out",
    "generate_training_problems",
    "held_out_problems",
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

#: The held-out problems adapters are validated on (never trained on): per domain, two problems a level,
#: drawn from the training generators as problem 1 of seeds 9001, 9002, ... in turn, skipping a draw equal
#: (up to renaming) to a shipped problem or to one kept before. `HELD_OUT` pins the outcome; a test
#: redraws it.
HELD_OUT_SEEDS: tuple[int, ...] = tuple(range(9001, 9101))
HELD_OUT_PER_LEVEL = 2
HELD_OUT: dict[str, tuple[tuple[str, int], ...]] = {  # domain -> ((level, seed), ...)
    "blocksworld": (("easy", 9001), ("easy", 9002), ("medium", 9001), ("medium", 9002), ("hard", 9001), ("hard", 9002)),
    "gripper": (("easy", 9002), ("easy", 9003), ("medium", 9002), ("medium", 9005), ("hard", 9001), ("hard", 9002)),
    "tyreworld": (("easy", 9002), ("easy", 9003), ("medium", 9003), ("medium", 9007), ("hard", 9006), ("hard", 9008)),
    "barman": (("easy", 9001), ("easy", 9002), ("medium", 9001), ("medium", 9002), ("hard", 9001), ("hard", 9002)),
}


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


def _write(out: Path, domain: str, level: str, seed: int, prefix: str) -> TrainingProblem:
    gp = generators.generate_problem(domain, level, 1, seed, TRAINING_GENERATORS.get(domain))
    name = f"{prefix}{seed}-{gp.name}"
    path = out / domain / f"{name}.pddl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(gp.text, newline="\n")
    return TrainingProblem(domain, level, 1, seed, name, path, dict(gp.parameters))


def draw_held_out(out_dir: str | Path, domain: str) -> list[TrainingProblem]:
    """Draw `domain`'s held-out problems by the rule above (what `HELD_OUT` pins)."""
    out = Path(out_dir)
    index = _shipped_index(domain, held_out=False)
    kept: list[TrainingProblem] = []
    for level in generators.LEVELS:
        mine = 0
        for seed in HELD_OUT_SEEDS:
            if mine == HELD_OUT_PER_LEVEL:
                break
            p = _write(out, domain, level, seed, "h")
            task = _load(domains()[domain].domain_file, p.path)
            digest = structure_hash(task)
            if any(same_up_to_renaming(task, other) for _, other in index.get(digest, [])):
                p.path.unlink()
                continue
            index.setdefault(digest, []).append((f"held-out/{p.name}", task))
            kept.append(p)
            mine += 1
    return kept


def held_out_problems(out_dir: str | Path, domain_names: Iterable[str] = generators.DOMAINS) -> list[TrainingProblem]:
    """Write the held-out problems (`HELD_OUT`) to `<out_dir>/<domain>/h<seed>-<level>-01.pddl`."""
    problems = []
    for domain in domain_names:
        if domain not in HELD_OUT:
            raise ValueError(f"no held-out problems for domain {domain!r}; domains: {', '.join(HELD_OUT)}")
        problems += [_write(Path(out_dir), domain, level, seed, "h") for level, seed in HELD_OUT[domain]]
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


def _shipped_index(domain: str, held_out: bool = True) -> dict[str, list[tuple[str, LiftedTask]]]:
    """Digest -> [(name, task)] of every shipped problem of `domain`, and its held-out ones (`held_out`)."""
    domain_file = domains()[domain].domain_file
    shipped: dict[str, list[tuple[str, LiftedTask]]] = {}
    for key, path in shipped_problem_files(domain).items():
        task = _load(domain_file, path)
        shipped.setdefault(structure_hash(task), []).append((key, task))
    if held_out and domain in HELD_OUT:
        with tempfile.TemporaryDirectory() as tmp:
            for p in held_out_problems(tmp, [domain]):
                task = _load(domain_file, p.path)
                shipped.setdefault(structure_hash(task), []).append((f"held-out/{p.name}", task))
    return shipped


def find_overlaps(problems: Iterable[TrainingProblem]) -> list[tuple[str, str]]:
    """(training problem, shipped or held-out problem) pairs that are the same up to renaming; [] is the
    proof."""
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
    """(kept, dropped): drop every problem equal up to renaming to a shipped one (any split), a held-out
    one or an earlier kept one; `dropped` maps each dropped name to what it equals."""
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
