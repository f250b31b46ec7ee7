"""No Mystery ladder: one truck, a small weighted map, packages to carry, and a fuel supply that is only just
enough, drawn the way the IPC 2011 generator draws its problems.

Parameters: `nodes` (places), `extra` (roads beyond a random spanning tree, between random unjoined pairs;
every road goes both ways), `weight` (each road's fuel cost is drawn from 1..weight), `packages` (each at a
random place, bound for a random other place), and `slack` (the fuel supply in tenths of the least fuel any
plan needs: 10 gives exactly the minimum, 15 half as much again). The minimum is computed here by a
shortest-path search over the truck's place and each package's progress (the truck has no capacity limit),
as the competition's generator computes it with its own optimal solver. The truck starts at a random place.
Fuel amounts are objects `level0` ... `level<supply>` (or up to the dearest road's cost, if higher); the table of sums lists only the sums a drive can
use (a road's cost subtracted from an amount of fuel), which is all the model reads. Object names are the
IPC's: `l<i>`, `t0`, `p<k>`, `level<n>`.
"""

from __future__ import annotations

import heapq
import math
import random

from .base import LadderGenerator

__all__ = ["GENERATOR", "least_fuel"]


def least_fuel(n: int, roads: dict[tuple[int, int], int], truck: int, packages: list[tuple[int, int]]) -> int:
    """The least total fuel that delivers every package (origin, destination) starting from `truck`.

    Dijkstra over (truck place, each package 0 waiting / 1 aboard / 2 delivered); loading and unloading are
    free in fuel, so they happen whenever the truck is at the right place."""
    adjacent: dict[int, list[tuple[int, int]]] = {i: [] for i in range(n)}
    for (a, b), w in sorted(roads.items()):
        adjacent[a].append((b, w))

    def settle(place: int, status: tuple[int, ...]) -> tuple[int, ...]:
        out = list(status)
        for k, (origin, destination) in enumerate(packages):
            if out[k] == 1 and destination == place:
                out[k] = 2
            if out[k] == 0 and origin == place:
                out[k] = 2 if destination == place else 1
        return tuple(out)

    start = (truck, settle(truck, tuple(0 for _ in packages)))
    best = {start: 0}
    queue = [(0, start)]
    while queue:
        fuel, (place, status) = heapq.heappop(queue)
        if fuel > best[(place, status)]:
            continue
        if all(s == 2 for s in status):
            return fuel
        for there, w in adjacent[place]:
            state = (there, settle(there, status))
            if fuel + w < best.get(state, math.inf):
                best[state] = fuel + w
                heapq.heappush(queue, (fuel + w, state))
    raise ValueError("the map is not connected")


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    n = p["nodes"]
    order = rng.sample(range(n), n)
    pairs = [tuple(sorted((order[i], rng.choice(order[:i])))) for i in range(1, n)]
    free = [(a, b) for a in range(n) for b in range(a + 1, n) if (a, b) not in pairs]
    pairs += rng.sample(free, min(p["extra"], len(free)))
    roads: dict[tuple[int, int], int] = {}
    for a, b in sorted(pairs):
        roads[(a, b)] = roads[(b, a)] = rng.randint(1, p["weight"])
    truck = rng.randrange(n)
    packages = []
    for _ in range(p["packages"]):
        origin = rng.randrange(n)
        packages.append((origin, rng.choice([i for i in range(n) if i != origin])))
    supply = math.ceil(least_fuel(n, roads, truck, packages) * p["slack"] / 10)
    levels = [f"level{i}" for i in range(max(supply, *roads.values()) + 1)]  # a road may cost more than the supply
    init = []
    for w in sorted(set(roads.values())):
        init += [f"(sum level{pre - w} level{w} level{pre})" for pre in range(w, supply + 1)]
    for (a, b), w in sorted(roads.items()):
        init += [f"(connected l{a} l{b})", f"(fuelcost level{w} l{a} l{b})"]
    init += [f"(at t0 l{truck})", f"(fuel t0 level{supply})", "(= (total-cost) 0)"]
    init += [f"(at p{k} l{origin})" for k, (origin, _) in enumerate(packages)]
    goal = [f"(at p{k} l{destination})" for k, (_, destination) in enumerate(packages)]
    objects = (f"{' '.join(f'l{i}' for i in range(n))} - location t0 - truck "
               f"{' '.join(f'p{k}' for k in range(len(packages)))} - package {' '.join(levels)} - fuellevel")
    return (f"(define (problem {name}) (:domain transport-strips)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)}))\n"
            "  (:metric minimize (total-cost)))\n")


GENERATOR = LadderGenerator(
    world="nomystery",
    bands={
        "easy": {"nodes": (3, 4), "extra": (0, 1), "weight": (2, 4), "packages": (1, 2), "slack": (10, 15)},
        "medium": {"nodes": (4, 5), "extra": (0, 1), "weight": (2, 4), "packages": (3, 5), "slack": (10, 15)},
        "hard": {"nodes": (7, 8), "extra": (0, 2), "weight": (2, 3), "packages": (7, 8), "slack": (10, 15)},
    },
    build=build,
)
