"""Satellite ladder: satellites with instruments on board, observation modes, calibration targets and
directions to photograph, drawn as the IPC 2002 STRIPS generator draws them.

Parameters: `satellites`, `instruments` (on board each satellite), `modes` (observation modes; each
instrument supports a random non-empty set of them), `stations` (the first directions, calibration
targets: each instrument calibrates on a random one), `directions` (directions beyond the stations),
`images` (goal images: distinct pairs of a random non-station direction and a mode some instrument
supports), and `pointings` (satellites that must end pointing at a random direction). Each satellite
starts with power available, pointing at a random direction. Object names follow the IPC problems:
`satellite<k>`, `instrument<k>` (numbered across satellites), modes such as `image1` or `infrared0`
(a kind and the mode's number), stations `Star<n>` or `GroundStation<n>`, other directions `Star<n>`,
`Planet<n>` or `Phenomenon<n>`.
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]

MODE_KINDS = ("image", "infrared", "spectrograph", "thermograph")


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    satellites = [f"satellite{k}" for k in range(p["satellites"])]
    modes = [f"{rng.choice(MODE_KINDS)}{k}" for k in range(p["modes"])]
    stations = [f"{rng.choice(('Star', 'GroundStation'))}{n}" for n in range(p["stations"])]
    targets = [f"{rng.choice(('Star', 'Planet', 'Phenomenon'))}{n}"
               for n in range(p["stations"], p["stations"] + p["directions"])]
    directions = stations + targets
    init: list[str] = []
    instruments: list[str] = []
    supported: list[str] = []
    for satellite in satellites:
        init.append(f"(satellite {satellite})")
        for _ in range(p["instruments"]):
            instrument = f"instrument{len(instruments)}"
            instruments.append(instrument)
            own = rng.sample(modes, rng.randint(1, len(modes)))
            supported += [m for m in own if m not in supported]
            init.append(f"(instrument {instrument})")
            init += [f"(supports {instrument} {m})" for m in own]
            init.append(f"(calibration_target {instrument} {rng.choice(stations)})")
            init.append(f"(on_board {instrument} {satellite})")
        init += [f"(power_avail {satellite})", f"(pointing {satellite} {rng.choice(directions)})"]
    init += [f"(mode {m})" for m in modes] + [f"(direction {d})" for d in directions]
    wanted = [(d, m) for d in targets for m in modes if m in supported]
    goal = [f"(have_image {d} {m})" for d, m in rng.sample(wanted, min(p["images"], len(wanted)))]
    goal += [f"(pointing {s} {rng.choice(directions)})"
             for s in sorted(rng.sample(satellites, min(p["pointings"], len(satellites))))]
    objects = "\n    ".join([*satellites, *instruments, *modes, *directions])
    return (f"(define (problem {name}) (:domain satellite)\n  (:objects\n    {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


GENERATOR = LadderGenerator(
    world="satellite",
    bands={
        "easy": {"satellites": (1, 1), "instruments": (1, 1), "modes": (1, 2), "stations": (1, 2),
                 "directions": (2, 3), "images": (1, 2), "pointings": (0, 1)},
        "medium": {"satellites": (1, 2), "instruments": (1, 2), "modes": (2, 3), "stations": (2, 2),
                   "directions": (4, 6), "images": (5, 7), "pointings": (0, 1)},
        "hard": {"satellites": (1, 2), "instruments": (1, 2), "modes": (2, 3), "stations": (2, 3),
                 "directions": (8, 10), "images": (11, 13), "pointings": (0, 2)},
    },
    build=build,
)
