"""Fridge ladder: fridges whose compressor must be swapped for a new one, as in Joerg Hoffmann's fridge
problems, each fridge starting somewhere along the job.

Each fridge `f<i>` has its old compressor `c<i>-0` and a new one `c<i>-1`, both held by the fridge's own
screws `s<i>-<j>` (every screw fits both compressors, as in the IPC files). The goal (as there) is the new
compressor in every fridge and, for `running` of the fridges, the fridge switched on again. A fridge starts
running with the old compressor screwed in (the IPC start), except `started` of them (drawn at random),
which start further along, at random either switched off with the old compressor in and each of its screws
loose or fastened at random, or switched off with no compressor in (the old one already out) and every
screw loose (a fastened screw holding nothing can never be undone, which would dead-end the fridge).

Parameters: `fridges`, `screws` (the most screws a fridge has; each fridge draws screws-2..screws, at least
1), `running` (fridges that must end switched on; the others need only the new compressor in), `started`.
Object names follow the IPC problems: `f<i>`, `c<i>-<k>`, `s<i>-<j>`.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    fridges = list(range(p["fridges"]))
    counts = [rng.randint(max(1, p["screws"] - 2), p["screws"]) for _ in fridges]
    later = set(rng.sample(fridges, min(p["started"], len(fridges))))
    running = set(rng.sample(fridges, min(p["running"], len(fridges))))
    screws, compressors, init, goal = [], [], [], []
    for i in fridges:
        mine = [f"s{i}-{j}" for j in range(counts[i])]
        old, new = f"c{i}-0", f"c{i}-1"
        screws += mine
        compressors += [old, new]
        stage = rng.choice(("off", "open")) if i in later else "running"
        if stage == "running":
            init += [f"(fridge-on f{i})", f"(attached {old} f{i})"]
        elif stage == "off":
            init.append(f"(attached {old} f{i})")
        for s in mine:
            init += [f"(fits {s} {old})", f"(fits {s} {new})"]
            if stage == "running" or (stage == "off" and rng.random() < 0.5):
                init.append(f"(screwed {s})")
        goal.append(f"(attached {new} f{i})")
        if i in running:
            goal.append(f"(fridge-on f{i})")
    return (f"(define (problem {name})\n  (:domain fridge-domain)\n"
            f"  (:objects {' '.join(screws)} - screw\n    {' '.join(compressors)} - compressor\n"
            f"    {' '.join(f'f{i}' for i in fridges)} - fridge)\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="fridge",
    bands={
        "easy": {"fridges": (1, 1), "screws": (1, 3), "running": (0, 1), "started": (0, 1)},
        "medium": {"fridges": (2, 2), "screws": (2, 3), "running": (1, 2), "started": (0, 1)},
        "hard": {"fridges": (2, 2), "screws": (5, 6), "running": (2, 2), "started": (0, 1)},
    },
    build=build,
)
