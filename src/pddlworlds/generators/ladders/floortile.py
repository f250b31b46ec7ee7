"""Floortile ladder: a grid of tiles, robots holding spray guns, and a pattern to paint.

The grid has `rows` paintable rows (1..rows) above a row 0 the pattern never covers, each `cols` tiles wide;
as in the IPC 2011 problems, tile `tile_<row>-<col>` (columns from 1) and the pattern is the checkerboard of
white and black (white where row + column is even). `goals` of the paintable tiles, drawn at random, are in
the pattern (all of them when `goals` is at least rows x cols). There are `robots` robots (`robot1`, ...),
each on a distinct random tile holding a random one of the two colours; both colours are available.

Parameters: `rows`, `cols`, `robots`, `goals`. Robots can dead-end themselves (a painted tile can no longer be
stood on), never the initial state: a robot can always reach the tile below or above a goal tile before
anything is painted, and painting the pattern top row first, downwards, is always possible.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]

COLOURS = ("white", "black")


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    rows, cols = p["rows"], p["cols"]
    tiles = [[f"tile_{r}-{c}" for c in range(1, cols + 1)] for r in range(rows + 1)]
    every = [t for row in tiles for t in row]
    robots = [f"robot{k}" for k in range(1, p["robots"] + 1)]
    places = rng.sample(every, len(robots))
    init = ["(= (total-cost) 0)"]
    for robot, place in zip(robots, places):
        init += [f"(robot-at {robot} {place})", f"(robot-has {robot} {rng.choice(COLOURS)})"]
    init += [f"(available-color {c})" for c in COLOURS]
    init += [f"(clear {t})" for t in every if t not in places]
    for r in range(rows):
        init += [f"(up {tiles[r + 1][c]} {tiles[r][c]})" for c in range(cols)]
    for r in range(rows):
        init += [f"(down {tiles[r][c]} {tiles[r + 1][c]})" for c in range(cols)]
    for r in range(rows + 1):
        init += [f"(right {tiles[r][c + 1]} {tiles[r][c]})" for c in range(cols - 1)]
    for r in range(rows + 1):
        init += [f"(left {tiles[r][c]} {tiles[r][c + 1]})" for c in range(cols - 1)]
    paintable = [(r, c) for r in range(1, rows + 1) for c in range(1, cols + 1)]
    chosen = sorted(rng.sample(paintable, min(p["goals"], len(paintable))))
    goal = [f"(painted {tiles[r][c - 1]} {COLOURS[(r + c) % 2]})" for r, c in chosen]
    return (f"(define (problem {name}) (:domain floor-tile)\n"
            f"  (:objects {' '.join(every)} - tile\n    {' '.join(robots)} - robot\n    white black - color)\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)}))\n  (:metric minimize (total-cost)))\n")


GENERATOR = LadderGenerator(
    world="floortile",
    bands={
        "easy": {"rows": (1, 2), "cols": (2, 2), "robots": (1, 1), "goals": (1, 2)},
        "medium": {"rows": (2, 2), "cols": (2, 3), "robots": (1, 2), "goals": (3, 4)},
        "hard": {"rows": (2, 3), "cols": (3, 3), "robots": (1, 2), "goals": (5, 9)},
    },
    build=build,
)
