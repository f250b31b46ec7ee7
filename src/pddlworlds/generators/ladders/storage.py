"""Storage ladder: depots laid out as grids of store areas, a container whose areas hold the crates, a loading
area joining the containers to each depot's access point, hoists standing in the depots, and a goal naming the
depot each crate must end in.

Parameters: `depots`; `rows` and `cols` (each depot's grid; its access point, the area next to the loading
area, is drawn from its bottom row); `hoists` (placed on distinct depot areas drawn uniformly; at most one an
area); `crates` (one a container area; at most one a depot area, so every crate fits: a hoist can wait in the
loading area); `goals` (how many crates, drawn uniformly, must be in a depot, each depot drawn uniformly).
Object names follow the IPC 2006 problems: `depot<d>-<r>-<c>` (row r and column c of depot d),
`container-<k>-<j>` (area j of container k), `container<k>`, `depot<d>`, `hoist<i>`, `crate<i>` and
`loadarea`.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    rows, cols = p["rows"], p["cols"]
    depots = [f"depot{d}" for d in range(p["depots"])]
    grid = {d: [[f"{d}-{r}-{c}" for c in range(1, cols + 1)] for r in range(1, rows + 1)] for d in depots}
    areas = [a for d in depots for row in grid[d] for a in row]
    hoists = [f"hoist{i}" for i in range(min(p["hoists"], len(areas)))]
    crates = [f"crate{i}" for i in range(min(p["crates"], len(areas)))]
    spots = [f"container-0-{j}" for j in range(len(crates))]
    init = []
    for d in depots:
        for r in range(rows):
            for c in range(cols):
                here = grid[d][r][c]
                for dr, dc in ((-1, 0), (0, 1), (1, 0), (0, -1)):
                    if 0 <= r + dr < rows and 0 <= c + dc < cols:
                        init.append(f"(connected {here} {grid[d][r + dr][c + dc]})")
        init += [f"(in {a} {d})" for row in grid[d] for a in row]
    for crate, spot in zip(crates, spots):
        init += [f"(on {crate} {spot})", f"(in {crate} container0)", f"(in {spot} container0)",
                 f"(connected loadarea {spot})", f"(connected {spot} loadarea)"]
    for d in depots:
        access = rng.choice(grid[d][-1])
        init += [f"(connected {access} loadarea)", f"(connected loadarea {access})"]
    taken = rng.sample(areas, len(hoists))
    init += [f"(clear {a})" for a in areas if a not in taken]
    for h, a in zip(hoists, taken):
        init += [f"(at {h} {a})", f"(available {h})"]
    chosen = sorted(rng.sample(crates, min(p["goals"], len(crates))), key=crates.index)
    goal = " ".join(f"(in {c} {rng.choice(depots)})" for c in chosen)
    objects = (f"{' '.join(areas + spots)} - storearea {' '.join(hoists)} - hoist {' '.join(crates)} - crate "
               f"container0 - container {' '.join(depots)} - depot loadarea - transitarea")
    return (f"(define (problem {name}) (:domain Storage-Propositional)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {goal})))\n")


GENERATOR = LadderGenerator(
    world="storage",
    bands={
        "easy": {"depots": (1, 2), "rows": (1, 2), "cols": (1, 2), "hoists": (1, 2), "crates": (1, 2),
                 "goals": (1, 2)},
        "medium": {"depots": (1, 1), "rows": (1, 2), "cols": (2, 3), "hoists": (1, 2), "crates": (3, 3),
                   "goals": (3, 3)},
        "hard": {"depots": (1, 1), "rows": (1, 1), "cols": (5, 6), "hoists": (1, 1), "crates": (5, 5),
                 "goals": (5, 5)},
    },
    build=build,
)
