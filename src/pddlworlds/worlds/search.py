"""Breadth-first search over a grounded task: the one search the package runs itself.

It finds a shortest plan (the in-context examples and the training data take small problems' plans from
it) and, when it enumerates every reachable state without meeting the goal, proves that no plan exists
(the unsolvable variants' proof: grounding prunes only actions whose static preconditions are false, which
no action can change). Past `cap` states it gives up; bigger problems go to `pddlworlds.planning`.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from .grounding import GroundTask

__all__ = ["SearchResult", "breadth_first_search", "first_segment_search", "shortest_plan"]


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
    return _search(task, cap, task.init, lambda state, after: after, task.is_goal)


def first_segment_search(task: GroundTask, first: int, cap: int) -> SearchResult:
    """A shortest plan among those whose first segment makes every atom of `first` true: the first step that
    makes true a goal condition not true at the start (a fresh one) makes those of `first` true, and makes
    no other fresh condition true without them (`agents.segments.goal_segment` cuts a plan so). "unsolvable"
    when no plan has that first segment (`first` empty or naming an atom that is not a fresh goal condition
    included); states count (state, segment over) pairs. Why: a subgoal starts an optimal plan exactly when
    this plan is as short as the shortest (`scripts/memory_use.py`)."""
    fresh = task.goal_pos & ~task.init
    if not first or first & ~fresh:
        return SearchResult("unsolvable", 0, 0.0)

    def follow(key: int, after: int) -> int | None:
        if key & 1:  # the first segment is over: any step
            return after << 1 | 1
        made = after & fresh
        if not made:
            return after << 1
        return after << 1 | 1 if not first & ~made else None

    return _search(task, cap, task.init << 1, follow, lambda key: bool(key & 1) and task.is_goal(key >> 1),
                   state_of=lambda key: key >> 1)


def _search(
    task: GroundTask, cap: int, init: int, follow: Callable[[int, int], int | None], is_goal: Callable[[int], bool],
    state_of: Callable[[int], int] = lambda key: key,
) -> SearchResult:
    """Breadth first over keys (a state, or a state with what the search tracks beside it): `follow(key,
    state after an action)` is the key reached, None where the step is not allowed."""
    start = time.perf_counter()
    if is_goal(init):
        return SearchResult("solvable", 1, time.perf_counter() - start, 0, ())
    parent: dict[int, tuple[int, int] | None] = {init: None}
    queue = deque([init])
    apply, applicable = task.apply, task.applicable
    while queue:
        key = queue.popleft()
        state = state_of(key)
        for action in applicable(state):
            after = follow(key, apply(state, action))
            if after is None or after in parent:
                continue
            if is_goal(after):
                plan = [action]
                step = parent[key]
                while step is not None:
                    key, taken = step
                    plan.append(taken)
                    step = parent[key]
                plan.reverse()
                return SearchResult("solvable", len(parent) + 1, time.perf_counter() - start, len(plan), tuple(plan))
            if len(parent) >= cap:
                return SearchResult("capped", len(parent), time.perf_counter() - start)
            parent[after] = (key, action)
            queue.append(after)
    return SearchResult("unsolvable", len(parent), time.perf_counter() - start)


def shortest_plan(task: GroundTask, max_states: int = 200_000) -> list[int] | None:
    """A shortest plan (action indices), or None when there is none or the search reaches `max_states`
    states without a goal (the goal state itself counted)."""
    result = breadth_first_search(task, max_states - 1)
    return list(result.plan) if result.plan is not None else None
