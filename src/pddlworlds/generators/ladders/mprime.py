"""Mystery Prime ladder: the AIPS-98 disguised transport world in which fuel can also be passed between
locations. Locations (named after foods) joined by two-way roads, each with a stock of fuel that every
departure from it uses up one unit of, and that can be passed one unit at a time from a location holding at
least two units to any other; vehicles (named after pleasures) with free cargo space; cargo (named after
pains) at locations, and a goal location for some of it.

Parameters: `locations`; `roads` (roads beyond a random spanning tree, between distinct locations drawn
uniformly); `vehicles` (at locations drawn uniformly); `space` (the space levels above full, named after
planets in alphabetical order from full up; each vehicle starts with 1 up to `space` free places); `cargo`
(at locations drawn uniformly); `goals` (how many cargo items, drawn uniformly, must end at a location
other than their start, drawn uniformly). The fuel comes from a plan played forwards: each goal item is
given to a vehicle drawn uniformly, and each vehicle fetches as many of its items as it has room for (in a
random order, along shortest roads) and then drops them off (in a random order), again until all are
delivered; each location starts with as much fuel as that plan leaves it from, plus `spare` units at
locations drawn uniformly. Then `transfers` times a unit moves from a location drawn uniformly among those
with fuel to another with fuel, so that the plan must first pass it back. Every problem is therefore
solvable. The fuel levels are named after provinces in alphabetical order from empty up, as many as the
fullest location needs. As in the IPC problems, the objects are common words and their kinds the one-place
predicates `food`, `pleasure`, `pain`, `province` and `planet`.
"""

from __future__ import annotations

import itertools
import random
from collections import deque

from .base import LadderGenerator

__all__ = ["GENERATOR"]

def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Words of the kinds the IPC problems draw their names from.
FOODS = _words(
    "apple arugula bacon baguette beef broccoli cherry chicken cod cucumber endive flounder grapefruit "
    "guava ham kale lamb lemon lettuce lobster melon muffin mutton okra onion orange papaya pea pear "
    "pepper pork potato rice scallop shrimp tofu tomato tuna turkey yogurt"
)
PLEASURES = _words(
    "achievement aesthetics curiosity empathy entertainment excitement expectation learning love rest "
    "satiety satisfaction stimulation triumph understanding"
)
PAINS = _words(
    "abrasion anger angina anxiety boils depression dread grief hangover jealousy laceration loneliness "
    "prostatitis sciatica"
)
PROVINCES = _words(
    "alsace arizona bavaria bosnia goias guanabara kentucky manitoba moravia oregon pennsylvania quebec "
    "surrey"
)
PLANETS = _words(
    "earth jupiter mars mercury neptune pluto saturn uranus venus vulcan"
)


def _path(roads: dict[str, list[str]], start: str, end: str) -> list[str]:
    """The locations of a shortest road path from `start` to `end`, both included."""
    before = {start: start}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        for there in roads[here]:
            if there not in before:
                before[there] = here
                queue.append(there)
    path = [end]
    while path[-1] != start:
        path.append(before[path[-1]])
    return path[::-1]


def _draw(rng: random.Random, p: dict[str, int]):
    """One draw of the map, the objects, the deliveries and the fuel (see the module docstring)."""
    places = rng.sample(FOODS, p["locations"])
    vehicles = rng.sample(PLEASURES, p["vehicles"])
    cargo = rng.sample(PAINS, p["cargo"])
    roads: list[tuple[str, str]] = []
    for i in range(1, len(places)):  # a random spanning tree, then extra roads
        roads.append((places[rng.randrange(i)], places[i]))
    pairs = [(a, b) for i, a in enumerate(places) for b in places[i + 1:]]
    for _ in range(p["roads"]):
        a, b = rng.choice(pairs)
        if (a, b) not in roads and (b, a) not in roads:
            roads.append((a, b))
    neighbours: dict[str, list[str]] = {x: [] for x in places}
    for a, b in roads:
        neighbours[a].append(b)
        neighbours[b].append(a)
    start = {v: rng.choice(places) for v in vehicles} | {c: rng.choice(places) for c in cargo}
    room = {v: rng.randint(1, p["space"]) for v in vehicles}
    # the deliveries: a vehicle drawn for each cargo item to deliver, each vehicle fetching as many of its
    # items as it has room for (in a random order, along shortest roads) and then dropping them off (in a
    # random order), counting the departures from each place
    at, departures = dict(start), {x: 0 for x in places}
    goal_cargo = sorted(rng.sample(cargo, min(p["goals"], len(cargo))), key=cargo.index)
    target = {c: rng.choice([x for x in places if x != start[c]]) for c in goal_cargo}
    mine: dict[str, list[str]] = {v: [] for v in vehicles}
    for c in goal_cargo:
        mine[rng.choice(vehicles)].append(c)
    for v in vehicles:
        items = list(mine[v])
        rng.shuffle(items)
        for first in range(0, len(items), room[v]):
            chunk = items[first:first + room[v]]
            for stop in [at[c] for c in chunk] + [target[c] for c in rng.sample(chunk, len(chunk))]:
                for here in _path(neighbours, at[v], stop)[:-1]:
                    departures[here] += 1
                at[v] = stop
    needed = dict(departures)
    for _ in range(p["spare"]):
        needed[rng.choice(places)] += 1
    # passes of fuel undone: a unit moves from x to y, so that passing it back from y (which then holds at
    # least two) to x, before anything else, restores what the deliveries need
    fuel = dict(needed)
    for _ in range(p["transfers"]):
        x = rng.choice([x for x in places if fuel[x] >= 1])
        takers = [y for y in places if y != x and fuel[y] >= 1]
        if takers:
            y = rng.choice(takers)
            fuel[x] -= 1
            fuel[y] += 1
    top = max(max(fuel.values()), max(needed.values()))
    return places, vehicles, cargo, roads, start, room, target, fuel, top


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    while True:  # drawn again in the rare case that a place would need more fuel levels than there are names
        places, vehicles, cargo, roads, start, room, target, fuel, top = _draw(rng, p)
        if top < len(PROVINCES):
            break
    fuel_levels = sorted(rng.sample(PROVINCES, top + 1))  # alphabetical from the bottom: [0] is empty
    space = sorted(rng.sample(PLANETS, p["space"] + 1))  # alphabetical from the bottom: [0] is full
    init = [f"(food {x})" for x in places] + [f"(pleasure {v})" for v in vehicles] + [f"(pain {c})" for c in cargo]
    init += [f"(province {f})" for f in fuel_levels] + [f"(planet {s})" for s in space]
    init += [f"(attacks {a} {b})" for a, b in itertools.pairwise(fuel_levels)]
    init += [f"(orbits {a} {b})" for a, b in itertools.pairwise(space)]
    for a, b in roads:
        init += [f"(eats {a} {b})", f"(eats {b} {a})"]
    init += [f"(locale {x} {fuel_levels[fuel[x]]})" for x in places]
    for v in vehicles:
        init += [f"(craves {v} {start[v]})", f"(harmony {v} {space[room[v]]})"]
    init += [f"(craves {c} {start[c]})" for c in cargo]
    goal = [f"(craves {c} {target[c]})" for c in cargo if c in target]
    objects = " ".join([*places, *vehicles, *cargo, *fuel_levels, *space])
    return (f"(define (problem {name}) (:domain mystery-prime-strips)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="mprime",
    bands={
        "easy": {"locations": (3, 4), "roads": (0, 1), "spare": (0, 1), "transfers": (0, 1), "vehicles": (1, 1),
                 "space": (1, 2), "cargo": (1, 2), "goals": (1, 2)},
        "medium": {"locations": (4, 5), "roads": (0, 1), "spare": (0, 1), "transfers": (1, 2), "vehicles": (1, 1),
                   "space": (1, 2), "cargo": (3, 4), "goals": (3, 3)},
        "hard": {"locations": (4, 4), "roads": (0, 0), "spare": (0, 0), "transfers": (0, 1), "vehicles": (1, 1),
                 "space": (2, 2), "cargo": (6, 6), "goals": (6, 6)},
    },
    build=build,
)
