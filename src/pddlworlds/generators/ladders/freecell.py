"""FreeCell ladder: a small deck of four suits dealt into a few columns, with a few free cells.

The deck has the four suits of the IPC problems (`club`, `diamond`, `heart`, `spade`; clubs and spades
black), each with cards 1..`ranks` named as in the IPC 2002 problems (`clubA`, `club2`, ...), shuffled and
dealt in turn into `cols` columns (every column gets a card). Each suit's home pile starts with its 0 card
(`club0`, ...). There are `cells` free cells, all empty, and no empty column. Numbers `N0`.. `N<k>` with k the
largest of `ranks`, `cells` and `cols` serve as card values and counts, as in the IPC files. The goal is every
suit's highest card home, so every card must go home.

Parameters: `ranks` (cards per suit), `cols`, `cells`. The planner refuses a deal that cannot be played out.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]

SUITS = ("diamond", "club", "heart", "spade")
RED = ("diamond", "heart")


def card(suit: str, rank: int) -> str:
    return f"{suit}{'A' if rank == 1 else rank}"


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    ranks, cols, cells = p["ranks"], p["cols"], p["cells"]
    top = max(ranks, cols, cells)
    deck = [(s, r) for s in SUITS for r in range(1, ranks + 1)]
    rng.shuffle(deck)
    columns: list[list[tuple[str, int]]] = [[] for _ in range(cols)]
    for i, c in enumerate(deck):
        columns[i % cols].append(c)
    init = [f"(successor N{n + 1} N{n})" for n in range(top)] + [f"(cellspace N{cells})"]
    for column in columns:  # bottom card first
        init.append(f"(clear {card(*column[-1])})")
        init += [f"(on {card(*column[i + 1])} {card(*column[i])})" for i in range(len(column) - 1)]
        init.append(f"(bottomcol {card(*column[0])})")
    init.append("(colspace N0)")
    for s, r in deck:
        init += [f"(value {card(s, r)} N{r})", f"(suit {card(s, r)} {s})"]
        if r < ranks:
            init += [f"(canstack {card(s, r)} {card(t, r + 1)})" for t in SUITS if (t in RED) != (s in RED)]
    for s in SUITS:
        init += [f"(home {s}0)", f"(value {s}0 N0)", f"(suit {s}0 {s})"]
    objects = [*SUITS, *(f"N{n}" for n in range(top + 1)), *(card(s, r) for s, r in deck),
               *(f"{s}0" for s in SUITS)]
    goal = [f"(home {card(s, ranks)})" for s in SUITS]
    return (f"(define (problem {name}) (:domain freecell)\n  (:objects {' '.join(objects)})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="freecell",
    bands={
        "easy": {"ranks": (1, 2), "cols": (2, 4), "cells": (1, 2)},
        "medium": {"ranks": (3, 3), "cols": (3, 4), "cells": (1, 2)},
        "hard": {"ranks": (4, 5), "cols": (3, 4), "cells": (2, 2)},
    },
    build=build,
)
