"""Barman ladder. Easy and medium: `shots` goal shots drawn by the `generated` split's generator
(`generators.barman`, the IPC-2011 problem layout without action costs), `level` picking that generator's goal
limits (0 easy, 1 medium: one cocktail, the other goal shots plain ingredients). Hard: the public files' hard
goal kind, two goal shots of two distinct cocktails among `cocktails` cocktails (one shot more than
cocktails), 23-odd steps; more goal shots (six or seven, at the hard level) were not proved within 300 s.
"""

from __future__ import annotations

import random

from ..barman import GENERATOR as LEVELLED
from ..barman import distinct_cocktails_problem
from ..base import LEVELS
from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    if "cocktails" in p:
        return distinct_cocktails_problem(rng, p["cocktails"], 2, name)
    return LEVELLED.build(rng, p["shots"], name, LEVELS[p["level"]])[0]


GENERATOR = LadderGenerator(
    world="barman",
    bands={
        "easy": {"shots": (1, 2), "level": (0, 0)},
        "medium": {"shots": (2, 3), "level": (1, 1)},
        "hard": {"cocktails": (2, 5)},
    },
    build=build,
    # LM-cut needs minutes for the 20-odd-step plans of the hard band; merge-and-shrink (bisimulation)
    # proved the public set's 23-step problems (planners/README.md)
    planner="fd-opt-ms-bisim",
)
