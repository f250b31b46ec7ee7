"""Sokoban ladder: a maze of floor cells with stones to be pushed onto goal cells, drawn backwards from its
solution.

Parameters: `width` and `height` of the box the maze is carved in, `carve` (steps of the carving walk),
`stones` (as many stones as goal cells) and `pushes` (how many pushes the problem is to need). The floor is
carved by a walk of a two-by-two brush through the box (it keeps its direction or, one step in five, turns
at random), which leaves winding passages two cells wide and small rooms; the goal cells are a cluster of
neighbouring floor cells around one drawn at random. Then a search backwards from the solved arrangements
(stones on the goals, the player anywhere), one pull of a stone a layer, finds every arrangement exactly
`pushes` pushes from solved (a push undone is a pull, and walking can be undone, so that count is exact);
the problem is one of them drawn at random, the player on a random cell of its area. A maze with no
arrangement that far is carved again (up to 20 mazes; then the last maze's farthest arrangements are used
and the planner's proof decides the band). Walking costs nothing and every push costs 1, as in the IPC
domain, so the bands are by pushes: easy 1-2 stones in a 5-6 box, 3-10 pushes; medium 2-3 stones in a 7-8
box, 11-18; hard 3 stones in an 8 by 8 box, 21-24 (more pushes, stones or floor make the planner's proof of
the shortest plan, walking included, take minutes). Object names follow the IPC 2008 problems:
`pos-<column>-<row>` counted from 1 with the wall round the box in row and column 1 (only floor cells are
objects), `player-01`, `stone-01`, ..., and the directions `dir-up`, `dir-down`, `dir-left`, `dir-right`
(down is the next row).
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]

DIRECTIONS = (("dir-down", (0, 1)), ("dir-left", (-1, 0)), ("dir-right", (1, 0)), ("dir-up", (0, -1)))
STEPS = tuple(step for _, step in DIRECTIONS)
#: Mazes carved for one problem at most, until one has an arrangement `pushes` pushes from solved.
ATTEMPTS = 20


def _carve(rng: random.Random, width: int, height: int, steps: int) -> list[tuple[int, int]]:
    """Floor cells carved by a walk of a 2x2 brush in the box (cells from (2, 2), the wall in row and column
    1), in reading order."""
    x, y = rng.randrange(width - 1), rng.randrange(height - 1)
    step = rng.choice(STEPS)
    floor = set()
    for _ in range(steps):
        floor |= {(x + i + 2, y + j + 2) for i in (0, 1) for j in (0, 1)}
        if rng.random() < 0.2:
            step = rng.choice(STEPS)
        nx, ny = x + step[0], y + step[1]
        if 0 <= nx <= width - 2 and 0 <= ny <= height - 2:
            x, y = nx, ny
        else:
            step = rng.choice(STEPS)
    return sorted(floor, key=lambda c: (c[1], c[0]))


def _cluster(rng: random.Random, cells: list[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    """`size` floor cells around one drawn at random, nearest first (breadth first)."""
    floor = set(cells)
    order = [rng.choice(cells)]
    for x, y in order:
        if len(order) >= size:
            break
        for dx, dy in STEPS:
            nxt = (x + dx, y + dy)
            if nxt in floor and nxt not in order:
                order.append(nxt)
    return sorted(order[:size])


def _states_at(cells: list, goals: list, pushes: int, stride: int) -> tuple[int, list[tuple[int, int]]]:
    """The arrangements exactly `pushes` pushes from solved (or the farthest, if none is that far) and that
    distance: breadth first backwards from the solved arrangements (stones on the goals, the player in any
    area), one pull of a stone a layer. Cells are bits of an int, `stride` bits a row (the rows padded so
    that a shift never wraps onto floor); a state is the stones' bits and the bits of the player's area."""
    def bit(cell):
        return 1 << (cell[1] * stride + cell[0])

    def flood(start: int, free: int) -> int:
        area = start
        while True:
            grown = area | (((area << 1) | (area >> 1) | (area << stride) | (area >> stride)) & free)
            if grown == area:
                return area
            area = grown

    floor = sum(bit(c) for c in cells)
    solved = sum(bit(g) for g in goals)
    layer, seen = [], set()
    rest = free = floor & ~solved
    while rest:
        area = flood(rest & -rest, free)
        rest &= ~area
        seen.add((solved, area & -area))
        layer.append((solved, area))
    depth = 0
    while depth < pushes:
        following = []
        for stones, area in layer:
            todo = stones
            while todo:
                stone = todo & -todo
                todo ^= stone
                for shift in (1, stride):
                    for stand, back in ((stone << shift, stone << 2 * shift), (stone >> shift, stone >> 2 * shift)):
                        if stand & area and back & floor and not back & stones:
                            moved = stones ^ stone | stand
                            reached = flood(back, floor & ~moved)
                            key = (moved, reached & -reached)
                            if key not in seen:
                                seen.add(key)
                                following.append((moved, reached))
        if not following:
            break
        layer, depth = following, depth + 1
    return depth, layer


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    stride = p["width"] + 4
    for _ in range(ATTEMPTS):  # a maze with no arrangement `pushes` from solved is carved again
        cells = _carve(rng, p["width"], p["height"], p["carve"])
        goals = _cluster(rng, cells, min(p["stones"], len(cells) - 1))
        depth, layer = _states_at(cells, goals, p["pushes"], stride)
        if depth == p["pushes"]:
            break
    floor = set(cells)
    stones_bits, area = rng.choice(sorted(layer))
    stones = [c for c in cells if stones_bits >> (c[1] * stride + c[0]) & 1]
    player = rng.choice([c for c in cells if area >> (c[1] * stride + c[0]) & 1])

    def pos(cell: tuple[int, int]) -> str:
        return f"pos-{cell[0]}-{cell[1]}"

    names = [f"stone-{i:02d}" for i in range(1, len(stones) + 1)]
    init = [f"(is-goal {pos(c)})" for c in cells if c in goals]
    init += [f"(is-nongoal {pos(c)})" for c in cells if c not in goals]
    for x, y in cells:
        for direction, (dx, dy) in DIRECTIONS:
            if (x + dx, y + dy) in floor:
                init.append(f"(move-dir {pos((x, y))} {pos((x + dx, y + dy))} {direction})")
    init.append(f"(at player-01 {pos(player)})")
    for stone, cell in zip(names, stones):
        init.append(f"(at {stone} {pos(cell)})")
        if cell in goals:
            init.append(f"(at-goal {stone})")
    occupied = {player, *stones}
    init += [f"(clear {pos(c)})" for c in cells if c not in occupied]
    init.append("(= (total-cost) 0)")
    objects = ["dir-down dir-left dir-right dir-up - direction", "player-01 - player",
               " ".join(pos(c) for c in cells) + " - location", " ".join(names) + " - stone"]
    goal = " ".join(f"(at-goal {stone})" for stone in names)
    return (f"(define (problem {name}) (:domain sokoban-sequential)\n  (:objects {' '.join(objects)})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {goal}))\n  (:metric minimize (total-cost)))\n")


GENERATOR = LadderGenerator(
    world="sokoban",
    bands={
        "easy": {"width": (5, 6), "height": (5, 6), "carve": (8, 14), "stones": (1, 2), "pushes": (3, 10)},
        "medium": {"width": (7, 8), "height": (7, 8), "carve": (16, 22), "stones": (2, 3), "pushes": (11, 18)},
        "hard": {"width": (8, 8), "height": (8, 8), "carve": (18, 22), "stones": (3, 3), "pushes": (21, 24)},
    },
    build=build,
)
