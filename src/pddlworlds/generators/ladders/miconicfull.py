"""Miconic (full ADL) ladder: an elevator, floors one above the other, passengers going from one floor to
another, and the house rules of the AIPS-2000 full-ADL Miconic problems.

Floors `f0` (the lowest) to `f<floors-1>`, every floor above every lower one (`above` is the order's full
list, as in the IPC files); each passenger goes from a random floor to a random other floor; the lift
starts at `f0`, as there. With `group_a` above 0, that many passengers (drawn at random) are in group A
and all the others in group B, and the two groups never share the lift (the IPC files put every passenger
in one of the two groups); passengers of the two groups then wait at different floors where the floors
allow it (a stop lets in everyone waiting, so two groups waiting at one floor could never be served). Then `rules` times a random passenger gets a random one of the other rules: rides
only in its trip's direction (going up or going down), is a VIP (served before anyone else), rides
nonstop, must never be alone (and a random other passenger becomes an attendant), or is barred from a
random floor other than its own two. The goal is every passenger served (`forall`, as in the IPC files).

Parameters: `floors`, `passengers`, `group_a`, `rules`. Object names follow the IPC problems: `f<i>`,
`p<k>`. Some draws cannot be solved (the rules contradict each other); the ladder builder refuses those.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]

RULES = ("direction", "vip", "going_nonstop", "never_alone", "no-access")


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    floors = [f"f{i}" for i in range(p["floors"])]
    people = [f"p{k}" for k in range(p["passengers"])]
    group = {x: "" for x in people}
    if p["group_a"]:
        group_a = rng.sample(people, min(p["group_a"], len(people)))
        group = {x: "A" if x in group_a else "B" for x in people}
    trips: dict[str, list[int]] = {}
    for person in people:
        # two groups waiting at one floor would board together at any stop there: never solvable
        taken = {trips[x][0] for x in trips if group[x] and group[x] != group[person]}
        origins = [i for i in range(len(floors)) if i not in taken] or list(range(len(floors)))
        origin = rng.choice(origins)
        trips[person] = [origin, rng.choice([i for i in range(len(floors)) if i != origin])]
    rules = [f"(conflict_{group[x]} {x})" for x in people if group[x]]
    for _ in range(p["rules"]):
        person, rule = rng.choice(people), rng.choice(RULES)
        origin, destin = trips[person]
        if rule == "direction":
            fact = f"(going_{'up' if destin > origin else 'down'} {person})"
        elif rule == "never_alone":
            helper = rng.choice([x for x in people if x != person] or people)
            fact = f"(never_alone {person})"
            if f"(attendant {helper})" not in rules:
                rules.append(f"(attendant {helper})")
        elif rule == "no-access":
            barred = [f for i, f in enumerate(floors) if i not in (origin, destin)]
            if not barred:
                continue
            fact = f"(no-access {person} {rng.choice(barred)})"
        else:
            fact = f"({rule} {person})"
        if fact not in rules:
            rules.append(fact)
    init = [f"(above {floors[i]} {floors[j]})" for i in range(len(floors)) for j in range(i + 1, len(floors))]
    for person in people:
        origin, destin = trips[person]
        init += [f"(origin {person} {floors[origin]})", f"(destin {person} {floors[destin]})"]
    init += rules + [f"(lift-at {floors[0]})"]
    return (f"(define (problem {name})\n  (:domain miconic)\n"
            f"  (:objects {' '.join(people)} - passenger\n    {' '.join(floors)} - floor)\n"
            f"  (:init {' '.join(init)})\n  (:goal (forall (?p - passenger) (served ?p))))\n")


GENERATOR = LadderGenerator(
    world="miconicfull",
    bands={
        "easy": {"floors": (2, 4), "passengers": (1, 2), "group_a": (0, 1), "rules": (0, 2)},
        "medium": {"floors": (5, 7), "passengers": (3, 5), "group_a": (0, 2), "rules": (1, 3)},
        "hard": {"floors": (12, 16), "passengers": (8, 10), "group_a": (1, 3), "rules": (2, 4)},
    },
    build=build,
)
