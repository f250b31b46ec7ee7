"""Gripper problems, by balls (easy 2-4, medium 6-8, hard 10-12).

`GENERATOR` (the shipped `generated` split): every ball starts in rooma and must end in roomb; robby
starts in either room. That family has only one problem per ball count and robby's room, so the training
data draws from `MIXED` instead: each ball starts in either room and must end in the other one (now and
then in the room it is already in), as some of AgentBoard's problems ask.

`PUBLIC_LIKE` draws as the 20 public problems are made: every ball starts in either room and must end in
the other (none stays), all balls in rooma in 8 of the 20 and all in roomb in 1, robby in rooma in 15.
Up to renaming such a problem is its ball count and the number of balls in robby's room, nothing else, so
n balls give only n + 1 problems: the 5 public 4-ball problems are all there are, so the family draws 3
and 5 balls in their place, and the odd counts between the public ones (docs/training.md, "The public
problems, measured").
"""

from __future__ import annotations

import random

from .base import DomainGenerator, problem_name, wrap_words

__all__ = ["GENERATOR", "MIXED", "PUBLIC_LIKE", "problem_text"]


def _gripper(rng: random.Random, n: int, name: str, level: str) -> tuple[str, dict[str, object]]:
    robby = rng.choice(["rooma", "roomb"])
    return problem_text(name, n, robby, ["rooma"] * n, ["roomb"] * n), {"balls": n, "robby": robby}


def _gripper_mixed(rng: random.Random, n: int, name: str, level: str) -> tuple[str, dict[str, object]]:
    robby = rng.choice(["rooma", "roomb"])
    start = [rng.choice(["rooma", "roomb"]) for _ in range(n)]
    other = {"rooma": "roomb", "roomb": "rooma"}
    end = [room if rng.random() < 0.1 else other[room] for room in start]
    if end == start:  # at least one ball to carry
        end[0] = other[start[0]]
    moved = sum(a != b for a, b in zip(start, end))
    return problem_text(name, n, robby, start, end), {"balls": n, "robby": robby, "to_carry": moved}


def _gripper_public_like(rng: random.Random, n: int, name: str, level: str) -> tuple[str, dict[str, object]]:
    robby = "rooma" if rng.random() < 0.75 else "roomb"
    arrangement = rng.choices(["rooma", "roomb", "mixed"], weights=[8, 1, 11])[0]
    start = [rng.choice(["rooma", "roomb"]) if arrangement == "mixed" else arrangement for _ in range(n)]
    end = ["roomb" if room == "rooma" else "rooma" for room in start]
    params = {"balls": n, "robby": robby, "in_rooma": start.count("rooma"), "to_carry": n}
    return problem_text(name, n, robby, start, end), params


def problem_text(name: str, n: int, robby: str, start: list[str], end: list[str]) -> str:
    """A problem laid out as the public files are: balls ball<n> down to ball1 start in the rooms of `start`
    and must end in those of `end` (listed in that order)."""
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

PUBLIC_LIKE = DomainGenerator(
    "gripper",
    {"easy": (3, 5), "medium": (6, 9), "hard": (10, 12)},  # balls
    lambda n, level, index: f"strips-gripper-x-{n}",
    _gripper_public_like,
    # the public set has 4 balls in 5 problems (all the 4-ball problems of this form), 6 in 5, 8 in 1,
    # 10 in 4, 12 in 5; the odd sizes between widen a family that has n + 1 problems per ball count
    size_weights={"easy": {3: 1, 5: 1}, "medium": {6: 1, 7: 1, 8: 1, 9: 1}, "hard": {10: 1, 11: 1, 12: 1}},
)
