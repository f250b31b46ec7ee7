"""Nurikabe ladder: a grid, islands each with a numbered cell, and a robot that paints them, as in the IPC
2018 nurikabe problems.

The grid has `rows` x `cols` cells `pos-<row>-<col>`, each connected to its four neighbours. `groups`
islands `g0`, `g1`, ... are laid out one by one as random walks of 1..`size` cells (drawn) from a random
numbered cell, no cell of one beside a cell of another, so that every draw has a painting; an island's
number (the cells painted for it, its numbered cell included) is its walk's length (shorter where the walk
was hemmed in), and fewer islands are placed when the grid is full. As in the IPC
files, a cell beside one numbered cell starts as part of that island, a cell beside two is blocked, and
every other cell (numbered cells aside) is available; the robot starts at `pos-0-0` and the numbers are
`n0` (the domain's constant) to `n<size>`. The goal is every island painted. A draw can still leave the
robot cut off (the ladder builder refuses the draws that cannot be solved).

Parameters: `rows`, `cols`, `groups`, `size`. Object names follow the IPC problems.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    rows, cols = p["rows"], p["cols"]
    cells = [(r, c) for r in range(rows) for c in range(cols)]

    def cell(rc: tuple[int, int]) -> str:
        return f"pos-{rc[0]}-{rc[1]}"

    def neighbours(rc: tuple[int, int]) -> list[tuple[int, int]]:
        r, c = rc
        return [(r + dr, c + dc) for dr, dc in ((1, 0), (0, 1), (-1, 0), (0, -1))
                if 0 <= r + dr < rows and 0 <= c + dc < cols]

    # each island is laid out first as a walk from its numbered cell (the robot paints by walking), no
    # cell of it beside another island's, so that the draw can be painted; its size is the walk's length
    islands: list[list[tuple[int, int]]] = []
    for _ in range(p["groups"]):
        taken = {rc for island in islands for rc in island}
        near = taken | {n for rc in taken for n in neighbours(rc)}
        free = [rc for rc in cells if rc not in near]
        if not free:
            break
        walk = [rng.choice(free)]
        for _ in range(rng.randint(1, p["size"]) - 1):
            steps = [n for n in neighbours(walk[-1]) if n not in near and n not in walk]
            if not steps:
                break
            walk.append(rng.choice(steps))
        islands.append(walk)
    sources = [island[0] for island in islands]
    sizes = [len(island) for island in islands]
    numbers = [f"n{i}" for i in range(1, max(sizes) + 1)]
    init = [f"(NEXT n{i} n{i + 1})" for i in range(len(numbers))]
    init += [f"(CONNECTED {cell(rc)} {cell(n)})" for rc in cells for n in neighbours(rc)]
    init += ["(robot-pos pos-0-0)", "(moving)"]
    init += [f"(SOURCE {cell(rc)} g{k})" for k, rc in enumerate(sources)]
    for rc in cells:
        if rc in sources:
            continue
        touching = [k for k, s in enumerate(sources) if s in neighbours(rc)]
        if not touching:
            init.append(f"(available {cell(rc)})")
        elif len(touching) == 1:
            init.append(f"(part-of {cell(rc)} g{touching[0]})")
        else:
            init.append(f"(blocked {cell(rc)})")
    init += [f"(remaining-cells g{k} n{size})" for k, size in enumerate(sizes)]
    goal = " ".join(f"(group-painted g{k})" for k in range(len(sources)))
    return (f"(define (problem {name})\n  (:domain nurikabe)\n"
            f"  (:objects {' '.join(cell(rc) for rc in cells)} - cell\n    {' '.join(numbers)} - num\n"
            f"    {' '.join(f'g{k}' for k in range(len(sources)))} - group)\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {goal})))\n")


GENERATOR = LadderGenerator(
    world="nurikabe",
    bands={
        "easy": {"rows": (2, 3), "cols": (2, 3), "groups": (1, 2), "size": (1, 2)},
        "medium": {"rows": (3, 4), "cols": (3, 4), "groups": (2, 3), "size": (2, 3)},
        "hard": {"rows": (4, 5), "cols": (5, 5), "groups": (4, 5), "size": (3, 4)},
    },
    build=build,
)
