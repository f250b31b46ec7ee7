"""Woodworking ladder: a workshop with one machine of each kind (as in the IPC 2008 problems), parts already
cut with some finish of their own, parts still to be sawn from boards, and an order saying how each part must
end: its treatment (varnished or glazed), and by `detail` its colour and its surface.

Parameters: `ready` (parts already cut, each of a wood and with a surface drawn uniformly, untreated and
natural- coloured; one when neither `ready` nor `uncut` gives a part); `rework` (how many of the ready parts
have a treatment instead, drawn uniformly, and are coloured when varnished or glazed); `uncut` (parts still to
be sawn from a board of the wood the order asks for, the board just big enough or one size step bigger, its
surface rough or smooth); `size` (parts' sizes are drawn from the first `size` of small, medium and large; the
machines' prices per part follow the IPC table by size: spray-varnishing 5/10/15, glazing 10/15/20, grinding
15/30/45, planing 10/20/30); `colours` (colours in the workshop; the glazer, the immersion varnisher and the
spray varnisher each hold one or two of them, drawn uniformly); `detail` (what the order says of each part
beyond being available: 0 its treatment, 1 also its colour, 2 also its surface; the colour is one a machine of
that treatment holds, so every order can be met). Object names follow the IPC problems: `p<i>`, `b<i>`, `s<i>`
(board sizes), `grinder0`, `glazer0`, ..., colours and woods by name.
"""

from __future__ import annotations

import random
from itertools import pairwise

from .base import LadderGenerator

__all__ = ["GENERATOR"]

COLOURS = ("red", "mauve", "blue", "white", "black", "green")
WOODS = ("cherry", "beech", "pine", "oak", "teak", "mahogany")
SIZES = ("small", "medium", "large")
#: price of spray-varnishing, glazing, grinding and planing a part, by its size (the IPC generator's table)
PRICES = {"small": (5, 10, 15, 10), "medium": (10, 15, 30, 20), "large": (15, 20, 45, 30)}
MACHINES = ("grinder", "glazer", "immersion-varnisher", "planer", "highspeed-saw", "spray-varnisher", "saw")


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    colours = rng.sample(COLOURS, p["colours"])
    woods = rng.sample(WOODS, 2)
    holds = {m: rng.sample(colours, min(rng.randint(1, 2), len(colours)))
             for m in ("glazer", "immersion-varnisher", "spray-varnisher")}
    varnishers = set(holds["immersion-varnisher"]) | set(holds["spray-varnisher"])
    varnish_colours = sorted(varnishers, key=colours.index)
    ready = p["ready"] if p["ready"] + p["uncut"] else 1  # at least one part
    parts = [f"p{i}" for i in range(ready + p["uncut"])]
    sizes = {x: SIZES[rng.randrange(p["size"])] for x in parts}
    init = ["(grind-treatment-change varnished colourfragments)", "(grind-treatment-change glazed untreated)",
            "(grind-treatment-change untreated untreated)",
            "(grind-treatment-change colourfragments untreated)",
            "(is-smooth smooth)", "(is-smooth verysmooth)", "(= (total-cost) 0)"]
    init += [f"(has-colour {m}0 {c})" for m in holds for c in holds[m]]
    init.append("(empty highspeed-saw0)")
    goal = []
    boards = []
    for i, x in enumerate(parts):
        spray, glaze, grind, plane = PRICES[sizes[x]]
        costs = [f"(= (spray-varnish-cost {x}) {spray})", f"(= (glaze-cost {x}) {glaze})",
                 f"(= (grind-cost {x}) {grind})", f"(= (plane-cost {x}) {plane})"]
        wood = rng.choice(woods)
        if i < ready:
            treatment = "untreated"
            if i < p["rework"]:
                treatment = rng.choice(("untreated", "varnished", "glazed", "colourfragments"))
            colour = rng.choice(colours) if treatment in ("varnished", "glazed") else "natural"
            init += [f"(available {x})", f"(colour {x} {colour})", f"(wood {x} {wood})",
                     f"(surface-condition {x} {rng.choice(('rough', 'smooth', 'verysmooth'))})",
                     f"(treatment {x} {treatment})"]
        else:
            init.append(f"(unused {x})")
            steps = SIZES.index(sizes[x]) + 1 + rng.randint(0, 1)
            boards.append((f"b{len(boards)}", wood, steps, rng.choice(("rough", "smooth"))))
        init.append(f"(goalsize {x} {sizes[x]})")
        init += costs
        wanted = rng.choice(("varnished", "glazed"))
        goal += [f"(available {x})", f"(treatment {x} {wanted})"]
        if i >= ready:
            goal.append(f"(wood {x} {wood})")
        if p["detail"] >= 1:
            offered = varnish_colours if wanted == "varnished" else holds["glazer"]
            goal.append(f"(colour {x} {rng.choice(offered)})")
        if p["detail"] >= 2:
            goal.append(f"(surface-condition {x} {rng.choice(('smooth', 'verysmooth'))})")
    top = max([steps for _, _, steps, _ in boards], default=0)
    levels = [f"s{i}" for i in range(top + 1)]
    init += [f"(boardsize-successor {a} {b})" for a, b in pairwise(levels)]
    for b, wood, steps, surface in boards:
        init += [f"(boardsize {b} s{steps})", f"(wood {b} {wood})", f"(surface-condition {b} {surface})",
                 f"(available {b})"]
    objects = [f"{m}0 - {m}" for m in MACHINES]
    objects += [f"{' '.join(colours)} - acolour", f"{' '.join(woods)} - awood", f"{' '.join(parts)} - part"]
    if boards:
        objects += [f"{' '.join(b[0] for b in boards)} - board", f"{' '.join(levels)} - aboardsize"]
    return (f"(define (problem {name}) (:domain woodworking)\n  (:objects {' '.join(objects)})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)}))\n"
            "  (:metric minimize (total-cost)))\n")


GENERATOR = LadderGenerator(
    world="woodworking",
    bands={
        "easy": {"ready": (1, 1), "rework": (0, 0), "uncut": (0, 0), "size": (1, 2), "colours": (1, 3),
                 "detail": (0, 2)},
        "medium": {"ready": (1, 2), "rework": (0, 1), "uncut": (0, 0), "size": (1, 2), "colours": (2, 3),
                   "detail": (0, 2)},
        "hard": {"ready": (0, 2), "rework": (0, 1), "uncut": (0, 1), "size": (1, 2), "colours": (2, 3),
                 "detail": (1, 2)},
    },
    build=build,
)
