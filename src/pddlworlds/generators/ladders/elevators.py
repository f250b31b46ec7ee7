"""Elevators ladder: a building cut into blocks, slow elevators serving each block, fast elevators stopping
every half block, and passengers to carry from a floor to another, as the IPC 2008 generator draws them.

Parameters: `blocks` (how many blocks stack up), `half` (half a block's height: a block spans `2*half`
floors above its bottom one, and fast elevators stop at every multiple of `half`), `fast` (fast elevators,
serving the whole building), `slow` (slow elevators per block), `slow_capacity` and `fast_capacity` (how
many passengers one car holds), `passengers` (each on a random floor with a random other floor to
reach) and `ready` (how many elevators start on the floor of a waiting passenger; every other elevator
starts at a random floor it stops at). Every elevator starts empty. Travel costs follow the competition's
problems: a slow trip costs 5 plus the floors travelled, a fast one 1 plus three a floor. Object names are
the IPC's: counts `n0`, `n1`, ... (floors and passenger numbers alike), passengers `p0`, ..., `fast0`,
..., and `slow<block>-<k>`.
"""

from __future__ import annotations

import itertools
import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    block = 2 * p["half"]
    top = p["blocks"] * block
    counts = [f"n{i}" for i in range(max(top, p["slow_capacity"], p["fast_capacity"]) + 1)]
    floors = list(range(top + 1))
    fast = [f"fast{k}" for k in range(p["fast"])]
    slow = [(f"slow{b}-{k}", b) for b in range(p["blocks"]) for k in range(p["slow"])]
    people = [f"p{k}" for k in range(p["passengers"])]
    init = [f"(next {a} {b})" for a, b in itertools.pairwise(counts)]
    init += [f"(above n{i} n{j})" for i in floors for j in floors if i < j]
    fast_stops = [f for f in floors if f % p["half"] == 0]
    lifts = [(lift, fast_stops, p["fast_capacity"]) for lift in fast]
    lifts += [(lift, floors[b * block: (b + 1) * block + 1], p["slow_capacity"]) for lift, b in slow]
    starts, goal = {}, []
    for person in people:
        starts[person] = rng.choice(floors)
        goal.append(f"(passenger-at {person} n{rng.choice([f for f in floors if f != starts[person]])})")
    # `ready` elevators (drawn in random order among those that can) wait where a passenger is
    waiting = {}
    for lift, stops, _ in rng.sample(lifts, len(lifts)):
        here = [starts[person] for person in people if starts[person] in stops]
        if len(waiting) < p["ready"] and here:
            waiting[lift] = rng.choice(here)
    for lift, stops, capacity in lifts:
        at = waiting[lift] if lift in waiting else rng.choice(stops)
        init += [f"(lift-at {lift} n{at})", f"(passengers {lift} n0)"]
        init += [f"(can-hold {lift} n{c})" for c in range(1, capacity + 1)]
        init += [f"(reachable-floor {lift} n{f})" for f in stops]
    init += [f"(passenger-at {person} n{starts[person]})" for person in people]
    for b in range(p["blocks"]):
        stops = floors[b * block: (b + 1) * block + 1]
        init += [f"(= (travel-slow n{i} n{j}) {5 + j - i})" for i in stops for j in stops if i < j]
    init += [f"(= (travel-fast n{i} n{j}) {1 + 3 * (j - i)})" for i in fast_stops for j in fast_stops if i < j]
    init.append("(= (total-cost) 0)")
    objects = (f"{' '.join(counts)} - count {' '.join(people)} - passenger"
               + (f" {' '.join(fast)} - fast-elevator" if fast else "")
               + f" {' '.join(lift for lift, _ in slow)} - slow-elevator")
    return (f"(define (problem {name}) (:domain elevators-sequencedstrips)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)}))\n"
            "  (:metric minimize (total-cost)))\n")


GENERATOR = LadderGenerator(
    world="elevators",
    bands={
        "easy": {"blocks": (1, 1), "half": (2, 3), "fast": (0, 1), "slow": (1, 1), "slow_capacity": (2, 2),
                 "fast_capacity": (3, 3), "passengers": (1, 1), "ready": (1, 1)},
        "medium": {"blocks": (1, 1), "half": (2, 3), "fast": (1, 1), "slow": (1, 1), "slow_capacity": (2, 2),
                   "fast_capacity": (3, 3), "passengers": (1, 2), "ready": (0, 1)},
        "hard": {"blocks": (2, 2), "half": (2, 2), "fast": (1, 1), "slow": (1, 1), "slow_capacity": (2, 2),
                 "fast_capacity": (3, 3), "passengers": (2, 3), "ready": (1, 1)},
    },
    build=build,
)
