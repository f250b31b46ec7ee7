"""Breadth-first search over a grounded task: the one search the package runs itself.

It finds a shortest plan (the in-context examples and the training data take small problems' plans from
it) and, when it enumerates every reachable state without meeting the goal, proves that no plan exists
(the unsolvable variants' proof: grounding prunes only actions whose static preconditions are false, which
no action can change). Past `cap` states it gives up; bigger problems go to `pddlworlds.planning`.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

from .grounding import GroundTask

__all__ = ["SearchResult", "breadth_first_search", "shortest_plan"]


@dataclass(frozen=True)
class SearchResult:
    """`status` is "unsolvable" (every reachable state seen, none a goal), "solvable" or "capped"."""

    status: str
    states: int  # distinct states enumerated (a goal state found counts)
    time_s: float
    plan_length: int | None = None  # when solvable: the length of a shortest plan
    plan: tuple[int, ...] | None = None  # when solvable: a shortest plan (action indices)


def breadth_first_search(task: GroundTask, cap: int) -> SearchResult:
    """Search from the initial state, stopping at the first goal state, or before the state past `cap`."""
    start = time.perf_counter()
    init = task.init
    if task.is_goal(init):
        return SearchResult("solvable", 1, time.perf_counter() - start, 0, ())
    parent: dict[int, tuple[int, int] | None] = {init: None}
    queue = deque([init])
    apply, applicable, is_goal = task.apply, task.applicable, task.is_goal
    while queue:
        state = queue.popleft()
        for action in applicable(state):
            after = apply(state, action)
            if after in parent:
                continue
            if is_goal(after):
                plan = [action]
                step = parent[state]
                while step is not None:
                    state, taken = step
                    plan.append(taken)
                    step = parent[state]
                plan.reverse()
                return SearchResult("solvable", len(parent) + 1, time.perf_counter() - start, len(plan), tuple(plan))
            if len(parent) >= cap:
                return SearchResult("capped", len(parent), time.perf_counter() - start)
            parent[after] = (state, action)
            queue.append(after)
    return SearchResult("unsolvable", len(parent), time.perf_counter() - start)


def shortest_plan(task: GroundTask, max_states: int = 200_000) -> list[int] | None:
    """A shortest plan (action indices), or None when there is none or the search reaches `max_states`
    states without a goal (the goal state itself counted)."""
    result = breadth_first_search(task, max_states - 1)
    return list(result.plan) if result.plan is not None else None
