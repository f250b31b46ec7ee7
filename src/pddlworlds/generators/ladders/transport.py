"""Transport ladder: a road map of places at random points, trucks with room for a few packages, and
packages to carry to other places, drawn as the IPC 2008 generator draws its city maps but smaller.

Parameters: `nodes` (places, at random whole-number points of a square of side `size`), `degree` (roads
each place gets to its nearest others, beside the roads that make the map connected; every road goes both
ways), `trucks` (each at a random place, with room for 2 to 4 packages), `packages` (each at a random place,
bound for a random other place). A road's length, what driving it costs, is its straight-line length over
ten, rounded up (at least 1); picking up and dropping cost 1. Object names are the IPC's: `city-loc-<i>`,
`truck-<k>`, `package-<k>` and `capacity-0` ... `capacity-4`.
"""

from __future__ import annotations

import itertools
import math
import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def _roads(points: list[tuple[int, int]], degree: int) -> list[tuple[int, int]]:
    """Road pairs (i < j): each place joined to its nearest place among those before it (a connected map),
    then to its `degree` nearest places."""
    def dist(i: int, j: int) -> float:
        return math.dist(points[i], points[j])

    pairs: list[tuple[int, int]] = []
    for j in range(1, len(points)):
        i = min(range(j), key=lambda k: (dist(k, j), k))
        pairs.append((i, j))
    for i in range(len(points)):
        for j in sorted((k for k in range(len(points)) if k != i), key=lambda k: (dist(i, k), k))[:degree]:
            pair = (min(i, j), max(i, j))
            if pair not in pairs:
                pairs.append(pair)
    return sorted(pairs)


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    n = p["nodes"]
    points: list[tuple[int, int]] = []
    while len(points) < n:  # distinct points
        point = (rng.randint(0, p["size"]), rng.randint(0, p["size"]))
        if point not in points:
            points.append(point)
    places = [f"city-loc-{i}" for i in range(1, n + 1)]
    trucks = [f"truck-{k}" for k in range(1, p["trucks"] + 1)]
    packages = [f"package-{k}" for k in range(1, p["packages"] + 1)]
    capacities = [f"capacity-{c}" for c in range(5)]
    init = ["(= (total-cost) 0)"] + [f"(capacity-predecessor {a} {b})" for a, b in itertools.pairwise(capacities)]
    for i, j in _roads(points, p["degree"]):
        length = max(1, math.ceil(math.dist(points[i], points[j]) / 10))
        for a, b in ((i, j), (j, i)):
            init += [f"(road {places[a]} {places[b]})", f"(= (road-length {places[a]} {places[b]}) {length})"]
    goal = []
    for package in packages:
        start = rng.randrange(n)
        init.append(f"(at {package} {places[start]})")
        goal.append(f"(at {package} {places[rng.choice([i for i in range(n) if i != start])]})")
    for truck in trucks:
        init += [f"(at {truck} {rng.choice(places)})", f"(capacity {truck} capacity-{rng.randint(2, 4)})"]
    objects = (" ".join(f"{x} - location" for x in places) + " " + " ".join(f"{x} - vehicle" for x in trucks)
               + " " + " ".join(f"{x} - package" for x in packages) + " "
               + " ".join(f"{x} - capacity-number" for x in capacities))
    return (f"(define (problem {name}) (:domain transport)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)}))\n"
            "  (:metric minimize (total-cost)))\n")


GENERATOR = LadderGenerator(
    world="transport",
    bands={
        "easy": {"nodes": (3, 4), "size": (30, 40), "degree": (1, 2), "trucks": (1, 1), "packages": (1, 1)},
        "medium": {"nodes": (4, 5), "size": (40, 50), "degree": (1, 2), "trucks": (1, 2), "packages": (2, 2)},
        "hard": {"nodes": (5, 7), "size": (60, 80), "degree": (1, 2), "trucks": (1, 2), "packages": (3, 4)},
    },
    build=build,
)
