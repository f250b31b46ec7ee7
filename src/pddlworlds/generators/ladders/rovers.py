"""Rovers ladder: waypoints in sight of one another, a lander, rovers that can drive part of the map, soil
and rock samples at some waypoints, cameras and objectives, and data the lander must receive, in the shape
of the IPC 2002/2006 problems.

Parameters: `waypoints`; `extra_sight` (pairs of waypoints in sight of each other beyond a random spanning
tree, two-way as in the competition); `rovers` (each with a store `rover<i>store`, able to drive along a
random spanning tree of the lines of sight, so it reaches every waypoint; each can analyse soil, rock or
take images at random, with every skill a goal needs given to at least one rover); `objectives` (each
visible from one to three random waypoints); and `goals`, each drawn at random as a soil goal or a rock goal
(a waypoint with such a sample whose analysis must reach the lander; at most one per waypoint) or an image
goal (an objective in a mode some camera takes, whose image must reach the lander); fewer where the map has
too few waypoints or objective-mode pairs for the draw. Each imaging rover carries one camera, calibrated
by sighting a random objective, taking images in one to three of the modes `colour`, `high_res` and
`low_res`. Object names follow the IPC problems: `waypoint<i>`, `rover<i>`,
`rover<i>store`, `camera<i>`, `objective<i>` from 0, the lander `general`.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]

MODES = ["colour", "high_res", "low_res"]


def _tree(rng: random.Random, nodes: list[int],
          edges: set[tuple[int, int]] | None = None) -> list[tuple[int, int]]:
    """A random spanning tree of `nodes` (within `edges`, two-way pairs, when given), as sorted pairs."""
    order = list(nodes)
    rng.shuffle(order)
    inside, tree = [order[0]], []
    rest = order[1:]
    while rest:
        options = [(a, b) for b in rest for a in inside if edges is None or (min(a, b), max(a, b)) in edges]
        a, b = options[rng.randrange(len(options))]
        tree.append((min(a, b), max(a, b)))
        inside.append(b)
        rest.remove(b)
    return sorted(tree)


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    n = p["waypoints"]
    wp = [f"waypoint{i}" for i in range(n)]
    sight = set(_tree(rng, list(range(n))))
    others = [(i, j) for i in range(n) for j in range(i + 1, n) if (i, j) not in sight]
    sight |= set(rng.sample(others, min(p["extra_sight"], len(others))))
    sight_pairs = sorted(sight)
    rovers = [f"rover{i}" for i in range(p["rovers"])]
    kinds = [rng.randrange(3) for _ in range(p["goals"])]  # 0 soil, 1 rock, 2 image
    wanted = [min(kinds.count(k), n) for k in range(2)] + [kinds.count(2)]
    skills = {r: [rng.random() < 0.6 for _ in range(3)] for r in rovers}  # soil, rock, imaging
    needed = [count > 0 for count in wanted]
    for k in range(3):
        if needed[k] and not any(skills[r][k] for r in rovers):
            skills[rng.choice(rovers)][k] = True
    objectives = [f"objective{i}" for i in range(p["objectives"])]
    seen_from = {o: sorted(rng.sample(range(n), rng.randint(1, min(3, n)))) for o in objectives}
    cameras, camera_modes, camera_target = [], {}, {}
    for r in rovers:
        if skills[r][2]:
            camera = f"camera{len(cameras)}"
            cameras.append(camera)
            camera_modes[camera] = (r, sorted(rng.sample(MODES, rng.randint(1, 3)), key=MODES.index))
            camera_target[camera] = rng.choice(objectives)
    soil = sorted(rng.sample(range(n), rng.randint(max(1, wanted[0]), n)))
    rock = sorted(rng.sample(range(n), rng.randint(max(1, wanted[1]), n)))
    lander = rng.randrange(n)
    init = [f"(visible waypoint{a} waypoint{b})" for i, j in sight_pairs for a, b in ((i, j), (j, i))]
    init += [f"(at_soil_sample waypoint{i})" for i in soil] + [f"(at_rock_sample waypoint{i})" for i in rock]
    init += [f"(at_lander general waypoint{lander})", "(channel_free general)"]
    for r in rovers:
        init += [f"(at {r} waypoint{rng.randrange(n)})", f"(available {r})", f"(store_of {r}store {r})",
                 f"(empty {r}store)"]
        for k, skill in enumerate(("soil", "rock")):
            if skills[r][k]:
                init.append(f"(equipped_for_{skill}_analysis {r})")
        if skills[r][2]:
            init.append(f"(equipped_for_imaging {r})")
        for i, j in _tree(rng, list(range(n)), sight):
            init += [f"(can_traverse {r} waypoint{i} waypoint{j})",
                     f"(can_traverse {r} waypoint{j} waypoint{i})"]
    for camera in cameras:
        rover, modes = camera_modes[camera]
        init += [f"(on_board {camera} {rover})", f"(calibration_target {camera} {camera_target[camera]})"]
        init += [f"(supports {camera} {m})" for m in modes]
    for o in objectives:
        init += [f"(visible_from {o} waypoint{i})" for i in seen_from[o]]
    goal = [f"(communicated_soil_data waypoint{i})" for i in sorted(rng.sample(soil, wanted[0]))]
    goal += [f"(communicated_rock_data waypoint{i})" for i in sorted(rng.sample(rock, wanted[1]))]
    takeable = sorted({m for _, modes in camera_modes.values() for m in modes}, key=MODES.index)
    pairs = [(o, m) for o in objectives for m in takeable]
    goal += [f"(communicated_image_data {o} {m})"
             for o, m in sorted(rng.sample(pairs, min(wanted[2], len(pairs))))]
    objects = (f"general - lander {' '.join(MODES)} - mode {' '.join(rovers)} - rover "
               f"{' '.join(r + 'store' for r in rovers)} - store {' '.join(wp)} - waypoint "
               + (f"{' '.join(cameras)} - camera " if cameras else "")
               + f"{' '.join(objectives)} - objective")
    return (f"(define (problem {name}) (:domain rover)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="rovers",
    bands={
        "easy": {"waypoints": (3, 4), "extra_sight": (1, 3), "rovers": (1, 1), "objectives": (1, 2),
                 "goals": (1, 2)},
        "medium": {"waypoints": (4, 5), "extra_sight": (1, 4), "rovers": (1, 2), "objectives": (2, 3),
                   "goals": (4, 5)},
        "hard": {"waypoints": (5, 6), "extra_sight": (2, 5), "rovers": (1, 1), "objectives": (2, 3),
                 "goals": (6, 7)},
    },
    build=build,
)
