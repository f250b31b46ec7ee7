"""Blocksworld ladder: random towers of `blocks` blocks at the start and in the goal (every block's place in
the goal given), drawn by the `generated` split's generator (`generators.blocksworld`, the AgentBoard/PDDLGym
problem layout). `level` picks that generator's level (0 easy, 1 medium, 2 hard) for its other choices.
"""

from __future__ import annotations

import random

from ..base import LEVELS
from ..blocksworld import GENERATOR as LEVELLED
from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    return LEVELLED.build(rng, p["blocks"], name, LEVELS[p["level"]])[0]


GENERATOR = LadderGenerator(
    world="blocksworld",
    bands={
        "easy": {"blocks": (2, 4), "level": (0, 0)},
        "medium": {"blocks": (5, 6), "level": (1, 1)},
        "hard": {"blocks": (7, 9), "level": (2, 2)},
    },
    build=build,
)
