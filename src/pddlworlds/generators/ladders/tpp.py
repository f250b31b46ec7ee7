"""TPP (Traveling Purchaser) ladder: markets selling goods in small quantities, depots where bought goods
must be stored, and trucks that buy, load, drive and unload, drawn as the IPC 2006 problems are laid out.

Parameters: `goods` (kinds of goods), `markets` (joined by a random tree plus `extra` random roads; every
road goes both ways), `depots` (each joined to a random market; trucks start at a random depot), `trucks`,
`levels` (the largest quantity: amounts are the objects `level0` ... `level<levels>`) and `demand` (the
least amount of a kind the goal asks for). Each market sells a random 0..`levels` units of each kind (at
least one unit of each kind is on sale somewhere), and the goal asks for a random `demand`..`levels` units
of each kind to be stored, never more than is on sale. A market has no facts of a kind it does not sell,
where the IPC's files say it sells none and has bought none (facts no action can use). The hard band
keeps one unit a kind, as the competition's first problems do: with two units a kind, A* with LM-cut
needs minutes on problems of 21 steps and more. Object names are the IPC's: `goods<k>`, `truck<k>`,
`market<k>`, `depot<k>`, `level<n>`.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    goods = [f"goods{k}" for k in range(1, p["goods"] + 1)]
    trucks = [f"truck{k}" for k in range(1, p["trucks"] + 1)]
    markets = [f"market{k}" for k in range(1, p["markets"] + 1)]
    depots = [f"depot{k}" for k in range(1, p["depots"] + 1)]
    top = p["levels"]
    levels = [f"level{n}" for n in range(top + 1)]
    order = rng.sample(markets, len(markets))
    pairs = [(order[i], rng.choice(order[:i])) for i in range(1, len(order))]
    joined = {frozenset(pair) for pair in pairs}
    others = [(a, b) for i, a in enumerate(markets) for b in markets[i + 1:] if frozenset((a, b)) not in joined]
    pairs += rng.sample(others, min(p["extra"], len(others)))
    pairs += [(depot, rng.choice(markets)) for depot in depots]
    init = [f"(next level{n + 1} level{n})" for n in range(top)]
    init += [f"(stored {g} level0)" for g in goods]
    init += [f"(loaded {g} {t} level0)" for g in goods for t in trucks]
    init += [f"(connected {a} {b}) (connected {b} {a})" for a, b in pairs]
    goal = []
    for g in goods:
        sale = [rng.randint(0, top) for _ in markets]
        if sum(sale) == 0:
            sale[rng.randrange(len(markets))] = rng.randint(1, top)
        # a market that sells none of `g` has no facts of it (the IPC files say it has 0 on sale and 0 bought:
        # facts no action can use)
        init += [f"(on-sale {g} {m} level{q}) (ready-to-load {g} {m} level0)" for m, q in zip(markets, sale) if q]
        most = min(top, sum(sale))
        goal.append(f"(stored {g} level{rng.randint(min(p['demand'], most), most)})")
    init += [f"(at {t} {rng.choice(depots)})" for t in trucks]
    objects = (f"{' '.join(goods)} - goods {' '.join(trucks)} - truck {' '.join(markets)} - market "
               f"{' '.join(depots)} - depot {' '.join(levels)} - level")
    return (f"(define (problem {name}) (:domain TPP-Propositional)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="tpp",
    bands={
        "easy": {"goods": (1, 2), "markets": (1, 3), "extra": (0, 1), "depots": (1, 2), "trucks": (1, 2),
                 "levels": (1, 2), "demand": (1, 2)},
        "medium": {"goods": (2, 3), "markets": (1, 2), "extra": (0, 1), "depots": (1, 1), "trucks": (1, 1),
                   "levels": (2, 2), "demand": (1, 2)},
        "hard": {"goods": (5, 7), "markets": (2, 3), "extra": (0, 1), "depots": (1, 2), "trucks": (1, 1),
                 "levels": (1, 1), "demand": (1, 1)},
    },
    build=build,
)
