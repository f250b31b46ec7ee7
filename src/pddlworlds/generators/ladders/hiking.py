"""Hiking ladder: couples walking a route of places, tents to pitch ahead of them, and cars to shuttle.

The route is `places` places in a line (`place0` -> `place1` -> ...). There are `couples` couples (`couple0`
of `guy0` and `girl0`, ...), `tents` tents (`tent0`, ...) and `cars` cars (`car0`, ...), named as in the IPC
2014 problems. Unlike the IPC files, where everything starts at `place0` with the tents pitched, the start is
drawn: each couple has walked to a random place of the route (both partners stand there) and must walk
`legs` to `legs_max` further legs (fewer where the route ends first); each tent stands at a random place,
pitched or folded at random; the first car stands where the first couple is, the others at random places.

Parameters: `places`, `couples`, `tents`, `cars`, `legs` and `legs_max` (the least and the most legs a couple
must walk; `legs_max` below `legs` counts as `legs`). A draw that cannot be walked (one car cannot bring its
driver back for a second leg) is refused by the builder. Optimal planning on this domain grows hard fast with
a second couple or tent, so the longer bands keep one couple and one tent and lengthen the route instead.
"""

from __future__ import annotations

import random
from itertools import pairwise

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    places = [f"place{i}" for i in range(p["places"])]
    last = len(places) - 1
    couples = [f"couple{k}" for k in range(p["couples"])]
    tents = [f"tent{k}" for k in range(p["tents"])]
    cars = [f"car{k}" for k in range(p["cars"])]
    people = [person for k in range(p["couples"]) for person in (f"guy{k}", f"girl{k}")]
    init, goal, starts = [], [], []
    for k, couple in enumerate(couples):
        legs = rng.randint(p["legs"], max(p["legs"], p["legs_max"]))
        start = rng.randint(0, max(0, last - legs))
        end = min(last, start + legs)
        starts.append(start)
        init += [f"(partners {couple} guy{k} girl{k})", f"(at_person guy{k} {places[start]})",
                 f"(at_person girl{k} {places[start]})", f"(walked {couple} {places[start]})"]
        goal.append(f"(walked {couple} {places[end]})")
    for tent in tents:
        init += [f"(at_tent {tent} {rng.choice(places)})", f"({rng.choice(('up', 'down'))} {tent})"]
    for i, car in enumerate(cars):
        init.append(f"(at_car {car} {places[starts[0]] if i == 0 else rng.choice(places)})")
    init += [f"(next {a} {b})" for a, b in pairwise(places)]
    objects = (f"{' '.join(cars)} - car {' '.join(tents)} - tent {' '.join(couples)} - couple "
               f"{' '.join(places)} - place {' '.join(people)} - person")
    return (f"(define (problem {name}) (:domain hiking)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="hiking",
    bands={
        "easy": {"places": (2, 4), "couples": (1, 2), "tents": (1, 2), "cars": (1, 2), "legs": (1, 1), "legs_max": (1, 2)},
        "medium": {"places": (3, 5), "couples": (1, 1), "tents": (1, 1), "cars": (2, 2), "legs": (2, 2), "legs_max": (2, 3)},
        "hard": {"places": (5, 6), "couples": (1, 1), "tents": (1, 1), "cars": (2, 2), "legs": (4, 5), "legs_max": (4, 5)},
    },
    build=build,
)
