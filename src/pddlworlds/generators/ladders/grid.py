"""Grid ladder: a robot on a grid of places, some of them locked, must bring keys to the places the goal names.

Parameters: `width` and `height` of the grid (every place connected both ways to its neighbours left, right,
up and down), `shapes` (how many of the IPC's four shapes, triangle, diamond, square and circle, are used),
`locks` (places locked, each with a shape drawn among those used; never the robot's start), `keys` (keys at
random places, each of a shape drawn among those used) and `goals` (how many keys must end at a given
place). The robot starts on an open place with an empty hand. A goal's key and its place are drawn among
those the robot can reach (opening a lock needs a reachable key of its shape, and every key it reaches can be
carried anywhere it reaches), so every problem is solvable; a layout where fewer than `goals` keys are
reachable is drawn again. Object names follow the IPC problems: `node<x>-<y>`, `key<i>` from 0, the shapes'
own names.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]

SHAPES = ("triangle", "diamond", "square", "circle")


def _layout(rng: random.Random, p: dict[str, int]):
    cells = [(x, y) for x in range(p["width"]) for y in range(p["height"])]
    shapes = list(SHAPES[: p["shapes"]])
    start = rng.choice(cells)
    lockable = [c for c in cells if c != start]
    locked = {c: rng.choice(shapes) for c in sorted(rng.sample(lockable, min(p["locks"], len(lockable))))}
    keys = [(rng.choice(cells), rng.choice(shapes)) for _ in range(p["keys"])]
    return cells, shapes, start, locked, keys


def _reachable(cells, start, locked, keys) -> set[tuple[int, int]]:
    """The places the robot can reach: open places, growing as keys it reaches open locks."""
    present = set(cells)
    opened: set[tuple[int, int]] = set()
    while True:
        seen, todo = {start}, [start]
        while todo:
            x, y = todo.pop()
            for nxt in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                if nxt in present and nxt not in seen and (nxt not in locked or nxt in opened):
                    seen.add(nxt)
                    todo.append(nxt)
        shapes = {shape for place, shape in keys if place in seen}
        border = {c for c in cells if c in locked and c not in opened and locked[c] in shapes
                  and any(n in seen for n in ((c[0] + 1, c[1]), (c[0] - 1, c[1]), (c[0], c[1] + 1), (c[0], c[1] - 1)))}
        if not border:
            return seen
        opened |= border


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    for _ in range(100):
        cells, shapes, start, locked, keys = _layout(rng, p)
        reach = _reachable(cells, start, locked, keys)
        reachable_keys = [i for i, (place, _) in enumerate(keys) if place in reach]
        if len(reachable_keys) >= p["goals"] and len(reach) > 1:
            break
    node = {c: f"node{c[0]}-{c[1]}" for c in cells}
    names = [f"key{i}" for i in range(len(keys))]
    present = set(cells)
    init = ["(arm-empty)"] + [f"(place {node[c]})" for c in cells] + [f"(shape {s})" for s in shapes]
    for x, y in cells:
        for nxt in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if nxt in present:
                init.append(f"(conn {node[(x, y)]} {node[nxt]})")
    for c in cells:
        if c in locked:
            init += [f"(locked {node[c]})", f"(lock-shape {node[c]} {locked[c]})"]
        else:
            init.append(f"(open {node[c]})")
    for key, (place, shape) in zip(names, keys):
        init += [f"(key {key})", f"(key-shape {key} {shape})", f"(at {key} {node[place]})"]
    init.append(f"(at-robot {node[start]})")
    goal = []
    reach_cells = [c for c in cells if c in reach]
    for i in sorted(rng.sample(reachable_keys, min(p["goals"], len(reachable_keys)))):
        targets = [c for c in reach_cells if c != keys[i][0]]
        if targets:  # none only when no layout of 100 left the robot room to move (then the goal is empty)
            goal.append(f"(at {names[i]} {node[rng.choice(targets)]})")
    objects = " ".join([*(node[c] for c in cells), *shapes, *names])
    return (f"(define (problem {name}) (:domain grid)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="grid",
    bands={
        "easy": {"width": (2, 3), "height": (2, 3), "shapes": (1, 2), "locks": (0, 2), "keys": (1, 2), "goals": (1, 1)},
        "medium": {"width": (3, 4), "height": (3, 4), "shapes": (1, 2), "locks": (2, 4), "keys": (2, 3), "goals": (2, 2)},
        "hard": {"width": (4, 5), "height": (5, 5), "shapes": (2, 3), "locks": (3, 6), "keys": (3, 3), "goals": (3, 3)},
    },
    build=build,
)
