"""Termes ladder: a flat grid with a depot, and towers of blocks for the robot to build.

The grid is `width` x `depth` positions named as in the IPC 2018 problems, `pos-<x>-<y>`, every one at height
n0 at the start, neighbours both ways along rows and columns. The depot is a random position of row 0, and the
robot stands on it without a block. `towers` positions other than the depot, drawn at random, must end with a
tower, the first `tall` blocks high and the others of random height 1..`rest`; every other position must end
at height n0 and the robot without a block (the IPC goal lists every position's height). The heights are the
objects n0..n<tall>, as in the IPC, where the largest height a problem names is its tallest tower.

Parameters: `width`, `depth`, `towers`, `tall` (the first tower's height), `rest` (the most the others may
have, never above `tall`). A tower of height h needs a staircase of h - 1 steps beside it, built and taken
down again, so plans grow quickly with `tall` (one tower three high already takes about 32 steps, and two of
them take the optimal search minutes: the hard band stays at two-high towers).
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    width, depth, tall = p["width"], p["depth"], p["tall"]
    positions = [(x, y) for x in range(width) for y in range(depth)]

    def pos(x: int, y: int) -> str:
        return f"pos-{x}-{y}"

    depot = (rng.randrange(width), 0)
    sites = rng.sample([q for q in positions if q != depot], min(p["towers"], len(positions) - 1))
    goal_height = {q: 0 for q in positions}
    for i, q in enumerate(sites):
        goal_height[q] = tall if i == 0 else rng.randint(1, min(p["rest"], tall))
    numbers = [f"n{h}" for h in range(tall + 1)]
    init = [f"(height {pos(*q)} n0)" for q in positions] + [f"(at {pos(*depot)})"]
    init += [f"(SUCC n{h + 1} n{h})" for h in range(tall)]
    for x, y in positions:
        for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            if 0 <= x + dx < width and 0 <= y + dy < depth:
                init.append(f"(NEIGHBOR {pos(x, y)} {pos(x + dx, y + dy)})")
    init.append(f"(IS-DEPOT {pos(*depot)})")
    goal = [f"(height {pos(*q)} n{goal_height[q]})" for q in positions] + ["(not (has-block))"]
    objects = [f"{n} - numb" for n in numbers] + [f"{pos(*q)} - position" for q in positions]
    return (f"(define (problem {name}) (:domain termes)\n  (:objects {' '.join(objects)})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="termes",
    bands={
        "easy": {"width": (2, 3), "depth": (2, 3), "towers": (1, 3), "tall": (1, 1), "rest": (1, 1)},
        "medium": {"width": (3, 3), "depth": (2, 3), "towers": (1, 2), "tall": (2, 2), "rest": (1, 2)},
        "hard": {"width": (3, 3), "depth": (3, 3), "towers": (3, 4), "tall": (2, 2), "rest": (2, 2)},
    },
    build=build,
)
