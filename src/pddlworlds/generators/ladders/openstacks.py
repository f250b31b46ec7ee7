"""Openstacks ladder: orders, each for a few products; a machine that makes one product at a time; and a goal
to ship every order, each needing a stack from the moment it is started until it is shipped.

Parameters: `orders`; `products`; `extra` (how many products beyond one an order includes at most: each order
includes 1 to 1 + `extra` products drawn uniformly, and every product left out by all orders is then added to
an order drawn uniformly, so each product is wanted); `open` (stacks open and free at the start: 0 as in the
IPC 2006 problems, or more); `goals` (how many orders, drawn uniformly, must be shipped; the IPC problems ship
every order). The counts run from `n0` to one per order. Object names follow the IPC problems: `o<i>`, `p<i>`,
`n<i>`.
"""

from __future__ import annotations

import random
from itertools import pairwise

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    orders = [f"o{i}" for i in range(1, p["orders"] + 1)]
    products = [f"p{i}" for i in range(1, p["products"] + 1)]
    counts = [f"n{i}" for i in range(len(orders) + 1)]
    wants = {o: set(rng.sample(products, min(len(products), rng.randint(1, 1 + p["extra"])))) for o in orders}
    for product in products:
        if not any(product in wanted for wanted in wants.values()):
            wants[rng.choice(orders)].add(product)
    init = ["(machine-available)", f"(stacks-avail n{min(p['open'], len(orders))})"]
    init += [f"(next-count {a} {b})" for a, b in pairwise(counts)]
    for o in orders:
        init.append(f"(waiting {o})")
        init += [f"(includes {o} {x})" for x in products if x in wants[o]]
    shipped = sorted(rng.sample(orders, min(p["goals"], len(orders))), key=orders.index)
    goal = " ".join(f"(shipped {o})" for o in shipped)
    objects = f"{' '.join(counts)} - count {' '.join(orders)} - order {' '.join(products)} - product"
    return (f"(define (problem {name}) (:domain openstacks-sequencedstrips)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {goal})))\n")


GENERATOR = LadderGenerator(
    world="openstacks",
    bands={
        "easy": {"orders": (1, 3), "products": (1, 3), "extra": (0, 1), "open": (0, 1), "goals": (1, 2)},
        "medium": {"orders": (3, 4), "products": (2, 4), "extra": (0, 2), "open": (0, 1), "goals": (3, 4)},
        "hard": {"orders": (5, 6), "products": (4, 6), "extra": (0, 2), "open": (0, 1), "goals": (5, 6)},
    },
    build=build,
)
