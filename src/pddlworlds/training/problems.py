"""Training problems: drawn with the seeded generators, checked against every shipped problem and
against the held-out problems that adapters are validated on.

The training set must never contain a test problem. Two problems are "the same" when one becomes the
other by renaming objects (`renaming.same_up_to_renaming`); the shipped problems are filed by digest in a
`renaming.ProblemIndex`, whose digests of files are cached on disk.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .. import generators
from ..files import atomic_write
from ..registry import Registry
from ..worlds.catalogue import domains
from ..worlds.renaming import ProblemIndex, load_problem, same_up_to_renaming, structure_hash

__all__ = [
    "HELD_OUT",
    "HELD_OUT_PER_LEVEL",
    "HELD_OUT_SEEDS",
    "HELD_OUT_SETS",
    "PUBLIC_LIKE_SIZES",
    "TRAINING_GENERATORS",
    "TRAIN_SEEDS",
    "USED_TRAINING_PER_LEVEL",
    "USED_TRAINING_SEEDS",
    "HeldOutSet",
    "TrainingProblem",
    "draw_held_out",
    "exclude_shipped",
    "find_overlaps",
    "generate_training_problems",
    "held_out_problems",
    "same_up_to_renaming",
    "shipped_problem_files",
    "structure_hash",
]

#: Generator seeds of the training problems; seed 0 (`generators.DEFAULT_SEED`) is the shipped split's.
TRAIN_SEEDS: tuple[int, ...] = tuple(range(1001, 1011))

#: Domain -> the generator training problems are drawn from by default (`generators.DEFAULT_FAMILY`): the
#: shipped split's, except where that family is too small to give new problems (Gripper: one problem per
#: ball count and robby's room). `--family public-like` draws from `generators.FAMILIES["public-like"]`.
TRAINING_GENERATORS: Registry[generators.DomainGenerator] = generators.FAMILIES[generators.DEFAULT_FAMILY]

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

#: Training seeds used before the wide held-out set was drawn (expert data 1001–1020, on-policy rounds
#: 2001–2009, at most 2 problems a level): the wide set skips any draw equal to one of their problems, so
#: that no problem an adapter has been trained on is one it is validated on. Later training draws skip the
#: wide set's problems themselves (`exclude_shipped`).
USED_TRAINING_SEEDS: tuple[int, ...] = (*range(1001, 1021), *range(2001, 2010))
USED_TRAINING_PER_LEVEL = 2


@dataclass(frozen=True)
class HeldOutSet:
    """A pinned set of held-out problems: per domain, the (level, seed) of problem 1 of each draw kept.

    `draw_held_out` redraws it: for each level, problem 1 of the family's generator for seeds in turn,
    skipping a draw equal (up to renaming) to a shipped problem (the public ones included), to a problem of
    the sets in `avoid_sets`, to a training problem of `avoid_seeds`, or to one kept before, until
    `per_level` are kept. Where `sizes[domain][level]` is given (size -> problems), a draw is kept only
    while its size has room, so the set has exactly those sizes."""

    prefix: str  # file names: <prefix><seed>-<level>-01
    seeds: tuple[int, ...]
    levels: tuple[str, ...]
    per_level: int
    problems: dict[str, tuple[tuple[str, int], ...]]
    avoid_sets: tuple[str, ...] = ()
    avoid_seeds: tuple[int, ...] = ()  # training problems of these seeds, `USED_TRAINING_PER_LEVEL` a level
    family: str = generators.DEFAULT_FAMILY  # the generator family the set is drawn from
    sizes: dict[str, dict[str, dict[int, int]]] = field(default_factory=dict)  # domain -> level -> size -> problems
    # the levels `avoid_seeds` are drawn at (default: the set's; a set of another family than the training
    # problems' cannot rely on the levels' sizes being disjoint)
    avoid_levels: tuple[str, ...] = ()
    # domain -> the optimal plan length of each pinned problem, in order (A*+LM-cut; a test re-proves them)
    lengths: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # the split that ships the set's problems as files (scripts/ship_held_out.py writes them; a test checks
    # they are the set's, byte for byte); "" when the set is only drawn
    split: str = ""

    def count(self, domain: str, level: str) -> int:
        """How many problems of `level` the set holds for `domain`."""
        sizes = self.sizes.get(domain, {}).get(level)
        return self.per_level if sizes is None else sum(sizes.values())


#: The public-like held-out set's sizes per domain and level (size -> problems): the public set's, problem
#: for problem (blocks; balls; hubs; cocktails, the level being the goal kind: plain ingredients, one
#: cocktail, two cocktails), except where no new problem of a public size is left. Gripper has n + 1
#: problems of n balls up to renaming, and the public, shipped, held-out and trained-on problems take all
#: those of 2, 3, 4 and 6 balls and all but 2 of 7 and 10 balls, so its sizes move up: 5 for 4, 7 and 8 for
#: 6, 11 for two of the 10s. Tyreworld's levels are goal kinds (mixed goals on 1-3 hubs, on 4, full swaps);
#: its full swaps are one problem per count of hubs and swaps, p01 and p03 public, so its four are those of
#: 4 and 5 hubs (2 or 3 swapped), for p01, p02 (2 of 9 hubs), p03 and p04 (4 of 4, beyond a minute's proof).
PUBLIC_LIKE_SIZES: dict[str, dict[str, dict[int, int]]] = {
    "blocksworld": {"easy": {3: 2, 4: 2}, "medium": {5: 2}, "hard": {6: 2, 7: 2}},
    "gripper": {"easy": {5: 5}, "medium": {7: 2, 8: 4}, "hard": {10: 2, 11: 2, 12: 5}},
    "tyreworld": {"easy": {1: 1, 3: 4}, "medium": {4: 1}, "hard": {4: 2, 5: 2}},
    "barman": {"easy": {3: 2, 4: 1, 7: 1}, "medium": {3: 4, 4: 3, 5: 2, 6: 1, 7: 1}, "hard": {4: 3, 5: 2}},
}

#: The held-out sets by name. "standard" (24 problems, all three levels) is the one the table of rounds
#: uses. "wide" has the public problems' sizes only (medium and hard, 6 a level: 48 problems), so that a
#: difference between adapters on the problems that matter shows before a public run is made.
#: "public-like" (60 problems, as many a domain as the public set has) is drawn from the public-like family,
#: so that its sizes and goals are the public set's (docs/training.md, "The public problems, measured"); it
#: ships as each domain's `heldout` split, so `pddlworlds eval --split heldout` evaluates on it.
HELD_OUT_SETS: Registry[HeldOutSet] = Registry("held-out set", {
    "standard": HeldOutSet("h", HELD_OUT_SEEDS, generators.LEVELS, HELD_OUT_PER_LEVEL, HELD_OUT),
    "wide": HeldOutSet(
        "w", tuple(range(9101, 9301)), ("medium", "hard"), 6,
        {
            "blocksworld": (("medium", 9101), ("medium", 9102), ("medium", 9103), ("medium", 9104), ("medium", 9105),
                            ("medium", 9106), ("hard", 9101), ("hard", 9102), ("hard", 9103), ("hard", 9104),
                            ("hard", 9105), ("hard", 9106)),
            "gripper": (("medium", 9109), ("medium", 9110), ("medium", 9120), ("medium", 9133), ("medium", 9135),
                        ("medium", 9143), ("hard", 9101), ("hard", 9106), ("hard", 9111), ("hard", 9114),
                        ("hard", 9121), ("hard", 9123)),
            "tyreworld": (("medium", 9106), ("medium", 9121), ("medium", 9123), ("medium", 9125), ("medium", 9127),
                          ("medium", 9131), ("hard", 9102), ("hard", 9103), ("hard", 9109), ("hard", 9113),
                          ("hard", 9116), ("hard", 9117)),
            "barman": (("medium", 9104), ("medium", 9105), ("medium", 9111), ("medium", 9120), ("medium", 9123),
                       ("medium", 9124), ("hard", 9102), ("hard", 9104), ("hard", 9105), ("hard", 9106),
                       ("hard", 9108), ("hard", 9111)),
        },
        avoid_sets=("standard",),
        avoid_seeds=USED_TRAINING_SEEDS,
    ),
    "public-like": HeldOutSet(
        "pl", tuple(range(9301, 10001)), generators.LEVELS, 0,
        {
            "blocksworld": (("easy", 9301), ("easy", 9303), ("easy", 9305), ("easy", 9322), ("medium", 9301),
                            ("medium", 9302), ("hard", 9301), ("hard", 9302), ("hard", 9303), ("hard", 9305)),
            "gripper": (("easy", 9302), ("easy", 9304), ("easy", 9307), ("easy", 9309), ("easy", 9311),
                        ("medium", 9319), ("medium", 9337), ("medium", 9338), ("medium", 9343), ("medium", 9352),
                        ("medium", 9379), ("hard", 9301), ("hard", 9305), ("hard", 9308), ("hard", 9309),
                        ("hard", 9334), ("hard", 9335), ("hard", 9346), ("hard", 9361), ("hard", 9747)),
            "tyreworld": (("easy", 9301), ("easy", 9303), ("easy", 9304), ("easy", 9306), ("easy", 9317),
                          ("medium", 9301), ("hard", 9302), ("hard", 9305), ("hard", 9306), ("hard", 9307)),
            "barman": (("easy", 9301), ("easy", 9302), ("easy", 9306), ("easy", 9310), ("medium", 9301),
                       ("medium", 9302), ("medium", 9303), ("medium", 9304), ("medium", 9305), ("medium", 9306),
                       ("medium", 9307), ("medium", 9310), ("medium", 9312), ("medium", 9313), ("medium", 9315),
                       ("hard", 9301), ("hard", 9302), ("hard", 9303), ("hard", 9304), ("hard", 9305)),
        },
        avoid_sets=("standard", "wide"),
        avoid_seeds=USED_TRAINING_SEEDS,
        family="public-like",
        sizes=PUBLIC_LIKE_SIZES,
        avoid_levels=generators.LEVELS,
        split="heldout",
        lengths={  # A*+LM-cut (scripts/measure_public_problems.py --set public-like --solve)
            "blocksworld": (8, 10, 12, 6, 14, 6, 20, 8, 18, 18),
            "gripper": (15, 13, 16, 14, 13, 20, 24, 22, 21, 22, 20, 28, 34, 27, 32, 31, 32, 33, 33, 30),
            "tyreworld": (10, 8, 16, 14, 6, 19, 21, 30, 30, 21),
            "barman": (8, 2, 5, 5, 10, 10, 12, 11, 10, 10, 10, 11, 11, 10, 11, 15, 17, 17, 18, 18),
        },
    ),
}, plural="sets")


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
    family: str = generators.DEFAULT_FAMILY,
) -> list[TrainingProblem]:
    """Write `<out_dir>/<domain>/s<seed>-<level>-<nn>.pddl` for every combination, drawn from the generator
    family `family`; seed 0 is refused because it is the shipped `generated` split's."""
    out = Path(out_dir)
    family_generators = generators.FAMILIES.get(family)
    problems = []
    for seed in seeds:
        if seed == generators.DEFAULT_SEED:
            raise ValueError(f"seed {seed} generates the shipped '{generators.SPLIT}' split: pick another")
        for domain in domain_names:
            for level in levels:
                for index in range(1, per_level + 1):
                    gp = generators.generate_problem(domain, level, index, seed, family_generators.get(domain))
                    name = f"s{seed}-{gp.name}"
                    path = out / domain / f"{name}.pddl"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    atomic_write(path, gp.text)
                    problems.append(TrainingProblem(domain, level, index, seed, name, path, dict(gp.parameters)))
    return problems


def _write(out: Path, domain: str, level: str, seed: int, spec: HeldOutSet) -> TrainingProblem:
    gp = generators.generate_problem(domain, level, 1, seed, generators.FAMILIES.get(spec.family).get(domain))
    prefix = spec.prefix
    name = f"{prefix}{seed}-{gp.name}"
    path = out / domain / f"{name}.pddl"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, gp.text)
    return TrainingProblem(domain, level, 1, seed, name, path, dict(gp.parameters))


def draw_held_out(
    out_dir: str | Path, domain: str, set_name: str = "standard", *, skipped: dict[str, str] | None = None
) -> list[TrainingProblem]:
    """Draw `domain`'s problems of the held-out set `set_name` by its rule (what the set pins); `skipped`,
    when given, receives each draw left out and the problem it equals."""
    spec = HELD_OUT_SETS.get(set_name)
    out = Path(out_dir)
    index = _shipped_index(domain, held_out=spec.avoid_sets, leave_out=spec.split)  # not the set's own files
    domain_file = index.domain_file
    if spec.avoid_seeds:
        # within a family the levels' sizes are disjoint, so only the set's levels can hold an equal
        # problem; a set of another family names the levels to avoid (`avoid_levels`)
        drawn = generate_training_problems(index.scratch() / "avoid", seeds=spec.avoid_seeds,
                                           per_level=USED_TRAINING_PER_LEVEL, domain_names=[domain],
                                           levels=spec.avoid_levels or spec.levels)
        for p in drawn:
            index.add_file(f"train/{p.name}", p.path)
    generator = generators.FAMILIES.get(spec.family).get(domain)
    kept: list[TrainingProblem] = []
    for level in spec.levels:
        mine, wanted = 0, spec.count(domain, level)
        room = dict(spec.sizes.get(domain, {}).get(level, {}))  # size -> problems still to keep
        for seed in spec.seeds:
            if mine == wanted:
                break
            size = generators.drawn_size(domain, level, 1, seed, generator)
            if room and not room.get(size):
                continue
            p = _write(out, domain, level, seed, spec)
            task = load_problem(domain_file, p.path)
            digest = structure_hash(task)
            same = next(index.equal_to(task, digest), None)
            if same is not None:
                p.path.unlink()
                if skipped is not None:
                    skipped[p.name] = same
                continue
            index.add_task(f"held-out/{p.name}", task, digest)
            kept.append(p)
            mine += 1
            if room:
                room[size] -= 1
        if mine < wanted:
            raise ValueError(f"held-out set {set_name!r}: {domain} {level} has {mine} new problems in its "
                             f"{len(spec.seeds)} seeds, not {wanted}")
    return kept


def held_out_problems(
    out_dir: str | Path, domain_names: Iterable[str] = generators.DOMAINS, set_name: str = "standard"
) -> list[TrainingProblem]:
    """Write the held-out set's problems to `<out_dir>/<domain>/<prefix><seed>-<level>-01.pddl`."""
    spec = HELD_OUT_SETS.get(set_name)
    problems = []
    for domain in domain_names:
        if domain not in spec.problems:
            raise ValueError(f"no held-out problems for domain {domain!r}; domains: {', '.join(spec.problems)}")
        problems += [_write(Path(out_dir), domain, level, seed, spec) for level, seed in spec.problems[domain]]
    return problems


def shipped_problem_files(domain: str) -> dict[str, Path]:
    """Every shipped problem of `domain`, all splits: `split/name` -> file."""
    d = domains()[domain]
    return {f"{split}/{name}": d.problem_file(name, split) for split in d.splits() for name in d.problems(split)}


def _shipped_index(domain: str, held_out: Iterable[str] | None = None, leave_out: str = "") -> ProblemIndex:
    """Every shipped problem of `domain` but those of split `leave_out`, and its problems in the held-out sets
    named in `held_out` (default: every set), filed by digest. A set shipped as a split is indexed once, by
    its files (`<split>/<name>`)."""
    shipped_files = {k: v for k, v in shipped_problem_files(domain).items() if k.split("/")[0] != leave_out}
    index = ProblemIndex(domains()[domain].domain_file)
    for name, path in shipped_files.items():
        index.add_file(name, path)
    splits = {key.split("/")[0] for key in shipped_files}
    for set_name in HELD_OUT_SETS if held_out is None else held_out:
        spec = HELD_OUT_SETS.get(set_name)
        if domain not in spec.problems or spec.split in splits:
            continue
        for p in held_out_problems(index.scratch() / set_name, [domain], set_name):
            index.add_file(f"held-out/{p.name}", p.path)
    return index


def find_overlaps(problems: Iterable[TrainingProblem]) -> list[tuple[str, str]]:
    """(training problem, shipped or held-out problem) pairs that are the same up to renaming; [] is the
    proof."""
    overlaps = []
    by_domain: dict[str, list[TrainingProblem]] = {}
    for p in problems:
        by_domain.setdefault(p.domain, []).append(p)
    for domain, items in by_domain.items():
        shipped = _shipped_index(domain)
        for p in items:
            task = load_problem(shipped.domain_file, p.path)
            overlaps += [(f"{domain}/{p.name}", f"{domain}/{key}") for key in shipped.equal_to(task)]
    return overlaps


def exclude_shipped(problems: Iterable[TrainingProblem]) -> tuple[list[TrainingProblem], dict[str, str]]:
    """(kept, dropped): drop every problem equal up to renaming to a shipped one (any split), a held-out
    one or an earlier kept one; `dropped` maps each dropped name to what it equals."""
    kept: list[TrainingProblem] = []
    dropped: dict[str, str] = {}
    indexes: dict[str, ProblemIndex] = {}
    for p in problems:
        if p.domain not in indexes:
            indexes[p.domain] = _shipped_index(p.domain)
        index = indexes[p.domain]
        task = load_problem(index.domain_file, p.path)
        digest = structure_hash(task)
        same = next(index.equal_to(task, digest), None)
        if same is not None:
            dropped[f"{p.domain}/{p.name}"] = f"{p.domain}/{same}"
            continue
        index.add_task(f"train/{p.name}", task, digest)
        kept.append(p)
    return kept, dropped
