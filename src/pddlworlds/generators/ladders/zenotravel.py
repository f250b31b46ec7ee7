"""Zenotravel ladder: aircraft and people in cities, seven fuel levels `fl0` < ... < `fl6` as in every IPC
2002 problem, each aircraft with a random fuel level, a goal city for some people and some aircraft.

Parameters: `cities`, `aircraft`, `people` (each at a random city), `goals` (how many people must end in a
city other than their start) and `plane_goals` (how many aircraft must end in a given city). Object names
follow the IPC problems: `city<i>` from 0, `plane<k>` and `person<k>` from 1, `fl0`..`fl6`.
"""

from __future__ import annotations

import itertools
import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]

LEVELS = [f"fl{i}" for i in range(7)]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    cities = [f"city{i}" for i in range(p["cities"])]
    planes = [f"plane{k}" for k in range(1, p["aircraft"] + 1)]
    people = [f"person{k}" for k in range(1, p["people"] + 1)]
    init = []
    for plane in planes:
        init += [f"(at {plane} {rng.choice(cities)})", f"(aircraft {plane})",
                 f"(fuel-level {plane} {rng.choice(LEVELS)})"]
    starts = {}
    for person in people:
        starts[person] = rng.choice(cities)
        init += [f"(at {person} {starts[person]})", f"(person {person})"]
    init += [f"(city {c})" for c in cities]
    init += [f"(next {a} {b})" for a, b in itertools.pairwise(LEVELS)] + [f"(flevel {x})" for x in LEVELS]
    goal = [f"(at {plane} {rng.choice(cities)})"
            for plane in sorted(rng.sample(planes, min(p["plane_goals"], len(planes))))]
    goal += [f"(at {person} {rng.choice([c for c in cities if c != starts[person]])})"
             for person in sorted(rng.sample(people, min(p["goals"], len(people))))]
    objects = " ".join([*planes, *people, *cities, *LEVELS])
    return (f"(define (problem {name}) (:domain zeno-travel)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="zenotravel",
    bands={
        "easy": {"cities": (2, 3), "aircraft": (1, 1), "people": (1, 2), "goals": (1, 2),
                 "plane_goals": (0, 1)},
        "medium": {"cities": (3, 4), "aircraft": (1, 2), "people": (3, 5), "goals": (3, 5),
                   "plane_goals": (0, 1)},
        "hard": {"cities": (6, 7), "aircraft": (1, 1), "people": (7, 7), "goals": (7, 7),
                 "plane_goals": (0, 0)},
    },
    build=build,
)
