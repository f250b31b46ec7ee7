"""The seeded `generated` split: deterministic, sized per level, solvable, loadable, and not drifting."""

from __future__ import annotations

import contextlib
import tempfile
import warnings
from pathlib import Path

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401  (registers the environments)
from pddlworlds.generators import (
    BARMAN_GOAL_LIMITS,
    DOMAINS,
    HEADER_MARK,
    LEVELS,
    PER_LEVEL,
    SIZES,
    SPLIT,
    generate_problem,
    generate_split,
    problem_size,
    random_towers,
)
from pddlworlds.worlds.catalogue import data_dir, get_domain, load_task
from pddlworlds.worlds.pddl import read_up_problem

REPO_DOMAINS = data_dir("pddl_domains")
NAMES = [f"{level}-{i:02d}" for level in LEVELS for i in range(1, PER_LEVEL + 1)]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.pddl"))}


def test_same_seed_gives_byte_identical_files(tmp_path):
    a = generate_split(tmp_path / "a", seed=3)
    b = generate_split(tmp_path / "b", seed=3)
    assert len(a) == len(b) == len(DOMAINS) * len(LEVELS) * PER_LEVEL
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    generate_split(tmp_path / "c", seed=4)
    other = _tree(tmp_path / "c")
    assert other.keys() == _tree(tmp_path / "a").keys()
    assert other != _tree(tmp_path / "a")


def test_one_problem_is_independent_of_the_others(tmp_path):
    alone = generate_split(tmp_path, seed=0, domains=["barman"], levels=["hard"], per_level=2)
    assert [p.name for p in alone] == ["hard-01.pddl", "hard-02.pddl"]
    assert alone[1].read_text() == generate_problem("barman", "hard", 2, seed=0).text


def test_shipped_split_equals_a_fresh_generation(tmp_path):
    """The files in the repository are exactly what `scripts/generate_problems.py` writes by default."""
    generate_split(tmp_path)
    for domain in DOMAINS:
        shipped = REPO_DOMAINS / domain / "problems" / SPLIT
        fresh = tmp_path / domain / "problems" / SPLIT
        assert _tree(shipped) == _tree(fresh), f"{shipped} drifted; rerun scripts/generate_problems.py"
        assert sorted(get_domain(domain).problems(SPLIT)) == sorted(NAMES)


def test_rerun_removes_stale_files_of_the_levels_written(tmp_path):
    generate_split(tmp_path, domains=["gripper"], per_level=3)
    (tmp_path / "gripper" / "problems" / SPLIT / "mine.pddl").write_text("(define (problem x))")
    generate_split(tmp_path, domains=["gripper"], levels=["easy"], per_level=1)
    left = sorted(p.stem for p in (tmp_path / "gripper" / "problems" / SPLIT).glob("*.pddl"))
    assert left == ["easy-01", "hard-01", "hard-02", "hard-03", "medium-01", "medium-02", "medium-03", "mine"]


def test_header_names_generator_seed_and_parameters():
    text = generate_problem("tyreworld", "medium", 4, seed=11).text
    lines = text.splitlines()
    assert lines[0].startswith(HEADER_MARK)
    assert lines[1] == "; seed=11 domain=tyreworld level=medium index=4"
    assert lines[2].startswith("; parameters: hubs=2 ")


@pytest.mark.parametrize("n", [1, 2, 3])
def test_random_towers_is_uniform(n):
    """All 1, 3 and 13 states of 1-3 blocks appear about equally often."""
    import random

    rng = random.Random(0)
    counts: dict[frozenset, int] = {}
    draws = 6500
    for _ in range(draws):
        state = frozenset(tuple(t) for t in random_towers([f"b{i}" for i in range(n)], rng))
        counts[state] = counts.get(state, 0) + 1
    assert len(counts) == {1: 1, 2: 3, 3: 13}[n]
    expected = draws / len(counts)
    assert all(abs(c - expected) < 0.2 * expected for c in counts.values())


# --------------------------------------------------------------------------------------------------
# The shipped files, read as tasks.


def _tasks(domain: str):
    d = get_domain(domain)
    return {name: d.load(name, SPLIT) for name in d.problems(SPLIT)}


def _in_level(domain: str, name: str, size: int) -> None:
    level, index = name.split("-")
    lo, hi = SIZES[domain][level]
    assert lo <= size <= hi, (domain, name, size)
    assert size == problem_size(domain, level, int(index))


def test_sizes_and_shape_blocksworld():
    for name, task in _tasks("blocksworld").items():
        blocks = [o for o, _ in task.objects]
        assert blocks == [f"b{i}" for i in range(1, len(blocks) + 1)]
        _in_level("blocksworld", name, len(blocks))
        on = {a for p, a in task.init if p == "on"}
        table = {a[0] for p, a in task.init if p == "on-table"}
        assert len(on) + len(table) == len(blocks) and ("arm-empty", ()) in task.init
        assert task.goal and all(p == "on" and positive for p, _, positive in task.goal)
        assert not all(args in on for _, args, _ in task.goal), f"{name}: goal holds initially"


def test_sizes_and_shape_gripper():
    for name, task in _tasks("gripper").items():
        balls = sorted(a[0] for p, a in task.init if p == "ball")
        _in_level("gripper", name, len(balls))
        assert {a for p, a in task.init if p == "at"} == {(b, "rooma") for b in balls}
        assert sorted(task.goal) == sorted(("at", (b, "roomb"), True) for b in balls)


def test_sizes_and_shape_tyreworld():
    for name, task in _tasks("tyreworld").items():
        hubs = task.objects_of("hub")
        _in_level("tyreworld", name, len(hubs))
        assert sorted(task.objects_of("tool")) == ["jack", "pump", "wrench"]
        for i in range(1, len(hubs) + 1):
            assert {("on", (f"w{i}", f"the-hub{i}")), ("in", (f"r{i}", "boot"))} <= task.init
        allowed = {
            g
            for i in range(1, len(hubs) + 1)
            for g in [("on", (f"r{i}", f"the-hub{i}")), ("inflated", (f"r{i}",)), ("in", (f"w{i}", "boot"))]
        }
        assert task.goal and all((p, a) in allowed and positive for p, a, positive in task.goal)


def test_sizes_and_shape_barman():
    for name, task in _tasks("barman").items():
        level = name.split("-")[0]
        shots = task.objects_of("shot")
        _in_level("barman", name, len(task.goal))
        assert len(shots) == len(task.goal) + 1
        assert len(task.objects_of("ingredient")) == 3
        first = {a[0]: a[1] for p, a in task.init if p == "cocktail-part1"}
        second = {a[0]: a[1] for p, a in task.init if p == "cocktail-part2"}
        recipes = {c: (first[c], second[c]) for c in task.objects_of("cocktail")}
        assert all(a != b for a, b in recipes.values())
        assert len(set(recipes.values())) == len(recipes)  # distinct ordered pairs
        served = [a[1] for _, a, _ in task.goal if a[1].startswith("cocktail")]
        max_distinct, max_shots = BARMAN_GOAL_LIMITS[level]
        assert len(set(served)) <= max_distinct and len(served) <= max_shots
        assert len({a[0] for _, a, _ in task.goal}) == len(task.goal)  # one beverage per shot


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_problem_loads_in_the_env(domain):
    env = gym.make(f"pddlworlds/{domain.capitalize()}-v0", split=SPLIT)
    assert sorted(env.unwrapped.problem_names) == sorted(NAMES)
    obs, info = env.reset(options={"problem": "hard-01"})
    assert info["problem"] == "hard-01" and info["split"] == SPLIT and obs
    for name in NAMES:
        _, info = env.reset(options={"problem": name})
        assert not info["success"]


# --------------------------------------------------------------------------------------------------
# Solvability, with Fast Downward (satisficing) through unified-planning.


def _solve(domain: str, name: str) -> int:
    from unified_planning.engines import PlanGenerationResultStatus as Status

    domain_file = REPO_DOMAINS / domain / "domain.pddl"
    problem = read_up_problem(domain_file, REPO_DOMAINS / domain / "problems" / SPLIT / f"{name}.pddl")
    # Fast Downward's driver writes `output.sas` in the working directory: a directory of its own, so that a
    # planner run by the other test worker at the same time cannot overwrite or delete it
    with (
        tempfile.TemporaryDirectory(prefix="fd-") as cwd,
        contextlib.chdir(cwd),
        problem.environment.factory.OneshotPlanner(name="fast-downward") as planner,
    ):
        result = planner.solve(problem, timeout=60)
    solved = (Status.SOLVED_SATISFICING, Status.SOLVED_OPTIMALLY)
    assert result.status in solved, (domain, name, result.status)
    # the plan reaches the goal in the project's own model, too
    task = load_task(domain_file, REPO_DOMAINS / domain / "problems" / SPLIT / f"{name}.pddl")
    state = set(task.init)
    schemas = {s.name: s for s in task.schemas}
    for action in result.plan.actions:
        schema = schemas[action.action.name]
        args = [str(p) for p in action.actual_parameters]

        def ground(lit, args=args):
            return lit.predicate, tuple(args[x] if isinstance(x, int) else x for x in lit.args)

        assert all((ground(l) in state) == l.positive for l in schema.preconditions), (name, action)
        state -= {ground(l) for l in schema.delete}
        state |= {ground(l) for l in schema.add}
    assert all(((p, a) in state) == positive for p, a, positive in task.goal), (domain, name)
    return len(result.plan.actions)


@pytest.mark.parametrize("domain", DOMAINS)
def test_solvable_sample(domain):
    assert _solve(domain, "hard-01") > 0


@pytest.mark.slow
@pytest.mark.parametrize("domain", DOMAINS)
def test_solvable_all(domain):
    """Every shipped generated problem has a plan (10-15 s per domain; deselect with -m 'not slow')."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in NAMES:
            _solve(domain, name)


def test_a_new_domain_is_one_registry_entry(tmp_path, monkeypatch):
    """A generator registered in `GENERATORS` (what a new domain module adds) is used by name, and only by name."""
    from pddlworlds import generators

    def build(rng, size, name, level):
        return f"(define (problem {name}) ; {level} {size} {rng.randint(0, 9)}\n)\n", {"things": size}

    toy = generators.DomainGenerator("toy", {"easy": (1, 2), "medium": (3, 3), "hard": (4, 4)},
                                     lambda n, level, index: f"toy-{n}-{level}-{index}", build)
    monkeypatch.setitem(generators.GENERATORS, "toy", toy)
    monkeypatch.setitem(generators.SIZES, "toy", toy.sizes)
    problem = generate_problem("toy", "easy", 2, seed=5)
    assert problem.parameters == {"things": 2}
    assert problem.text.startswith(HEADER_MARK) and "(define (problem toy-2-easy-2)" in problem.text
    assert problem.text == generate_problem("toy", "easy", 2, seed=5).text
    written = generate_split(tmp_path, seed=5, domains=["toy"], levels=["easy"], per_level=2)
    assert [p.name for p in written] == ["easy-01.pddl", "easy-02.pddl"]
    assert written[1].read_text() == problem.text
    with pytest.raises(ValueError, match="unknown domain 'nope'"):
        generate_problem("nope", "easy", 1)
