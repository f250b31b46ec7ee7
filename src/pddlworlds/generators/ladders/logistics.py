"""Logistics ladder: cities of a few places each (one of them an airport), one truck per city, airplanes at
airports, packages at random places, and a goal place for some of them.

Parameters: `cities`, `places` per city (the airport included), `airplanes`, `packages`, and `goals` (how
many of the packages must end somewhere; each goal place differs from the package's start). Object names
follow the IPC 2000 problems: `cit<i>`, `apt<i>` (the airport of city i), `pos<i>-<j>`, `tru<i>`, `apn<k>`,
`obj<k>`.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    cities = [f"cit{i}" for i in range(1, p["cities"] + 1)]
    places = {c: [f"apt{i}"] + [f"pos{i}-{j}" for j in range(1, p["places"])] for i, c in enumerate(cities, 1)}
    trucks = [f"tru{i}" for i in range(1, len(cities) + 1)]
    planes = [f"apn{k}" for k in range(1, p["airplanes"] + 1)]
    packages = [f"obj{k}" for k in range(1, p["packages"] + 1)]
    every_place = [x for c in cities for x in places[c]]
    airports = [places[c][0] for c in cities]
    init = [f"(city {c})" for c in cities]
    for c in cities:
        init += [f"(location {x})" for x in places[c]] + [f"(in-city {x} {c})" for x in places[c]]
        init.append(f"(airport {places[c][0]})")
    for c, t in zip(cities, trucks):
        init += [f"(truck {t})", f"(at {t} {rng.choice(places[c])})"]
    for a in planes:
        init += [f"(airplane {a})", f"(at {a} {rng.choice(airports)})"]
    starts = {o: rng.choice(every_place) for o in packages}
    init += [f"(package {o})" for o in packages] + [f"(at {o} {starts[o]})" for o in packages]
    goal = []
    for o in sorted(rng.sample(packages, min(p["goals"], len(packages)))):
        goal.append(f"(at {o} {rng.choice([x for x in every_place if x != starts[o]])})")
    objects = " ".join([*cities, *every_place, *trucks, *planes, *packages])
    return (f"(define (problem {name}) (:domain logistics)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="logistics",
    bands={
        "easy": {"cities": (2, 2), "places": (1, 2), "airplanes": (1, 1), "packages": (1, 3), "goals": (1, 2)},
        "medium": {"cities": (2, 3), "places": (2, 3), "airplanes": (1, 1), "packages": (3, 4), "goals": (2, 3)},
        "hard": {"cities": (3, 3), "places": (2, 3), "airplanes": (1, 2), "packages": (4, 6), "goals": (4, 6)},
    },
    build=build,
)
