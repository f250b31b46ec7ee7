"""Barman problems, by goal shots (easy 1-2, medium 3, hard 4-5).

3 ingredients with their dispensers, one shaker, goal shots + 1 shots (as in IPC 2011), one cocktail per
goal shot (at least 2), each made of two distinct ingredients (distinct ordered pairs). Each goal shot
asks for a cocktail (probability 0.6) or a plain ingredient, within `BARMAN_GOAL_LIMITS[level]` (distinct
cocktails, cocktail shots), so that A*+LM-cut proves an optimal plan well within a minute.
"""

from __future__ import annotations

import random

from .base import DomainGenerator, problem_name

__all__ = ["BARMAN_GOAL_LIMITS", "BARMAN_INGREDIENTS", "GENERATOR"]

#: Barman, per level: (most distinct cocktails in the goal, most goal shots asking for a cocktail); the
#: other goal shots ask for a plain ingredient. Two distinct cocktails already cost A*+LM-cut 20 s of CPU
#: with three goal shots and minutes with four, so every level serves one cocktail (as most public problems
#: do), in up to two shots from medium on; the levels grow by goal shots.
BARMAN_GOAL_LIMITS = {"easy": (1, 1), "medium": (1, 2), "hard": (1, 2)}
BARMAN_INGREDIENTS = 3


def _barman(rng: random.Random, g: int, name: str, level: str) -> tuple[str, dict[str, object]]:
    n_shots = g + 1
    n_cocktails = max(2, g)
    ingredients = [f"ingredient{i}" for i in range(1, BARMAN_INGREDIENTS + 1)]
    pairs = [(a, b) for a in ingredients for b in ingredients if a != b]
    if n_cocktails <= len(pairs):
        recipes = rng.sample(pairs, n_cocktails)
    else:  # more cocktails than ordered pairs: recipes repeat
        recipes = rng.choices(pairs, k=n_cocktails)
    cocktails = [f"cocktail{i}" for i in range(1, n_cocktails + 1)]
    shots = [f"shot{i}" for i in range(1, n_shots + 1)]

    goal_shots = sorted(rng.sample(range(1, n_shots + 1), g))
    max_distinct, max_cocktail_shots = BARMAN_GOAL_LIMITS[level]
    wants_cocktail = [rng.random() < 0.6 for _ in range(g)]
    while sum(wants_cocktail) > max_cocktail_shots:  # turn random cocktail shots into ingredient shots
        wants_cocktail[rng.choice([i for i, w in enumerate(wants_cocktail) if w])] = False
    served = rng.sample(cocktails, max_distinct)  # cocktail shots take these in turn: distinct if possible
    goal: list[tuple[str, str]] = []
    served_so_far = 0
    for shot, want in zip(goal_shots, wants_cocktail):
        if want:
            goal.append((f"shot{shot}", served[served_so_far % max_distinct]))
            served_so_far += 1
        else:
            goal.append((f"shot{shot}", rng.choice(ingredients)))
    goal_cocktails = {b for _, b in goal if b.startswith("cocktail")}

    lines = [f"(define (problem {name})", " (:domain barman)", " (:objects "]
    lines += [
        "      shaker1 - shaker",
        "      left right - hand",
        f"      {' '.join(shots)} - shot",
        f"      {' '.join(ingredients)} - ingredient",
        f"      {' '.join(cocktails)} - cocktail",
        f"      {' '.join(f'dispenser{i}' for i in range(1, BARMAN_INGREDIENTS + 1))} - dispenser",
        "      l0 l1 l2 - level",
        ")",
        " (:init ",
    ]
    init = ["(ontable shaker1)", *(f"(ontable {s})" for s in shots)]
    init += [f"(dispenses dispenser{i} ingredient{i})" for i in range(1, BARMAN_INGREDIENTS + 1)]
    init += ["(clean shaker1)", *(f"(clean {s})" for s in shots)]
    init += ["(empty shaker1)", *(f"(empty {s})" for s in shots)]
    init += ["(handempty left)", "(handempty right)", "(shaker-empty-level shaker1 l0)",
             "(shaker-level shaker1 l0)", "(next l0 l1)", "(next l1 l2)"]
    for cocktail, (first, second) in zip(cocktails, recipes):
        init += [f"(cocktail-part1 {cocktail} {first})", f"(cocktail-part2 {cocktail} {second})"]
    lines += ["  " + fact for fact in init]
    lines += [")", " (:goal", "  (and"]
    lines += [f"      (contains {shot} {beverage})" for shot, beverage in goal]
    lines += [")))"]
    params = {
        "goal_shots": g,
        "shots": n_shots,
        "cocktails": n_cocktails,
        "cocktail_shots": sum(wants_cocktail),
        "distinct_cocktails": len(goal_cocktails),
    }
    return "\n".join(lines) + "\n", params


GENERATOR = DomainGenerator(
    "barman",
    {"easy": (1, 2), "medium": (3, 3), "hard": (4, 5)},  # goal shots
    lambda n, level, index: f"barman-{problem_name(level, index)}",
    _barman,
)
