"""Tyreworld problems, by hubs (easy 1, medium 2, hard 3).

A flat tyre w_i on every hub, its spare r_i in the closed boot with the tools. The goal is either the
full one (r_i on the hub, inflated, w_i in the boot for every hub) or, as in some public problems, a
random non-empty subset of those conjuncts.
"""

from __future__ import annotations

import random

from .base import DomainGenerator, problem_name

__all__ = ["GENERATOR"]


def _tyreworld(rng: random.Random, n: int, name: str, level: str) -> tuple[str, dict[str, object]]:
    hubs = range(1, n + 1)
    lines = [f"(define (problem {name})", "(:domain tyreworld)", "(:objects ", "wrench jack pump - tool"]
    lines.append(" ".join(f"the-hub{i}" for i in hubs) + " - hub")
    lines.append(" ".join(f"nuts{i}" for i in hubs) + " - nut")
    lines.append("boot - container")
    lines.append(" ".join(f"r{i} w{i}" for i in hubs) + " - wheel")
    lines += [")", "(:init", "(in jack boot)", "(in pump boot)", "(in wrench boot)", "(unlocked boot)",
              "(closed boot)"]
    for i in hubs:
        lines += [f"(intact r{i})", f"(in r{i} boot)", f"(not-inflated r{i})"]
    for i in hubs:
        lines += [f"(on w{i} the-hub{i})", f"(on-ground the-hub{i})", f"(tight nuts{i} the-hub{i})",
                  f"(fastened the-hub{i})"]
    full = rng.random() < 0.5
    goal: list[str] = []
    for i in hubs:
        conjuncts = [f"(on r{i} the-hub{i})", f"(inflated r{i})", f"(in w{i} boot)"]
        goal += conjuncts if full else [c for c in conjuncts if rng.random() < 0.5]
    if not goal:
        i = rng.randint(1, n)
        goal = [rng.choice([f"(on r{i} the-hub{i})", f"(inflated r{i})", f"(in w{i} boot)"])]
    lines += [")", "(:goal", "(and", *goal, ")", ")", ")"]
    params = {"hubs": n, "goal": "full" if full else "partial", "goal_atoms": len(goal)}
    return "\n".join(lines) + "\n", params


GENERATOR = DomainGenerator(
    "tyreworld",
    {"easy": (1, 1), "medium": (2, 2), "hard": (3, 3)},  # hubs (= flat tyres)
    lambda n, level, index: f"tyreworld-{n}-{problem_name(level, index)}",
    _tyreworld,
)
