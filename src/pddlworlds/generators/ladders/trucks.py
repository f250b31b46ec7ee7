"""Trucks ladder: places all joined by roads, trucks whose load space is a row of areas, packages to
deliver at other places, some by a deadline, drawn as the IPC 2006 problems are laid out.

Parameters: `places` (every two joined by a road), `trucks` (each at a random place), `areas` (each
truck's load areas `a1` ... , `a1` nearest the door: an area is loaded or unloaded only while every area
nearer the door is free), `packages` (each at a random place, bound for a random other place),
`deadlines` (how many of the packages must be delivered by a time step; the others only delivered), and
`slack` (time steps beyond the schedule below). Deadlines and the clock come from a schedule that always
works: the first truck takes the packages one at a time, in a random order, straight to their places;
a package's deadline is the step it is delivered there, and the clock runs to the schedule's last step
plus `slack`. Time steps are `t0` ... ; as in the IPC files, `le` holds from `t1` on, so nothing is
delivered before the first drive. Object names are the IPC's: `truck<k>`, `package<k>`, `l<i>`, `t<n>`,
`a<k>`.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    places = [f"l{i}" for i in range(1, p["places"] + 1)]
    trucks = [f"truck{k}" for k in range(1, p["trucks"] + 1)]
    packages = [f"package{k}" for k in range(1, p["packages"] + 1)]
    areas = [f"a{k}" for k in range(1, p["areas"] + 1)]
    truck_at = {t: rng.choice(places) for t in trucks}
    start = {pk: rng.choice(places) for pk in packages}
    end = {pk: rng.choice([x for x in places if x != start[pk]]) for pk in packages}
    # the schedule that always works: the first truck carries one package at a time
    clock, here, due = 0, truck_at[trucks[0]], {}
    for pk in rng.sample(packages, len(packages)):
        clock += (here != start[pk]) + 1
        here = end[pk]
        due[pk] = clock
    top = clock + p["slack"]
    times = [f"t{n}" for n in range(top + 1)]
    init = [f"(at {t} {truck_at[t]})" for t in trucks]
    init += [f"(free {a} {t})" for t in trucks for a in areas]
    init += [f"(closer {a} {b})" for i, a in enumerate(areas) for b in areas[i + 1:]]
    init += [f"(at {pk} {start[pk]})" for pk in packages]
    init += [f"(connected {a} {b})" for a in places for b in places if a != b]
    init += ["(time-now t0)"] + [f"(le t{i} t{j})" for i in range(1, top + 1) for j in range(i, top + 1)]
    init += [f"(next t{n} t{n + 1})" for n in range(top)]
    timed = rng.sample(packages, min(p["deadlines"], len(packages)))
    goal = [f"(delivered {pk} {end[pk]} t{due[pk]})" if pk in timed else f"(at-destination {pk} {end[pk]})"
            for pk in packages]
    objects = " ".join([*(f"{t} - truck" for t in trucks), *(f"{pk} - package" for pk in packages),
                        *(f"{x} - location" for x in places), *(f"{t} - time" for t in times),
                        *(f"{a} - truckarea" for a in areas)])
    return (f"(define (problem {name}) (:domain Trucks)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="trucks",
    bands={
        "easy": {"places": (2, 3), "trucks": (1, 1), "areas": (1, 2), "packages": (1, 2), "deadlines": (0, 2),
                 "slack": (0, 1)},
        "medium": {"places": (3, 3), "trucks": (1, 1), "areas": (2, 2), "packages": (3, 4), "deadlines": (1, 3),
                   "slack": (0, 1)},
        "hard": {"places": (3, 4), "trucks": (1, 1), "areas": (1, 1), "packages": (5, 6), "deadlines": (2, 4),
                 "slack": (0, 1)},
    },
    build=build,
)
