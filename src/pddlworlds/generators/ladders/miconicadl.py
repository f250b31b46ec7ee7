"""Miconic (simple ADL) ladder: an elevator, floors one above the other, and passengers waiting to be
taken from their floor to another, as in the AIPS-2000 Miconic problems.

Floors `f0` (the lowest) to `f<floors-1>`, every floor above every lower one (`above` is the order's full
list, as in the IPC files). Each passenger waits at a random floor and goes to a random other floor; the
lift starts at a random floor (the IPC files start it at `f0`; a random start gives more distinct
problems). The goal is every passenger served.

Parameters: `floors`, `passengers`. Object names follow the IPC problems: `f<i>`, `p<k>`.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    floors = [f"f{i}" for i in range(p["floors"])]
    passengers = [f"p{k}" for k in range(p["passengers"])]
    init = [f"(above {floors[i]} {floors[j]})" for i in range(len(floors)) for j in range(i + 1, len(floors))]
    for person in passengers:
        origin, destin = rng.sample(floors, 2)
        init += [f"(origin {person} {origin})", f"(destin {person} {destin})"]
    init.append(f"(lift-at {rng.choice(floors)})")
    return (f"(define (problem {name})\n  (:domain miconic)\n"
            f"  (:objects {' '.join(passengers)} - passenger\n    {' '.join(floors)} - floor)\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(f'(served {x})' for x in passengers)})))\n")


GENERATOR = LadderGenerator(
    world="miconicadl",
    bands={
        "easy": {"floors": (2, 4), "passengers": (1, 2)},
        "medium": {"floors": (6, 8), "passengers": (4, 5)},
        "hard": {"floors": (13, 15), "passengers": (10, 12)},
    },
    build=build,
)
