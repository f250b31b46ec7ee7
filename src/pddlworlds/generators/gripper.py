"""Gripper problems, by balls (easy 2-4, medium 6-8, hard 10-12).

`GENERATOR` (the shipped `generated` split): every ball starts in rooma and must end in roomb; robby
starts in either room. That family has only one problem per ball count and robby's room, so the training
data draws from `MIXED` instead: each ball starts in either room and must end in the other one (now and
then in the room it is already in), as some of AgentBoard's problems ask.
"""

from __future__ import annotations

import random

from .base import DomainGenerator, problem_name, wrap_words

__all__ = ["GENERATOR", "MIXED"]


def _gripper(rng: random.Random, n: int, name: str, level: str) -> tuple[str, dict[str, object]]:
    robby = rng.choice(["rooma", "roomb"])
    return _text(name, n, robby, ["rooma"] * n, ["roomb"] * n), {"balls": n, "robby": robby}


def _gripper_mixed(rng: random.Random, n: int, name: str, level: str) -> tuple[str, dict[str, object]]:
    robby = rng.choice(["rooma", "roomb"])
    start = [rng.choice(["rooma", "roomb"]) for _ in range(n)]
    other = {"rooma": "roomb", "roomb": "rooma"}
    end = [room if rng.random() < 0.1 else other[room] for room in start]
    if end == start:  # at least one ball to carry
        end[0] = other[start[0]]
    moved = sum(a != b for a, b in zip(start, end))
    return _text(name, n, robby, start, end), {"balls": n, "robby": robby, "to_carry": moved}


def _text(name: str, n: int, robby: str, start: list[str], end: list[str]) -> str:
    balls = [f"ball{i}" for i in range(n, 0, -1)]  # the public files list them downwards
    objects = wrap_words("   (:objects rooma roomb", [*balls, "left", "right)"], indent=13)
    init = ["(room rooma)", "(room roomb)", *(f"(ball {b})" for b in balls), f"(at-robby {robby})",
            "(free left)", "(free right)", *(f"(at {b} {r})" for b, r in zip(balls, start)), "(gripper left)",
            "(gripper right))"]
    goal = [f"(at {b} {r})" for b, r in zip(balls, end)]
    goal[-1] += ")))"
    lines = [f"(define (problem {name})", "   (:domain gripper-strips)", *objects]
    lines.append("   (:init " + init[0])
    lines += ["          " + fact for fact in init[1:]]
    lines.append("   (:goal (and " + goal[0])
    lines += ["               " + fact for fact in goal[1:]]
    return "\n".join(lines) + "\n"


GENERATOR = DomainGenerator(
    "gripper",
    {"easy": (2, 4), "medium": (6, 8), "hard": (10, 12)},  # balls
    lambda n, level, index: f"strips-gripper-{problem_name(level, index)}",
    _gripper,
)

MIXED = DomainGenerator(
    "gripper",
    {"easy": (2, 5), "medium": (6, 9), "hard": (10, 14)},  # balls
    lambda n, level, index: f"strips-gripper-mixed-{problem_name(level, index)}",
    _gripper_mixed,
)
