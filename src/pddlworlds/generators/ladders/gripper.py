"""Gripper ladder: `balls` balls spread over the two rooms, each to end in a room of its own, drawn by the
mixed-rooms generator of the training data (`generators.gripper.MIXED`, the IPC-1998/AgentBoard layout). `level`
picks that generator's level (0 easy, 1 medium, 2 hard) for its other choices.
"""

from __future__ import annotations

import random

from ..base import LEVELS
from ..gripper import MIXED as LEVELLED
from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    return LEVELLED.build(rng, p["balls"], name, LEVELS[p["level"]])[0]


GENERATOR = LadderGenerator(
    world="gripper",
    bands={
        "easy": {"balls": (1, 3), "level": (0, 0)},
        "medium": {"balls": (4, 6), "level": (1, 1)},
        "hard": {"balls": (7, 12), "level": (2, 2)},
    },
    build=build,
)
