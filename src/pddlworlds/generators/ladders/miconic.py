"""Miconic ladder: a building of floors `f0` (the lowest) to `f<n-1>`, the lift at `f0` as in every AIPS-2000
problem, and passengers each with a floor where they get on and another where they get off; the goal is
that every passenger has reached their floor.

Parameters: `floors` and `passengers` (`p0`, `p1`, ...: each start and destination drawn at random, never
the same floor). `above` holds of every pair of floors, the higher one second, as in the competition's
files. Object names follow the IPC problems (`p<i>`, `f<i>`).
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    floors = [f"f{i}" for i in range(p["floors"])]
    people = [f"p{i}" for i in range(p["passengers"])]
    init = [f"(passenger {x})" for x in people] + [f"(floor {f})" for f in floors]
    init += [f"(above {low} {high})" for i, low in enumerate(floors) for high in floors[i + 1:]]
    for person in people:
        start, end = rng.sample(floors, 2)
        init += [f"(origin {person} {start})", f"(destin {person} {end})"]
    init.append(f"(lift-at {floors[0]})")
    goal = [f"(served {person})" for person in people]
    objects = " ".join([*people, *floors])
    return (f"(define (problem {name}) (:domain miconic)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="miconic",
    bands={
        "easy": {"floors": (2, 4), "passengers": (1, 2)},
        "medium": {"floors": (5, 6), "passengers": (4, 5)},
        "hard": {"floors": (7, 9), "passengers": (8, 10)},
    },
    build=build,
)
