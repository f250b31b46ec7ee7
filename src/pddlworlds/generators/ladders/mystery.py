"""Mystery ladder: the AIPS-98 disguised transport world. Locations (named after foods) joined by two-way
roads, each with a stock of fuel that every departure from it uses up one level of; vehicles (named after
pleasures) with a number of free cargo spaces; cargo (named after pains) at locations, and a goal location for
some of it.

Parameters: `locations`; `roads` (roads beyond a random spanning tree, between distinct locations drawn
uniformly); `fuel` (the fuel levels above empty, named after provinces in alphabetical order from the bottom
up; each location starts with a level drawn from `fuel` - 1 up to `fuel`, and at least 1); `vehicles` (at
locations drawn uniformly); `space` (the space levels above no room left, named after planets in alphabetical
order from the bottom up; each vehicle starts with 1 up to `space` free places); `cargo` (at locations drawn
uniformly); `goals` (how many cargo items, drawn uniformly, must end at a location, other than their start,
drawn uniformly). As in the IPC problems, the objects are common words and their kinds the one-place
predicates `food`, `pleasure`, `pain`, `province` and `planet`.
"""

from __future__ import annotations

import random
from itertools import pairwise

from .base import LadderGenerator

__all__ = ["GENERATOR"]

# Words of the kinds the IPC problems draw their names from.
FOODS = (
    "apple", "arugula", "bacon", "baguette", "beef", "broccoli", "cherry", "chicken", "cod", "cucumber",
    "endive", "flounder", "grapefruit", "guava", "ham", "kale", "lamb", "lemon", "lettuce", "lobster",
    "melon", "muffin", "mutton", "okra", "onion", "orange", "papaya", "pea", "pear", "pepper", "pork",
    "potato", "rice", "scallop", "shrimp", "tofu", "tomato", "tuna", "turkey", "yogurt",
)
PLEASURES = (
    "achievement", "aesthetics", "curiosity", "empathy", "entertainment", "excitement", "expectation",
    "learning", "love", "rest", "satiety", "satisfaction", "stimulation", "triumph", "understanding",
)
PAINS = (
    "abrasion", "anger", "angina", "anxiety", "boils", "depression", "dread", "grief", "hangover", "jealousy",
    "laceration", "loneliness", "prostatitis", "sciatica",
)
PROVINCES = (
    "alsace", "arizona", "bavaria", "bosnia", "goias", "guanabara", "kentucky", "manitoba", "moravia",
    "oregon", "quebec", "surrey",
)
PLANETS = (
    "earth", "jupiter", "mars", "mercury", "neptune", "pluto", "saturn", "uranus", "venus", "vulcan",
)


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    places = rng.sample(FOODS, p["locations"])
    vehicles = rng.sample(PLEASURES, p["vehicles"])
    cargo = rng.sample(PAINS, p["cargo"])
    # levels named in alphabetical order from the bottom up, so that a reader can follow them
    fuel = sorted(rng.sample(PROVINCES, p["fuel"] + 1))  # fuel[0] is empty
    space = sorted(rng.sample(PLANETS, p["space"] + 1))  # space[0] is no room left
    roads: list[tuple[str, str]] = []
    for i in range(1, len(places)):  # a random spanning tree, then extra roads
        roads.append((places[rng.randrange(i)], places[i]))
    pairs = [(a, b) for i, a in enumerate(places) for b in places[i + 1:]]
    for _ in range(p["roads"]):
        a, b = rng.choice(pairs)
        if (a, b) not in roads and (b, a) not in roads:
            roads.append((a, b))
    init = [f"(food {x})" for x in places] + [f"(pleasure {v})" for v in vehicles]
    init += [f"(pain {c})" for c in cargo]
    init += [f"(province {f})" for f in fuel] + [f"(planet {s})" for s in space]
    init += [f"(attacks {a} {b})" for a, b in pairwise(fuel)]
    init += [f"(orbits {a} {b})" for a, b in pairwise(space)]
    for a, b in roads:
        init += [f"(eats {a} {b})", f"(eats {b} {a})"]
    init += [f"(locale {x} {fuel[rng.randint(max(1, p['fuel'] - 1), p['fuel'])]})" for x in places]
    for v in vehicles:
        init += [f"(craves {v} {rng.choice(places)})", f"(harmony {v} {space[rng.randint(1, p['space'])]})"]
    start = {c: rng.choice(places) for c in cargo}
    init += [f"(craves {c} {start[c]})" for c in cargo]
    goal = [f"(craves {c} {rng.choice([x for x in places if x != start[c]])})"
            for c in sorted(rng.sample(cargo, min(p["goals"], len(cargo))), key=cargo.index)]
    objects = " ".join([*places, *vehicles, *cargo, *fuel, *space])
    return (f"(define (problem {name}) (:domain mystery-strips)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="mystery",
    bands={
        "easy": {"locations": (3, 4), "roads": (0, 1), "fuel": (1, 2), "vehicles": (1, 1), "space": (1, 2),
                 "cargo": (1, 2), "goals": (1, 2)},
        "medium": {"locations": (5, 6), "roads": (0, 2), "fuel": (3, 4), "vehicles": (1, 2), "space": (1, 2),
                   "cargo": (3, 3), "goals": (3, 3)},
        "hard": {"locations": (7, 7), "roads": (0, 1), "fuel": (6, 6), "vehicles": (1, 1), "space": (1, 1),
                 "cargo": (5, 5), "goals": (5, 5)},
    },
    build=build,
)
