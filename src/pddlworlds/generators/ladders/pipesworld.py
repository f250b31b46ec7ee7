"""Pipesworld (no tankage) ladder: areas joined by pipeline segments that are always full of batches of
oil products; a batch pushed in at one end of a segment drives the batch at the other end out into that
end's area. Batches lie in areas and fill the segments, and the goal puts some batches in given areas.

Parameters: `areas` (joined by segments along a random spanning tree; the segment between `A<i>` and
`A<j>`, i < j, runs from `A<i>` to `A<j>`); `length` (each segment holds 1 up to `length` batches, drawn
uniformly; a segment of one batch moves in one action, a longer one in two, start and
finish); `stock` (batches lying in areas at the start, besides those filling the segments, each in an area
drawn uniformly); `products` (the batches are of the first `products` of lco, gasoleo, rat-a, oca1 and
oc1b, drawn uniformly, those in a segment only among the products that may touch their neighbour: as in
the IPC's table, rat-a may not touch oca1 or oc1b); `depth` (segment moves, each a push or a pop, between
the start and the goal: a breadth-first search over the moves draws a state among those `depth` moves away
and no fewer, or among the deepest it reached when the search grows past `SEARCH_BOUND` states or runs
out). The goal puts every batch that lies in an area in that state, other than its area at the start,
there; the problem is drawn again when there is none. The goal is reachable by construction. Object
names follow the IPC problems: areas `A<i>` from 1, segments `S<i><j>`, batches `B<k>` from 0.
"""

from __future__ import annotations

import itertools
import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]

PRODUCTS = ("lco", "gasoleo", "rat-a", "oca1", "oc1b")
#: States the goal's breadth-first search may visit before it stops at the layer it has reached.
SEARCH_BOUND = 20000
#: Pairs of products that may not touch in a segment (the IPC table allows every other pair).
APART = {("rat-a", "oca1"), ("rat-a", "oc1b")}


def may_touch(a: str, b: str) -> bool:
    return (a, b) not in APART and (b, a) not in APART


def _moves(pipes, state, product):
    """The segment moves from `state` (pipe contents in pipe order, then each batch's area or None), as
    successor states, in a fixed order."""
    contents, areas = state
    out = []
    for k, (pipe, (start, end)) in enumerate(pipes.items()):
        inside = contents[k]
        for batch, area in enumerate(areas):
            if area == start and may_touch(product[batch], product[inside[0]]):  # push
                moved = list(areas)
                moved[batch], moved[inside[-1]] = None, end
                out.append((contents[:k] + ((batch,) + inside[:-1],) + contents[k + 1:], tuple(moved)))
            if area == end and may_touch(product[batch], product[inside[-1]]):  # pop
                moved = list(areas)
                moved[batch], moved[inside[0]] = None, start
                out.append((contents[:k] + (inside[1:] + (batch,),) + contents[k + 1:], tuple(moved)))
    return out


def _far_state(rng: random.Random, depth: int, pipes, start, product):
    """A state drawn among those `depth` segment moves from `start` and no fewer (breadth first; the
    deepest layer reached when the search grows past its bound or runs out)."""
    seen = {start}
    layer = [start]
    for _ in range(depth):
        following = []
        for state in layer:
            for after in _moves(pipes, state, product):
                if after not in seen:
                    seen.add(after)
                    following.append(after)
        if not following or len(seen) > SEARCH_BOUND:
            break
        layer = following
    return layer[rng.randrange(len(layer))]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    areas = [f"A{i}" for i in range(1, p["areas"] + 1)]
    while True:
        joined = [(rng.randrange(i), i) for i in range(1, len(areas))]  # a random spanning tree
        pipes = {f"S{i + 1}{j + 1}": (areas[i], areas[j]) for i, j in sorted(joined)}
        sizes = {pipe: rng.randint(1, p["length"]) for pipe in pipes}
        total = sum(sizes.values()) + p["stock"]
        batches = [f"B{k}" for k in range(total)]
        order = list(batches)
        rng.shuffle(order)
        kinds = PRODUCTS[:p["products"]]
        product: dict[str, str] = {}
        contents: dict[str, list[str]] = {}
        for pipe in pipes:  # fill each segment with batches whose neighbours may touch
            contents[pipe] = [order.pop() for _ in range(sizes[pipe])]
            for before, batch in zip([None, *contents[pipe]], contents[pipe]):
                product[batch] = rng.choice([k for k in kinds if before is None or may_touch(k, product[before])])
        for batch in sorted(order, key=batches.index):
            product[batch] = rng.choice(kinds)
        on = {b: rng.choice(areas) for b in order}
        index = {b: k for k, b in enumerate(batches)}
        origin = (tuple(tuple(index[b] for b in contents[pipe]) for pipe in pipes),
                  tuple(on.get(b) for b in batches))
        _, final = _far_state(rng, p["depth"], pipes, origin, [product[b] for b in batches])
        moved = [b for k, b in enumerate(batches) if final[k] is not None and final[k] != on.get(b)]
        if moved:
            break
    goal = moved
    init = [f"(normal {pipe})" for pipe in pipes]
    init += [f"(may-interface {a} {b})" for a in PRODUCTS for b in PRODUCTS if may_touch(a, b)]
    init += [f"(connect {start} {end} {pipe})" for pipe, (start, end) in pipes.items()]
    init += [f"(is-product {b} {product[b]})" for b in batches]
    init += [f"(on {b} {on[b]})" for b in batches if b in on]
    for pipe, inside in contents.items():
        init.append(f"(first {inside[0]} {pipe})")
        init += [f"(follow {after} {before})" for before, after in itertools.pairwise(inside)]
        init.append(f"(last {inside[-1]} {pipe})")
    init += [f"({'unitary' if sizes[pipe] == 1 else 'not-unitary'} {pipe})" for pipe in pipes]
    objects = f"{' '.join(batches)} - batch-atom {' '.join(areas)} - area {' '.join(pipes)} - pipe"
    return (f"(define (problem {name}) (:domain pipesworld_strips)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(f'(on {b} {final[index[b]]})' for b in goal)})))\n")


GENERATOR = LadderGenerator(
    world="pipesworld",
    bands={
        "easy": {"areas": (2, 3), "length": (1, 2), "stock": (2, 3),
                 "products": (2, 3), "depth": (2, 5)},
        "medium": {"areas": (3, 4), "length": (1, 2), "stock": (3, 3),
                   "products": (2, 3), "depth": (10, 14)},
        "hard": {"areas": (4, 4), "length": (2, 2), "stock": (3, 3),
                 "products": (2, 3), "depth": (16, 20)},
    },
    build=build,
)
