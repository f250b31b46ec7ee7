"""Scanalyzer ladder: conveyor belts in two rows (`in` and `out`), a car (a plant on a carrier) on every
segment, cycles that swap cars between an in-belt and an out-belt, some of them through the imaging chamber,
and a goal asking some cars to be analysed and every car to stand on a given segment.

Parameters: `layout`, the belts: 1, one in-belt and one out-belt of one segment each, and cycles of two
segments, one from each row (2 cars); 2, two belts a row so (4 cars); 3, one belt a row of two segments, `a`
and `b`, and cycles of four, the two halves of an in-belt with the two of an out-belt, as in the IPC's second
problem family (4 cars); 4, three belts a row of one segment (6 cars); `chamber` (which cycles pass the
imaging chamber: 0 every cycle, 1 those through the first out-belt, 2 only the first in-belt with the first
out-belt, the three variants of the IPC problems); `analyse` (how many cars, drawn uniformly, must be
analysed); `shuffle` (how many random cycle moves lead from the start to the goal's positions: 0 means every
car back where it started, as in the IPC problems). Object names follow the IPC problems: `seg-in-<i>`,
`seg-out-<i>` (`seg-in-<i>a` and `...b` with halves), and the car first on a segment is named after it
(`car-in-1` on `seg-in-1`).
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]

#: layout -> (belts a row, whether each belt has two halves)
LAYOUTS = {1: (1, False), 2: (2, False), 3: (1, True), 4: (3, False)}


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    n, halved = LAYOUTS[p["layout"]]
    halves = ("a", "b") if halved else ("",)
    ins = [[f"seg-in-{i}{h}" for h in halves] for i in range(1, n + 1)]
    outs = [[f"seg-out-{i}{h}" for h in halves] for i in range(1, n + 1)]
    segments = [s for belt in ins + outs for s in belt]
    cars = {s: "car" + s[3:] for s in segments}
    cycles, analysing = [], []
    for i, belt_in in enumerate(ins):
        for j, belt_out in enumerate(outs):
            cycle = (*belt_in, *belt_out)
            cycles.append(cycle)
            if p["chamber"] == 0 or (p["chamber"] == 1 and j == 0) or (i == 0 and j == 0):
                analysing.append(cycle)
    # the goal's positions: a few random cycle moves away from the start (so they can be reached)
    where = {s: cars[s] for s in segments}
    for _ in range(p["shuffle"]):
        cycle = rng.choice(cycles)
        moved = [where[s] for s in cycle]
        # a cycle's car on s1 goes to the last segment, every other one place back
        for k, s in enumerate(cycle):
            where[s] = moved[(k + 1) % len(cycle)]
    kind = "CYCLE-4" if halved else "CYCLE-2"
    init = [f"({kind} {' '.join(c)})" for c in cycles]
    init += [f"({kind}-WITH-ANALYSIS {' '.join(c)})" for c in analysing]
    init += [f"(on {cars[s]} {s})" for s in segments]
    every_car = [cars[s] for s in segments]
    chosen = sorted(rng.sample(every_car, min(p["analyse"], len(every_car))), key=every_car.index)
    goal = [f"(analyzed {c})" for c in chosen] + [f"(on {where[s]} {s})" for s in segments]
    objects = " ".join(every_car) + " - car " + " ".join(segments) + " - segment"
    return (f"(define (problem {name}) (:domain scanalyzer3d)\n  (:objects {objects})\n"
            f"  (:init (= (total-cost) 0) {' '.join(init)})\n  (:goal (and {' '.join(goal)}))\n"
            "  (:metric minimize (total-cost)))\n")


GENERATOR = LadderGenerator(
    world="scanalyzer",
    bands={
        "easy": {"layout": (1, 3), "chamber": (0, 2), "analyse": (1, 2), "shuffle": (0, 1)},
        "medium": {"layout": (2, 4), "chamber": (0, 2), "analyse": (3, 5), "shuffle": (1, 2)},
        "hard": {"layout": (4, 4), "chamber": (1, 2), "analyse": (5, 6), "shuffle": (0, 2)},
    },
    build=build,
)
