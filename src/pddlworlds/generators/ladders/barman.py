"""Barman ladder: `shots` shot glasses to fill with cocktails or plain ingredients, drawn by the `generated`
split's generator (`generators.barman`, the IPC-2011 problem layout without action costs); `level` picks
that generator's goal limits (0 easy, 1 medium, 2 hard: how many distinct cocktails and cocktail shots).
"""

from __future__ import annotations

import random

from ..barman import GENERATOR as LEVELLED
from ..base import LEVELS
from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    return LEVELLED.build(rng, p["shots"], name, LEVELS[p["level"]])[0]


GENERATOR = LadderGenerator(
    world="barman",
    bands={
        "easy": {"shots": (1, 2), "level": (0, 0)},
        "medium": {"shots": (2, 3), "level": (1, 1)},
        "hard": {"shots": (6, 7), "level": (2, 2)},
    },
    build=build,
    # LM-cut needs minutes for the 20-odd-step plans of the hard band; merge-and-shrink (bisimulation)
    # proved the public set's 23-step problems (planners/README.md)
    planner="fd-opt-ms-bisim",
)
