"""Blocksworld problems, by blocks (easy 3-4, medium 5-6, hard 7-8).

Initial state and goal are drawn uniformly from all arrangements of the blocks into towers; the goal
lists its `on` facts only, as the public problems do, and never already holds initially.

`PUBLIC_LIKE` draws as the 10 public problems are made: 3 to 7 blocks (two problems of each size in the
public set), the goal an arrangement's `on` facts. The public arrangements are single towers more often
than uniform ones (11 of their 20 states, where uniform states would give 5.4 on average), so each state
of this family is a single tower with probability 0.4 and a uniform arrangement otherwise.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from .base import DomainGenerator, problem_name

__all__ = ["GENERATOR", "PUBLIC_LIKE", "random_towers"]


def _lah(n: int, k: int) -> int:
    """Number of ways to arrange n labelled blocks into k (unordered) non-empty towers."""
    return math.comb(n - 1, k - 1) * math.factorial(n) // math.factorial(k)


def random_towers(blocks: list[str], rng: random.Random) -> list[list[str]]:
    """A uniformly random Blocksworld state: towers listed bottom to top.

    The number of towers k is drawn with probability proportional to the number of states with k towers
    (Lah numbers); then a random permutation is cut at k-1 random places. Every state with k towers
    arises from exactly k! (permutation, cut) pairs, so the state is uniform.
    """
    n = len(blocks)
    weights = [_lah(n, k) for k in range(1, n + 1)]
    k = rng.choices(range(1, n + 1), weights=weights)[0]
    order = list(blocks)
    rng.shuffle(order)
    cuts = sorted(rng.sample(range(1, n), k - 1))
    bounds = [0, *cuts, n]
    return [order[bounds[i] : bounds[i + 1]] for i in range(k)]


def _on_facts(towers: list[list[str]]) -> dict[str, str | None]:
    """block -> the block it is on (None: on the table)."""
    below: dict[str, str | None] = {}
    for tower in towers:
        for i, block in enumerate(tower):
            below[block] = tower[i - 1] if i else None
    return below


def _blocksworld(rng: random.Random, n: int, name: str, level: str) -> tuple[str, dict[str, object]]:
    return _problem(rng, n, name, random_towers)


def _tower_or_uniform(blocks: list[str], rng: random.Random) -> list[list[str]]:
    """A single tower of the blocks in random order with probability 0.4, else a uniform state."""
    if rng.random() < 0.4:
        order = list(blocks)
        rng.shuffle(order)
        return [order]
    return random_towers(blocks, rng)


def _blocksworld_public_like(rng: random.Random, n: int, name: str, level: str) -> tuple[str, dict[str, object]]:
    return _problem(rng, n, name, _tower_or_uniform)


def _problem(
    rng: random.Random, n: int, name: str, draw: Callable[[list[str], random.Random], list[list[str]]]
) -> tuple[str, dict[str, object]]:
    """The problem text of an initial state and a goal state drawn with `draw` (goal: its `on` facts)."""
    blocks = [f"b{i}" for i in range(1, n + 1)]
    init = _on_facts(draw(blocks, rng))
    for _ in range(1000):
        goal = _on_facts(draw(blocks, rng))
        goal_on = {b: u for b, u in goal.items() if u is not None}
        if goal_on and any(init[b] != u for b, u in goal_on.items()):
            break
    else:  # pragma: no cover - practically impossible for n >= 2
        raise RuntimeError("no goal different from the initial state")
    tops = sorted(set(blocks) - {u for u in init.values() if u is not None}, key=blocks.index)
    lines = [f"(define (problem {name})", "(:domain blocksworld-4ops)", f"(:objects {' '.join(blocks)} )"]
    lines += ["(:init", "(arm-empty)"]
    lines += [f"(on-table {b})" if init[b] is None else f"(on {b} {init[b]})" for b in blocks]
    lines += [f"(clear {b})" for b in tops]
    lines += [")", "(:goal", "(and"]
    goal_lines = [f"(on {b} {u})" for b, u in goal_on.items()]
    goal_lines = sorted(goal_lines, key=lambda s: blocks.index(s.split()[1]))
    goal_lines[-1] += ")"
    lines += goal_lines + [")", ")"]
    return "\n".join(lines) + "\n", {"blocks": n, "goal_atoms": len(goal_on)}


GENERATOR = DomainGenerator(
    "blocksworld",
    {"easy": (3, 4), "medium": (5, 6), "hard": (7, 8)},  # blocks
    lambda n, level, index: f"BW-rand-{n}-{problem_name(level, index)}",
    _blocksworld,
)

PUBLIC_LIKE = DomainGenerator(
    "blocksworld",
    {"easy": (3, 4), "medium": (5, 5), "hard": (6, 7)},  # blocks
    lambda n, level, index: f"BW-rand-{n}",
    _blocksworld_public_like,
    size_weights={"easy": {3: 1, 4: 1}, "medium": {5: 1}, "hard": {6: 1, 7: 1}},  # as the public set: 2 a size
)
