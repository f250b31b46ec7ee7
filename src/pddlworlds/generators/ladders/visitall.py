"""Visitall ladder: a robot on a grid of places, some places missing, must visit the places the goal names.

Parameters: `width` and `height` of the grid, `holes` (places taken out of it, each only if the rest stays
connected, so every place can still be reached) and `goals` (how many places the goal names: drawn at
random among the places, the robot's own included as the IPC's problems do; `goals` at least the number of
places means all of them, the IPC's "full" problems, fewer its "half" ones). The robot starts on a place
drawn at random; neighbouring places (left, right, up, down) are connected both ways. Object names follow
the IPC 2011 problems: `loc-x<column>-y<row>`, counted from 0.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def _connected(cells: list[tuple[int, int]]) -> bool:
    if not cells:
        return False
    present = set(cells)
    seen, todo = {cells[0]}, [cells[0]]
    while todo:
        x, y = todo.pop()
        for nxt in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if nxt in present and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return len(seen) == len(present)


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    cells = [(x, y) for x in range(p["width"]) for y in range(p["height"])]
    for _ in range(p["holes"]):
        order = cells[:]
        rng.shuffle(order)
        for cell in order:
            rest = [c for c in cells if c != cell]
            if _connected(rest):
                cells = rest
                break
    present = set(cells)

    def loc(cell: tuple[int, int]) -> str:
        return f"loc-x{cell[0]}-y{cell[1]}"

    start = rng.choice(cells)
    goals = cells if p["goals"] >= len(cells) else sorted(rng.sample(cells, p["goals"]))
    init = [f"(at-robot {loc(start)})", f"(visited {loc(start)})"]
    for x, y in cells:
        for nxt in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
            if nxt in present:
                init.append(f"(connected {loc((x, y))} {loc(nxt)})")
    objects = " ".join(loc(c) for c in cells)
    goal = " ".join(f"(visited {loc(c)})" for c in goals)
    return (f"(define (problem {name}) (:domain grid-visit-all)\n  (:objects {objects} - place)\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {goal})))\n")


GENERATOR = LadderGenerator(
    world="visitall",
    bands={
        "easy": {"width": (2, 3), "height": (2, 3), "holes": (0, 2), "goals": (2, 9)},
        "medium": {"width": (4, 5), "height": (3, 4), "holes": (0, 3), "goals": (12, 18)},
        "hard": {"width": (5, 6), "height": (5, 5), "holes": (0, 3), "goals": (22, 30)},
    },
    build=build,
)
