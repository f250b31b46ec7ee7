"""Depot ladder: depots and distributors with a hoist and a pallet each, trucks at random places, crates in
random stacks on the pallets, and a goal arrangement for some of the crates, as in the IPC 2002 problems.

Parameters: `depots` and `distributors` (the places; each has one hoist and one pallet, plus `extra_pallets`
spread over random places), `trucks`, `crates` (stacked at random on the pallets at the start), and `goals`
(how many crates must end on a given pallet or crate: a second random arrangement of all the crates is drawn,
each crate on a pallet's stack at another place than where it starts, and the `on` facts of that many crates
in it are the goal, so the goal is always reachable and every goal crate has to travel). Object names
follow the IPC problems: `depot<i>`, `distributor<i>`, `truck<i>`, `pallet<i>` (pallet i at place i),
`hoist<i>`, `crate<i>`, numbered from 0.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def _stacks(rng: random.Random, crates: list[str], pallets: list[str],
            away: dict[str, list[str]] | None = None) -> dict[str, str]:
    """A random arrangement: each crate, in a random order, on a random pallet's stack (one of `away[crate]`
    where given and not empty); crate -> what it is on."""
    top = {pallet: pallet for pallet in pallets}
    below = {}
    order = list(crates)
    rng.shuffle(order)
    for crate in order:
        pallet = rng.choice((away or {}).get(crate) or pallets)
        below[crate] = top[pallet]
        top[pallet] = crate
    return below


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    places = [f"depot{i}" for i in range(p["depots"])] + [f"distributor{i}" for i in range(p["distributors"])]
    pallets = [f"pallet{i}" for i in range(len(places) + p["extra_pallets"])]
    pallet_place = {pallet: places[i] if i < len(places) else rng.choice(places)
                    for i, pallet in enumerate(pallets)}
    trucks = [f"truck{i}" for i in range(p["trucks"])]
    hoists = [f"hoist{i}" for i in range(len(places))]
    crates = [f"crate{i}" for i in range(p["crates"])]
    start = _stacks(rng, crates, pallets)
    place_of = dict(pallet_place)
    for crate in sorted(crates, key=lambda c: _depth(c, start)):
        place_of[crate] = place_of[start[crate]]
    covered = set(start.values())
    init = []
    for pallet in pallets:
        init += [f"(pallet {pallet})", f"(surface {pallet})", f"(at {pallet} {pallet_place[pallet]})"]
    for surface in pallets + crates:
        if surface not in covered:
            init.append(f"(clear {surface})")
    for truck in trucks:
        init += [f"(truck {truck})", f"(at {truck} {rng.choice(places)})"]
    for hoist, place in zip(hoists, places):
        init += [f"(hoist {hoist})", f"(at {hoist} {place})", f"(available {hoist})"]
    for crate in crates:
        init += [f"(crate {crate})", f"(surface {crate})", f"(at {crate} {place_of[crate]})",
                 f"(on {crate} {start[crate]})"]
    init += [f"(place {place})" for place in places]
    away = {crate: [pallet for pallet in pallets if pallet_place[pallet] != place_of[crate]]
            for crate in crates}
    target = _stacks(rng, crates, pallets, away)
    goal = [f"(on {crate} {target[crate]})"
            for crate in sorted(rng.sample(crates, min(p["goals"], len(crates))))]
    objects = " ".join([*places, *trucks, *pallets, *crates, *hoists])
    return (f"(define (problem {name}) (:domain depot)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


def _depth(crate: str, below: dict[str, str]) -> int:
    """How many crates lie under `crate` (so places are filled from the pallets up)."""
    depth = 0
    while below[crate] in below:
        crate, depth = below[crate], depth + 1
    return depth


GENERATOR = LadderGenerator(
    world="depot",
    bands={
        "easy": {"depots": (1, 1), "distributors": (1, 2), "extra_pallets": (0, 1), "trucks": (1, 2),
                 "crates": (1, 3), "goals": (1, 1)},
        "medium": {"depots": (1, 1), "distributors": (1, 2), "extra_pallets": (0, 1), "trucks": (1, 2),
                   "crates": (2, 3), "goals": (2, 3)},
        "hard": {"depots": (1, 1), "distributors": (2, 2), "extra_pallets": (0, 1), "trucks": (1, 1),
                 "crates": (5, 6), "goals": (5, 6)},
    },
    build=build,
)
