"""Tetris ladder: squares, two-cell bars and L pieces in the top half of a small grid, and that half to clear.

The grid has 2 x `half` rows and `cols` columns of positions named as in the IPC 2014 problems, `f<row>-<col>f`
with row 0 at the top, each connected both ways to its four neighbours. Up to `ells` L pieces (`rightl0`, ...;
the IPC's one shape: a cell, the bend below it and the cell right of the bend), then up to `bars` two-cell
pieces (`straight0`, ...; each vertical or horizontal with a random front end), then up to `squares` one-cell
pieces (`square0`, ...) are placed on random free cells of the top `half` rows; a piece that no longer finds
room is left out. The goal, as in the IPC, is every cell of the top half clear.

Parameters: `half` (the rows to clear), `cols`, `ells`, `bars`, `squares`. The pieces never cover more cells
than the bottom half has; a draw the planner proves unsolvable is refused by the builder. The hard band clears
the top three rows of a 6 x 3 grid (an L, one or two bars and one or two squares): pieces further from the
bottom half cost more to move, where a wider 4-row grid soon fills up. Grids stay at 18 cells at most: the L's
moves take six cells as parameters, and a larger grid makes grounding them (ours and the planner's) and the
optimal search slow.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def _cell(r: int, c: int) -> str:
    return f"f{r}-{c}f"


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    rows, cols, half = 2 * p["half"], p["cols"], p["half"]
    taken: set[tuple[int, int]] = set()

    def free_places(shapes: list[list[tuple[int, int]]]) -> list[list[tuple[int, int]]]:
        """Every placement of one of `shapes` (cells relative to an anchor) on free cells of the upper half, in
        a fixed order."""
        out = []
        for r in range(half):
            for c in range(cols):
                for shape in shapes:
                    cells = [(r + dr, c + dc) for dr, dc in shape]
                    if all(0 <= x < half and 0 <= y < cols and (x, y) not in taken for x, y in cells):
                        out.append(cells)
        return out

    facts = []
    pieces = []
    kinds = [("rightl", p["ells"], [[(0, 0), (1, 0), (1, 1)]]),
             ("straight", p["bars"], [[(0, 0), (1, 0)], [(1, 0), (0, 0)], [(0, 0), (0, 1)], [(0, 1), (0, 0)]]),
             ("square", p["squares"], [[(0, 0)]])]
    numbered = {"rightl": 0, "straight": 0, "square": 0}
    placements = [(prefix, shapes) for prefix, count, shapes in kinds for _ in range(count)]
    for prefix, shapes in placements:  # the largest pieces first, so that they find room
        places = free_places(shapes)
        if not places:
            continue
        cells = rng.choice(places)
        taken.update(cells)
        piece = f"{prefix}{numbered[prefix]}"
        numbered[prefix] += 1
        pieces.append((prefix, piece))
        where = " ".join(_cell(*x) for x in cells)
        predicate = {"rightl": "at_right_l", "straight": "at_two", "square": "at_square"}[prefix]
        facts.append(f"({predicate} {piece} {where})")
    init = []
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((0, 1), (1, 0)):
                if r + dr < rows and c + dc < cols:
                    a, b = _cell(r, c), _cell(r + dr, c + dc)
                    init += [f"(connected {a} {b})", f"(connected {b} {a})"]
    init += [f"(clear {_cell(r, c)})" for r in range(rows) for c in range(cols) if (r, c) not in taken]
    init += facts
    goal = [f"(clear {_cell(r, c)})" for r in range(half) for c in range(cols)]
    positions = " ".join(_cell(r, c) for r in range(rows) for c in range(cols))
    typed = {"square": "one_square", "straight": "two_straight", "rightl": "right_l"}
    objects = [f"{positions} - position"]
    for prefix in ("square", "straight", "rightl"):
        mine = [piece for kind, piece in pieces if kind == prefix]
        if mine:
            objects.append(f"{' '.join(mine)} - {typed[prefix]}")
    return (f"(define (problem {name}) (:domain tetris)\n  (:objects {' '.join(objects)})\n"
            f"  (:init (= (total-cost) 0) {' '.join(init)})\n  (:goal (and {' '.join(goal)}))\n"
            "  (:metric minimize (total-cost)))\n")


GENERATOR = LadderGenerator(
    world="tetris",
    bands={
        "easy": {"half": (2, 2), "cols": (3, 3), "squares": (1, 2), "bars": (0, 1), "ells": (0, 0)},
        "medium": {"half": (2, 2), "cols": (3, 4), "squares": (1, 2), "bars": (1, 2), "ells": (0, 1)},
        "hard": {"half": (3, 3), "cols": (3, 3), "squares": (1, 2), "bars": (1, 2), "ells": (1, 1)},
    },
    build=build,
)
