"""Towers of Hanoi ladder: discs stacked on pegs, to be restacked into another arrangement.

Parameters: `pegs` (how many pegs) and `discs` (how many discs). Both the start and the goal are drawn as
legal arrangements: each disc, largest first, is put on top of a peg drawn at random, so every stack is
ordered by size; the goal says what every disc rests on (a peg or the disc below it) and differs from the
start. With three pegs the optimum is at most 2^discs - 1 (a whole tower moved to another peg), and random
arrangements are usually nearer (a fourth peg would make them nearer still; every band uses three). Easy:
3-4 discs; medium: 4-5 discs; hard: 5-6 discs. Object names follow the IPC problems:
`peg1`, `peg2`, ... and `d1` (the smallest) up to `d<discs>`; `(smaller ?x ?y)` holds of every peg ?x and
disc ?y, and of discs ?x larger than ?y (the IPC files also state some `(smaller d d)`, which lets a disc be
moved onto itself; these do not).
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def _arrangement(rng: random.Random, pegs: list[str], discs: list[str]) -> dict[str, str]:
    """Disc -> what it rests on: each disc, largest first, on top of the stack of a peg drawn at random."""
    top = {peg: peg for peg in pegs}
    below = {}
    for disc in reversed(discs):
        peg = rng.choice(pegs)
        below[disc] = top[peg]
        top[peg] = disc
    return below


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    pegs = [f"peg{i}" for i in range(1, p["pegs"] + 1)]
    discs = [f"d{i}" for i in range(1, p["discs"] + 1)]
    start = _arrangement(rng, pegs, discs)
    goal = _arrangement(rng, pegs, discs)
    while goal == start:
        goal = _arrangement(rng, pegs, discs)
    init = [f"(smaller {peg} {d})" for peg in pegs for d in discs]
    init += [f"(smaller {big} {small})" for i, big in enumerate(discs) for small in discs[:i]]
    covered = set(start.values())
    init += [f"(clear {x})" for x in [*pegs, *discs] if x not in covered]
    init += [f"(on {d} {start[d]})" for d in reversed(discs)]
    goals = [f"(on {d} {goal[d]})" for d in reversed(discs)]
    return (f"(define (problem {name}) (:domain hanoi)\n  (:objects {' '.join([*pegs, *discs])})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goals)})))\n")


GENERATOR = LadderGenerator(
    world="hanoi",
    bands={
        "easy": {"pegs": (3, 3), "discs": (3, 4)},
        "medium": {"pegs": (3, 3), "discs": (4, 5)},
        "hard": {"pegs": (3, 3), "discs": (5, 6)},
    },
    build=build,
)
