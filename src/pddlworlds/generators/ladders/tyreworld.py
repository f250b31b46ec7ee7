"""Tyreworld ladder: `hubs` hubs with flat tyres, the spares and tools in the boot, drawn by the public-like
generator (`generators.tyreworld.PUBLIC_LIKE`, as AgentBoard's public problems are made): each hub's goal is
one of the public problems' patterns (the full swap, the spare inflated, the flat tyre put away, ...), a
third of the problems starting with some of the usual start changed. `level` picks that generator's level:
0 and 1 mix the patterns hub by hub, 2 asks the full swap of some hubs.
"""

from __future__ import annotations

import random

from ..base import LEVELS
from ..tyreworld import PUBLIC_LIKE
from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    return PUBLIC_LIKE.build(rng, p["hubs"], name, LEVELS[p["level"]])[0]


GENERATOR = LadderGenerator(
    world="tyreworld",
    bands={
        "easy": {"hubs": (1, 3), "level": (0, 0)},
        "medium": {"hubs": (2, 4), "level": (1, 1)},
        "hard": {"hubs": (4, 5), "level": (1, 1)},
    },
    build=build,
)
