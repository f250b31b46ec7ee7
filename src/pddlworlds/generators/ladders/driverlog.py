"""DriverLog ladder: road places joined by roads (trucks) and by footpaths through path points (drivers),
drivers and empty trucks at road places, packages with a goal place each, and goal places for some drivers
and trucks, as in the IPC 2002 problems.

Parameters: `locations` (road places `s0`, `s1`, ...), `extra_roads` (roads drawn beyond a random spanning
tree of the places, so every truck can reach every place), `drivers`, `trucks`, `packages` (each must end at
a road place other than its start), `driver_goals` and `truck_goals` (how many drivers and trucks must end
at a given road place). Footpaths form a random spanning tree of the road places, each step through a path
point `p<i>-<j>` between `s<i>` and `s<j>`, so every driver can walk anywhere. Object names follow the IPC
problems: `s<i>`, `p<i>-<j>`, `driver<k>`, `truck<k>`, `package<k>`.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def _tree(rng: random.Random, n: int) -> list[tuple[int, int]]:
    """A random spanning tree of places 0..n-1, as (smaller, larger) pairs."""
    order = list(range(n))
    rng.shuffle(order)
    return sorted(tuple(sorted((order[i], order[rng.randrange(i)]))) for i in range(1, n))


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    n = p["locations"]
    places = [f"s{i}" for i in range(n)]
    roads = _tree(rng, n)
    others = [(i, j) for i in range(n) for j in range(i + 1, n) if (i, j) not in roads]
    roads = sorted(roads + rng.sample(others, min(p["extra_roads"], len(others))))
    footpaths = _tree(rng, n)
    points = [f"p{i}-{j}" for i, j in footpaths]
    drivers = [f"driver{k}" for k in range(1, p["drivers"] + 1)]
    trucks = [f"truck{k}" for k in range(1, p["trucks"] + 1)]
    packages = [f"package{k}" for k in range(1, p["packages"] + 1)]
    init = []
    for d in drivers:
        init += [f"(at {d} {rng.choice(places)})", f"(driver {d})"]
    for t in trucks:
        init += [f"(at {t} {rng.choice(places)})", f"(empty {t})", f"(truck {t})"]
    starts = {}
    for o in packages:
        starts[o] = rng.choice(places)
        init += [f"(at {o} {starts[o]})", f"(obj {o})"]
    init += [f"(location {x})" for x in places + points]
    for (i, j), point in zip(footpaths, points):
        init += [f"(path s{i} {point})", f"(path {point} s{i})",
                 f"(path s{j} {point})", f"(path {point} s{j})"]
    for i, j in roads:
        init += [f"(link s{i} s{j})", f"(link s{j} s{i})"]
    goal = [f"(at {d} {rng.choice(places)})"
            for d in sorted(rng.sample(drivers, min(p["driver_goals"], len(drivers))))]
    goal += [f"(at {t} {rng.choice(places)})"
             for t in sorted(rng.sample(trucks, min(p["truck_goals"], len(trucks))))]
    goal += [f"(at {o} {rng.choice([x for x in places if x != starts[o]])})" for o in packages]
    objects = " ".join([*drivers, *trucks, *packages, *places, *points])
    return (f"(define (problem {name}) (:domain driverlog)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="driverlog",
    bands={
        "easy": {"locations": (2, 3), "extra_roads": (0, 1), "drivers": (1, 1), "trucks": (1, 1),
                 "packages": (1, 2), "driver_goals": (0, 0), "truck_goals": (0, 1)},
        "medium": {"locations": (3, 4), "extra_roads": (0, 2), "drivers": (1, 2), "trucks": (1, 2),
                   "packages": (2, 3), "driver_goals": (1, 2), "truck_goals": (0, 1)},
        "hard": {"locations": (4, 6), "extra_roads": (0, 1), "drivers": (1, 1), "trucks": (1, 2),
                 "packages": (4, 5), "driver_goals": (1, 2), "truck_goals": (1, 2)},
    },
    build=build,
)
