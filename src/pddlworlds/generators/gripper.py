"""Gripper problems, by balls (easy 2-4, medium 6-8, hard 10-12).

Every ball starts in rooma and must end in roomb; robby starts in either room.
"""

from __future__ import annotations

import random

from .base import DomainGenerator, problem_name, wrap_words

__all__ = ["GENERATOR"]


def _gripper(rng: random.Random, n: int, name: str, level: str) -> tuple[str, dict[str, object]]:
    balls = [f"ball{i}" for i in range(n, 0, -1)]  # the public files list them downwards
    robby = rng.choice(["rooma", "roomb"])
    objects = wrap_words("   (:objects rooma roomb", [*balls, "left", "right)"], indent=13)
    init = ["(room rooma)", "(room roomb)", *(f"(ball {b})" for b in balls), f"(at-robby {robby})",
            "(free left)", "(free right)", *(f"(at {b} rooma)" for b in balls), "(gripper left)",
            "(gripper right))"]
    goal = [f"(at {b} roomb)" for b in balls]
    goal[-1] += ")))"
    lines = [f"(define (problem {name})", "   (:domain gripper-strips)", *objects]
    lines.append("   (:init " + init[0])
    lines += ["          " + fact for fact in init[1:]]
    lines.append("   (:goal (and " + goal[0])
    lines += ["               " + fact for fact in goal[1:]]
    return "\n".join(lines) + "\n", {"balls": n, "robby": robby}


GENERATOR = DomainGenerator(
    "gripper",
    {"easy": (2, 4), "medium": (6, 8), "hard": (10, 12)},  # balls
    lambda n, level, index: f"strips-gripper-{problem_name(level, index)}",
    _gripper,
)
