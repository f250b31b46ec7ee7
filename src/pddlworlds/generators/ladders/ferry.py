"""Ferry ladder: locations all reachable from one another, the empty ferry at one of them, cars at random
locations and a goal location for some of them, as in the classic ferry problems.

Parameters: `locations` (`l0`, `l1`, ...; `not-eq` holds of every two different ones), `cars` (`c0`,
`c1`, ..., each at a random location) and `goals` (how many of the cars must end at a location other than
their start). Object names follow the IPC problem files (`l<i>`, `c<i>`).
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    locations = [f"l{i}" for i in range(p["locations"])]
    cars = [f"c{i}" for i in range(p["cars"])]
    init = [f"(location {x})" for x in locations] + [f"(car {c})" for c in cars]
    for i, x in enumerate(locations):
        for y in locations[i + 1:]:
            init += [f"(not-eq {x} {y})", f"(not-eq {y} {x})"]
    init.append("(empty-ferry)")
    starts = {c: rng.choice(locations) for c in cars}
    init += [f"(at {c} {starts[c]})" for c in cars]
    init.append(f"(at-ferry {rng.choice(locations)})")
    goal = [f"(at {c} {rng.choice([x for x in locations if x != starts[c]])})"
            for c in sorted(rng.sample(cars, min(p["goals"], len(cars))))]
    objects = " ".join([*locations, *cars])
    return (f"(define (problem {name}) (:domain ferry)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="ferry",
    bands={
        "easy": {"locations": (2, 4), "cars": (1, 3), "goals": (1, 3)},
        "medium": {"locations": (3, 5), "cars": (4, 6), "goals": (4, 5)},
        "hard": {"locations": (4, 6), "cars": (7, 9), "goals": (7, 9)},
    },
    build=build,
)
