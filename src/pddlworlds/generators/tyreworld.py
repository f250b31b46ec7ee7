"""Tyreworld problems, by hubs (easy 1, medium 2, hard 3).

A flat tyre w_i on every hub, its spare r_i in the closed boot with the tools. The goal is either the
full one (r_i on the hub, inflated, w_i in the boot for every hub) or, as in some public problems, a
random non-empty subset of those conjuncts.

`PUBLIC_LIKE` draws as the 10 public problems are made, its levels being their goal kinds. A hub's goal is
one of the patterns the public goals use: the full swap (`on+inflated+in`: spare on the hub, inflated,
flat tyre in the boot), `inflated` (the spare, inflated where it lies), `in` (the flat tyre put away),
`on+in`, or none. Six public goals mix patterns hub by hub (weights: inflated 6, in 6, none 3, full 1,
on+in 1, as those six have them): easy draws such goals on 1-3 hubs (p05-p08, p10), medium on 4 (p09);
one in three of them starts with some of the usual start changed (boot open, spares inflated, nuts loose),
as p05 and p08 do.
Four ask the full swap of some hubs and nothing of the others (p01, p03, p04 of all their 1, 3, 4 hubs,
p02 of 2 of its 9): hard draws those, every hub of 1-3, 2 or 3 hubs of 4-5, 2 of 6 (`TYREWORLD_FULL_HUBS`:
a full swap of 4 hubs, p04's 39 steps, takes A*+LM-cut more than a minute, and 3 of 9 hubs more than 120
s). Up to renaming that is one problem per count of hubs and of swaps: 8 in all, p01 and p03 among them.
"""

from __future__ import annotations

import random

from .base import DomainGenerator, problem_name

__all__ = ["GENERATOR", "PUBLIC_LIKE", "TYREWORLD_FULL_HUBS"]


#: The most hubs a public-like goal asks the full swap of: 3 hubs (30 steps) take A*+LM-cut seconds, 4 hubs
#: (39 steps, public p04) more than a minute; with more hubs than that, 2 or 3 of them are swapped.
TYREWORLD_FULL_HUBS = 3

#: A hub's goal conjuncts by pattern name (hub i, spare ri, flat tyre wi).
_PATTERNS = {
    "on+inflated+in": ("(on r{i} the-hub{i})", "(inflated r{i})", "(in w{i} boot)"),
    "inflated": ("(inflated r{i})",),
    "in": ("(in w{i} boot)",),
    "on+in": ("(on r{i} the-hub{i})", "(in w{i} boot)"),
    "none": (),
}
#: Patterns of the public goals that mix them (p05-p10), by how many hubs have each there.
_MIXED_WEIGHTS = {"inflated": 6, "in": 6, "none": 3, "on+inflated+in": 1, "on+in": 1}


def _tyreworld(rng: random.Random, n: int, name: str, level: str) -> tuple[str, dict[str, object]]:
    full = rng.random() < 0.5
    goal: list[str] = []
    for i in range(1, n + 1):
        conjuncts = [f"(on r{i} the-hub{i})", f"(inflated r{i})", f"(in w{i} boot)"]
        goal += conjuncts if full else [c for c in conjuncts if rng.random() < 0.5]
    if not goal:
        i = rng.randint(1, n)
        goal = [rng.choice([f"(on r{i} the-hub{i})", f"(inflated r{i})", f"(in w{i} boot)"])]
    params = {"hubs": n, "goal": "full" if full else "partial", "goal_atoms": len(goal)}
    return _text(name, n, goal), params


def _tyreworld_public_like(rng: random.Random, n: int, name: str, level: str) -> tuple[str, dict[str, object]]:
    full = level == "hard"
    if full:
        swapped = n if n <= TYREWORLD_FULL_HUBS else rng.randint(2, TYREWORLD_FULL_HUBS) if n <= 5 else 2
        chosen = set(rng.sample(range(1, n + 1), swapped))
        patterns = ["on+inflated+in" if i in chosen else "none" for i in range(1, n + 1)]
    else:
        while True:
            patterns = rng.choices(list(_MIXED_WEIGHTS), weights=list(_MIXED_WEIGHTS.values()), k=n)
            if any(p != "none" for p in patterns) and patterns.count("on+inflated+in") <= TYREWORLD_FULL_HUBS:
                break
    started = frozenset() if full or rng.random() >= 1 / 3 else frozenset(_started(rng, n))
    goal = [c.format(i=i) for i, p in enumerate(patterns, start=1) for c in _PATTERNS[p]]
    params = {"hubs": n, "goal": "full" if full else "mixed", "patterns": "/".join(patterns), "goal_atoms": len(goal),
              "start": "+".join(sorted(started)) or "usual"}
    return _text(name, n, goal, started), params


def _started(rng: random.Random, n: int) -> set[str]:
    """Changes to the usual start, as 2 of the 6 public mixed goals have them (p05: boot open, spare
    inflated, nuts loose; p08: one spare inflated): `open`, `inflated<i>`, `loose<i>`; at least one."""
    while True:
        changes = {"open"} if rng.random() < 0.5 else set()
        changes |= {f"inflated{i}" for i in range(1, n + 1) if rng.random() < 0.4}
        changes |= {f"loose{i}" for i in range(1, n + 1) if rng.random() < 0.3}
        if changes:
            return changes


def _text(name: str, n: int, goal: list[str], started: frozenset[str] = frozenset()) -> str:
    """The problem text; `started` names the facts of the usual start that are changed (`_started`)."""
    hubs = range(1, n + 1)
    lines = [f"(define (problem {name})", "(:domain tyreworld)", "(:objects ", "wrench jack pump - tool"]
    lines.append(" ".join(f"the-hub{i}" for i in hubs) + " - hub")
    lines.append(" ".join(f"nuts{i}" for i in hubs) + " - nut")
    lines.append("boot - container")
    lines.append(" ".join(f"r{i} w{i}" for i in hubs) + " - wheel")
    lines += [")", "(:init", "(in jack boot)", "(in pump boot)", "(in wrench boot)", "(unlocked boot)",
              "(isopen boot)" if "open" in started else "(closed boot)"]
    for i in hubs:
        inflated = f"(inflated r{i})" if f"inflated{i}" in started else f"(not-inflated r{i})"
        lines += [f"(intact r{i})", f"(in r{i} boot)", inflated]
    for i in hubs:
        nuts = f"(loose nuts{i} the-hub{i})" if f"loose{i}" in started else f"(tight nuts{i} the-hub{i})"
        lines += [f"(on w{i} the-hub{i})", f"(on-ground the-hub{i})", nuts, f"(fastened the-hub{i})"]
    lines += [")", "(:goal", "(and", *goal, ")", ")", ")"]
    return "\n".join(lines) + "\n"


GENERATOR = DomainGenerator(
    "tyreworld",
    {"easy": (1, 1), "medium": (2, 2), "hard": (3, 3)},  # hubs (= flat tyres)
    lambda n, level, index: f"tyreworld-{n}-{problem_name(level, index)}",
    _tyreworld,
)

PUBLIC_LIKE = DomainGenerator(
    "tyreworld",
    {"easy": (1, 3), "medium": (4, 4), "hard": (1, 6)},  # hubs
    lambda n, level, index: f"tyreworld-{n}",
    _tyreworld_public_like,
    # mixed goals: 1 hub in 1 public problem, 3 in 4, 4 in 1 (2 hubs added: 1 hub has only 4 such problems);
    # full swaps: 1, 3, 4 and 9 hubs (a full swap of a 2-hub, 3-hub problem is a single problem each)
    size_weights={"easy": {1: 1, 2: 1, 3: 4}, "medium": {4: 1}, "hard": {1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 1}},
)
