"""What a problem is made of, measured from its parsed task: the properties a generator family is compared
on with the public problems (sizes, initial arrangement, goal form).

One function per domain turns a `LiftedTask` into a flat dict of numbers and short strings, so that the
public problems and any drawn ones are measured by the same code (`scripts/measure_public_problems.py`
prints the public set's; the tests assert that the public-like family draws what it measures).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ..registry import Registry
from ..worlds.catalogue import domains, load_task
from ..worlds.pddl import LiftedTask, normalisation_warnings_ignored

__all__ = ["PROFILES", "Profile", "hub_pattern", "profile_file", "public_profiles"]

Profile = dict[str, object]


def _towers(on: dict[str, str], blocks: list[str]) -> list[int]:
    """Heights of the towers that `on` (block -> block below) builds from `blocks`, tallest first."""
    above = {below: b for b, below in on.items()}
    heights = []
    for b in blocks:
        if b in on:
            continue  # not a bottom block
        height, top = 1, b
        while top in above:
            top, height = above[top], height + 1
        heights.append(height)
    return sorted(heights, reverse=True)


def _blocksworld(task: LiftedTask) -> Profile:
    blocks = sorted(task.objects_of("object")) or sorted(o for o, _ in task.objects)
    init_on = {a[0]: a[1] for n, a in task.init if n == "on"}
    goal_on = {a[0]: a[1] for n, a, _ in task.goal if n == "on"}
    predicates = sorted({n for n, _, _ in task.goal})
    return {
        "blocks": len(blocks),
        "init_towers": len(_towers(init_on, blocks)),
        "init_tallest": max(_towers(init_on, blocks)),
        "goal_predicates": ",".join(predicates),
        "goal_atoms": len(task.goal),
        "goal_towers": len(_towers(goal_on, blocks)),  # blocks not under or on another in the goal stand alone
        "goal_blocks_named": len({b for pair in goal_on.items() for b in pair}),
        "goal_true_at_start": sum(init_on.get(b) == u for b, u in goal_on.items()),
    }


def _gripper(task: LiftedTask) -> Profile:
    balls = sorted(a[0] for n, a in task.init if n == "ball")
    start = {a[0]: a[1] for n, a in task.init if n == "at"}
    end = {a[0]: a[1] for n, a, _ in task.goal if n == "at"}
    robby = next(a[0] for n, a in task.init if n == "at-robby")
    in_robbys_room = sum(start[b] == robby for b in balls)
    return {
        "balls": len(balls),
        "robby": robby,
        "balls_in_rooma": sum(start[b] == "rooma" for b in balls),
        "balls_in_robbys_room": in_robbys_room,
        "goal_atoms": len(task.goal),
        "to_carry": sum(b in end and end[b] != start[b] for b in balls),
        "goal_true_at_start": sum(b in end and end[b] == start[b] for b in balls),
    }


def hub_pattern(goal: set[tuple[str, tuple[str, ...]]], hub: str, wheel: str, spare: str) -> str:
    """A hub's goal conjuncts as a word: `on+inflated+in` (the full swap), `inflated`, `in`, `on+in`...,
    or `none`; `spare` is the wheel to put on, `wheel` the flat one to put away."""
    parts = [("on", ("on", (spare, hub))), ("inflated", ("inflated", (spare,))), ("in", ("in", (wheel, "boot")))]
    words = [word for word, atom in parts if atom in goal]
    return "+".join(words) or "none"


def _tyreworld(task: LiftedTask) -> Profile:
    hubs = sorted(task.objects_of("hub"), key=lambda h: int(h.removeprefix("the-hub")))
    goal = {(n, tuple(a)) for n, a, _ in task.goal}
    patterns = [hub_pattern(goal, h, f"w{h.removeprefix('the-hub')}", f"r{h.removeprefix('the-hub')}") for h in hubs]
    counts = Counter(patterns)
    started = [("open", ("isopen", ("boot",)))]
    started += [("inflated", ("inflated", (f"r{h.removeprefix('the-hub')}",))) for h in hubs]
    started += [("loose", ("loose", (f"nuts{h.removeprefix('the-hub')}", h))) for h in hubs]
    changed = Counter(word for word, fact in started if fact in task.init)
    return {
        "hubs": len(hubs),
        "hubs_with_goal": sum(p != "none" for p in patterns),
        "full_hubs": counts["on+inflated+in"],
        "goal_atoms": len(task.goal),
        "goal": "full" if counts["on+inflated+in"] == len(hubs) else "partial",
        "patterns": " ".join(patterns),
        # what differs from the usual start (boot closed, spares not inflated, nuts tight): `open`,
        # `inflated`, `loose`, with counts, or `usual`
        "start": " ".join(f"{w}" if n == 1 else f"{w}x{n}" for w, n in sorted(changed.items())) or "usual",
    }


def _barman(task: LiftedTask) -> Profile:
    shots = task.objects_of("shot")
    goal = [(a[0], a[1]) for n, a, _ in task.goal if n == "contains"]
    cocktails = [b for _, b in goal if b.startswith("cocktail")]
    recipes = {}
    for n, a in task.init:
        if n in ("cocktail-part1", "cocktail-part2"):
            recipes.setdefault(a[0], {})[n] = a[1]
    goal_shots = [int(s.removeprefix("shot")) for s, _ in goal]
    standard_start = all(
        fact in task.init for s in ["shaker1", *shots] for fact in (("ontable", (s,)), ("clean", (s,)), ("empty", (s,)))
    ) and all(("handempty", (h,)) in task.init for h in ("left", "right"))
    kind = f"{len(set(cocktails))}c{len(cocktails)}+{len(goal) - len(cocktails)}i"
    return {
        "shots": len(shots),
        "cocktails": len(task.objects_of("cocktail")),
        "ingredients": len(task.objects_of("ingredient")),
        "distinct_recipes": len({(r["cocktail-part1"], r["cocktail-part2"]) for r in recipes.values()}),
        "goal_shots": len(goal),
        "cocktail_shots": len(cocktails),
        "distinct_cocktails": len(set(cocktails)),
        "ingredient_shots": len(goal) - len(cocktails),
        "goal_kind": kind,  # <distinct cocktails>c<cocktail shots>+<ingredient shots>i
        "first_shots": goal_shots == list(range(1, len(goal) + 1)),  # shot1, shot2, ... in order
        "standard_start": standard_start,  # all clean, empty, on the table; both hands empty
    }


#: Domain -> the function that measures one of its problems.
PROFILES: Registry[Callable[[LiftedTask], Profile]] = Registry(
    "problem profile",
    {"blocksworld": _blocksworld, "gripper": _gripper, "tyreworld": _tyreworld, "barman": _barman},
    plural="profiles",
)


def profile_file(domain: str, problem_file: str | Path) -> Profile:
    """The profile of one problem file of `domain` (one of the shipped domains)."""
    with normalisation_warnings_ignored():  # the public files' known quirks
        task = load_task(domains()[domain].domain_file, problem_file)
    return PROFILES.get(domain)(task)


def public_profiles(domain: str, split: str = "agentboard") -> dict[str, Profile]:
    """Problem name -> profile, for every problem of a shipped split (default: the public one)."""
    d = domains()[domain]
    return {name: profile_file(domain, d.problem_file(name, split)) for name in d.problems(split)}
