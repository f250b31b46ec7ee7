"""Snake ladder: a snake on an empty grid, apples on some cells, and a fixed order in which new apples
appear as apples are eaten; the goal is that no apple is left, those to come included, as in the IPC 2018
problems.

Parameters: `width` and `height` of the grid (cells `pos<x>-<y>` from 0, neighbours up, down, left and
right); `length` (the snake's length: its head on a cell drawn uniformly, its body a random path of free
neighbouring cells behind it; the problem is drawn again where no such path fits); `apples` (apples at the
start, on free cells drawn uniformly); `spawns` (cells, drawn uniformly from those neither under the snake
nor holding an apple at the start, where the next apples appear, one each time an apple is eaten, in the
order drawn; the order ends at the constant `dummypoint`: no more apples). The goal asks that no apple lie
on any of the apple and spawn cells. A snake can trap itself, so some draws are unsolvable; the ladder
builder refuses those (it proves each kept problem optimal).
"""

from __future__ import annotations

import itertools
import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    w, h = p["width"], p["height"]
    cells = [(x, y) for x in range(w) for y in range(h)]

    def cell(c: tuple[int, int]) -> str:
        return f"pos{c[0]}-{c[1]}"

    def neighbours(c: tuple[int, int]) -> list[tuple[int, int]]:
        x, y = c
        return [(a, b) for a, b in ((x + 1, y), (x, y + 1), (x - 1, y), (x, y - 1)) if 0 <= a < w and 0 <= b < h]

    while True:  # the snake: head first, then a random path of free cells
        body = [rng.choice(cells)]
        while len(body) < p["length"]:
            free = [c for c in neighbours(body[-1]) if c not in body]
            if not free:
                break
            body.append(rng.choice(free))
        if len(body) == p["length"]:
            break
    free = [c for c in cells if c not in body]
    apples = rng.sample(free, min(p["apples"], len(free)))
    rest = [c for c in free if c not in apples]
    spawns = rng.sample(rest, min(p["spawns"], len(rest)))
    init = [f"(ISADJACENT {cell(c)} {cell(n)})" for c in cells for n in neighbours(c)]
    init += [f"(tailsnake {cell(body[-1])})", f"(headsnake {cell(body[0])})"]
    init += [f"(nextsnake {cell(a)} {cell(b)})" for a, b in itertools.pairwise(body)]
    init += [f"(blocked {cell(c)})" for c in body]
    chain = [cell(c) for c in spawns] + ["dummypoint"]
    init.append(f"(spawn {chain[0]})")
    init += [f"(NEXTSPAWN {a} {b})" for a, b in itertools.pairwise(chain)]
    init += [f"(ispoint {cell(c)})" for c in apples]
    goal = " ".join(f"(not (ispoint {cell(c)}))" for c in [*apples, *spawns])
    objects = " ".join(cell(c) for c in cells)
    return (f"(define (problem {name}) (:domain snake)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {goal})))\n")


GENERATOR = LadderGenerator(
    world="snake",
    bands={
        "easy": {"width": (3, 3), "height": (3, 4), "length": (2, 2), "apples": (1, 2), "spawns": (0, 1)},
        "medium": {"width": (4, 4), "height": (4, 4), "length": (2, 3), "apples": (2, 3), "spawns": (3, 5)},
        "hard": {"width": (4, 4), "height": (4, 4), "length": (2, 2), "apples": (2, 3), "spawns": (8, 10)},
    },
    build=build,
)
