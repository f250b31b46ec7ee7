"""Barman problems, by goal shots (easy 1-2, medium 3, hard 4-5).

3 ingredients with their dispensers, one shaker, goal shots + 1 shots (as in IPC 2011), one cocktail per
goal shot (at least 2), each made of two distinct ingredients (distinct ordered pairs). Each goal shot
asks for a cocktail (probability 0.6) or a plain ingredient, within `BARMAN_GOAL_LIMITS[level]` (distinct
cocktails, cocktail shots), so that A*+LM-cut proves an optimal plan well within a minute.

`PUBLIC_LIKE` draws as the 20 public problems are made: 3 to 7 cocktails, one shot more than cocktails
up to 5 cocktails and two more from 6 (as every public file has it), each cocktail a random ordered pair
of distinct ingredients (recipes may repeat, as in 9 of the 20 files), the goal shots shot1, shot2, ... in
15 of 20 problems and a random choice of shots otherwise. The levels are the public goal kinds, each with
the cocktail counts of its public problems: easy asks 1-3 plain ingredients (4 public problems), medium
one cocktail, alone or with an ingredient (11), hard the closest A*+LM-cut can prove within a minute to
the public two distinct cocktails (5 problems, 23 steps; more than 180 s of LM-cut each):
`BARMAN_PUBLIC_LIKE_GOALS`.
"""

from __future__ import annotations

import random

from .base import DomainGenerator, problem_name

__all__ = [
    "BARMAN_GOAL_LIMITS", "BARMAN_INGREDIENTS", "BARMAN_PUBLIC_LIKE_GOALS", "GENERATOR", "PUBLIC_LIKE",
    "distinct_cocktails_problem",
]

#: Barman, per level: (most distinct cocktails in the goal, most goal shots asking for a cocktail); the
#: other goal shots ask for a plain ingredient. Two distinct cocktails already cost A*+LM-cut 20 s of CPU
#: with three goal shots and minutes with four, so every level serves one cocktail (as most public problems
#: do), in up to two shots from medium on; the levels grow by goal shots.
BARMAN_GOAL_LIMITS = {"easy": (1, 1), "medium": (1, 2), "hard": (1, 2)}
BARMAN_INGREDIENTS = 3

#: Public-like Barman goals per level: (shots of the one cocktail served, plain ingredient shots) -> weight.
#: Easy and medium are the public goal kinds with their public counts; hard stands in for the public two
#: distinct cocktails (23 steps), which A*+LM-cut does not prove in 180 s: one cocktail and more shots, 15-18
#: steps, proved in 7-22 s at the hard level's 5-6 shots (a fourth ingredient shot, 19-20 steps, took
#: 29-67 s there and over 120 s with 9 shots).
BARMAN_PUBLIC_LIKE_GOALS: dict[str, dict[tuple[int, int], int]] = {
    "easy": {(0, 1): 1, (0, 2): 1, (0, 3): 2},
    "medium": {(1, 0): 7, (1, 1): 4},
    "hard": {(2, 3): 2, (1, 3): 1, (2, 2): 1},
}


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

    text = _text(name, shots, ingredients, cocktails, recipes, goal)
    params = {
        "goal_shots": g,
        "shots": n_shots,
        "cocktails": n_cocktails,
        "cocktail_shots": sum(wants_cocktail),
        "distinct_cocktails": len(goal_cocktails),
    }
    return text, params


def _barman_public_like(rng: random.Random, n_cocktails: int, name: str, level: str) -> tuple[str, dict[str, object]]:
    n_shots = n_cocktails + (1 if n_cocktails <= 5 else 2)
    ingredients = [f"ingredient{i}" for i in range(1, BARMAN_INGREDIENTS + 1)]
    pairs = [(a, b) for a in ingredients for b in ingredients if a != b]
    recipes = [rng.choice(pairs) for _ in range(n_cocktails)]
    cocktails = [f"cocktail{i}" for i in range(1, n_cocktails + 1)]
    shots = [f"shot{i}" for i in range(1, n_shots + 1)]
    kinds = {kind: w for kind, w in BARMAN_PUBLIC_LIKE_GOALS[level].items() if sum(kind) <= n_shots}
    cocktail_shots, ingredient_shots = rng.choices(list(kinds), weights=list(kinds.values()))[0]
    g = cocktail_shots + ingredient_shots
    chosen = list(range(1, g + 1)) if rng.random() < 0.75 else rng.sample(range(1, n_shots + 1), g)
    beverages = [rng.choice(cocktails)] * cocktail_shots + [rng.choice(ingredients) for _ in range(ingredient_shots)]
    rng.shuffle(beverages)
    goal = [(f"shot{shot}", beverage) for shot, beverage in zip(chosen, beverages)]
    params = {"cocktails": n_cocktails, "shots": n_shots, "cocktail_shots": cocktail_shots,
              "ingredient_shots": ingredient_shots}
    return _text(name, shots, ingredients, cocktails, recipes, goal), params


def distinct_cocktails_problem(rng: random.Random, n_cocktails: int, served: int, name: str) -> str:
    """The public hard goal kind: `served` goal shots, each a different cocktail, among `n_cocktails`
    cocktails with random recipes (distinct ordered pairs of ingredients while there are enough) and one shot
    more than cocktails, as in the public files. Two distinct cocktails is what the five public 23-step
    problems ask; merge-and-shrink proves those where LM-cut does not (planners/README.md)."""
    ingredients = [f"ingredient{i}" for i in range(1, BARMAN_INGREDIENTS + 1)]
    pairs = [(a, b) for a in ingredients for b in ingredients if a != b]
    recipes = rng.sample(pairs, n_cocktails) if n_cocktails <= len(pairs) else rng.choices(pairs, k=n_cocktails)
    cocktails = [f"cocktail{i}" for i in range(1, n_cocktails + 1)]
    shots = [f"shot{i}" for i in range(1, n_cocktails + 2)]
    chosen = sorted(rng.sample(range(1, len(shots) + 1), served))
    goal = [(f"shot{shot}", cocktail) for shot, cocktail in zip(chosen, rng.sample(cocktails, served))]
    return _text(name, shots, ingredients, cocktails, recipes, goal)


def _text(
    name: str, shots: list[str], ingredients: list[str], cocktails: list[str], recipes: list[tuple[str, str]],
    goal: list[tuple[str, str]],
) -> str:
    """The problem text, laid out as the public files are: everything clean, empty and on the table."""
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
    return "\n".join(lines) + "\n"


GENERATOR = DomainGenerator(
    "barman",
    {"easy": (1, 2), "medium": (3, 3), "hard": (4, 5)},  # goal shots
    lambda n, level, index: f"barman-{problem_name(level, index)}",
    _barman,
)

PUBLIC_LIKE = DomainGenerator(
    "barman",
    {"easy": (3, 7), "medium": (3, 7), "hard": (3, 7)},  # cocktails (shots: one more, two more from 6)
    lambda n, level, index: "prob",
    _barman_public_like,
    # the public problems of each goal kind: cocktails 3, 3, 4, 7 (ingredients only); 3 (4 problems), 4 (3),
    # 5 (2), 6, 7 (one cocktail); 4 (3), 5 (2) (two cocktails)
    size_weights={"easy": {3: 2, 4: 1, 7: 1}, "medium": {3: 4, 4: 3, 5: 2, 6: 1, 7: 1}, "hard": {4: 3, 5: 2}},
)
