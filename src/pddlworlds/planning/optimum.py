"""Both optima of one problem: the shortest plan (fewest actions) and, where actions have costs, the cheapest.

On a domain with action costs (`:metric minimize (total-cost)`) the two differ: three cheap steps may beat one
dear one. An agent's steps are measured against the shortest plan and its cost against the cheapest, so
each must be proven by its own admissible search: the cheapest by A* over the costs (`fd-opt`), the shortest
by A* over the task with its costs taken out (`fd-opt-length`). On a unit-cost task one search proves both.

    shortest, cheapest = prove_shortest_and_cheapest("domain.pddl", "p01.pddl", timeout=60)
    shortest.length, cheapest.cost if cheapest is not None else shortest.cost
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace

from .results import Plan, PlanStatus
from .solving import solve

__all__ = ["CHEAPEST_PLANNER", "SHORTEST_PLANNER", "prove_shortest_and_cheapest", "shortest_and_cheapest"]

#: The admissible search over the task's costs: its plan is the cheapest.
CHEAPEST_PLANNER = "fd-opt"
#: The admissible search over unit costs: its plan is the shortest.
SHORTEST_PLANNER = "fd-opt-length"


def shortest_and_cheapest(solve_with: Callable[[str], Plan], cheapest_planner: str = CHEAPEST_PLANNER
                          ) -> tuple[Plan, Plan | None]:
    """(shortest plan, cheapest plan or None) from `solve_with(planner name)`, one planner call per proof:
    the cheapest first (on a unit-cost task it is also the shortest: None for the cheapest, one call); on a
    costed task the shortest next, unless the first search proved the problem unsolvable (then both are)."""
    cheapest = solve_with(cheapest_planner)
    if not cheapest.details.get("action_costs", False):
        return cheapest, None
    if cheapest.status is PlanStatus.UNSOLVABLE:
        return replace(cheapest, details=dict(cheapest.details)), cheapest
    return solve_with(SHORTEST_PLANNER), cheapest


def prove_shortest_and_cheapest(
    domain_file: str | os.PathLike, problem_file: str | os.PathLike, timeout: float = 60.0, *,
    nice: int = 0, memory_mb: int | None = None,
) -> tuple[Plan, Plan | None]:
    """The shortest plan of a problem and, where its domain has action costs, its cheapest plan (None on a
    unit-cost domain, where the shortest is the cheapest), each proven by an admissible search of Fast
    Downward's. Each search gets `timeout` seconds; a proof that did not finish comes back as a `Plan`
    whose status says why (TIMEOUT, UNSOLVABLE, ERROR) and whose `optimal` is false: never raises for
    planner failures. `shortest.length` is the fewest actions of any plan and `cheapest.cost` the lowest
    total cost (`shortest.cost` is what the shortest plan happens to cost)."""
    return shortest_and_cheapest(
        lambda planner: solve(domain_file, problem_file, planner=planner, timeout=timeout, nice=nice,
                              memory_mb=memory_mb))
