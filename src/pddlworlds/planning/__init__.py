"""The classical planner baseline: named planner configurations, killable solving, plan validation, experts.

The package's modules, lowest first: `configs` (the planner registry), `results` (statuses and
dataclasses), `targets` (what to plan for, replay on a `World`), `store` (plan text, stored plans and the
index), `up_adapter` (unified-planning), `worker` (the killable child process,
`python -m pddlworlds.planning.worker`), `fd_driver` (Fast Downward's own driver, the default planners'
path), `solving`, `optimum` (both optima), `validation`, `expert`, and `cli` (`pddlworlds plan`,
`pddlworlds expert`). This module is the public front:

    >>> plan = solve("blocksworld", "problem1", planner="fd-opt", timeout=60)
    >>> plan.status, plan.length, plan.text[0]
    (<PlanStatus.SOLVED_OPTIMALLY: 'solved_optimally'>, 8, 'unstack b2 from b3')

`prove_shortest_and_cheapest(domain_file, problem_file, timeout)` proves both optima of a problem: the
shortest plan and, on a domain with action costs, the cheapest (`optimum`).

To plan from the state an episode is in (as the expert agent does), build a `Target` from the
environment's files and call `solve_target(target, planner, timeout, initial_atoms=...)`; `replay` plays
the plan on the episode's `World`.
"""

from __future__ import annotations

from .configs import PLANNERS, PlannerConfig, get_planner, planner_version, register_planner
from .expert import expert_trajectory
from .optimum import prove_shortest_and_cheapest
from .results import Action, ExpertStep, Plan, PlanCheck, PlanStatus, action_pddl
from .solving import solve, solve_target
from .store import (
    INDEX_COLUMNS,
    format_plan,
    index_lock,
    optimal_length,
    optimal_lengths,
    parse_plan,
    plan_file,
    read_index,
    stored_plan,
    update_index,
    write_plan_file,
)
from .targets import Replay, Target, replay, resolve_target, world_of
from .validation import validate_plan

__all__ = [
    "INDEX_COLUMNS",
    "PLANNERS",
    "Action",
    "ExpertStep",
    "Plan",
    "PlanCheck",
    "PlanStatus",
    "PlannerConfig",
    "Replay",
    "Target",
    "action_pddl",
    "expert_trajectory",
    "format_plan",
    "get_planner",
    "index_lock",
    "optimal_length",
    "optimal_lengths",
    "parse_plan",
    "plan_file",
    "planner_version",
    "prove_shortest_and_cheapest",
    "read_index",
    "register_planner",
    "replay",
    "resolve_target",
    "solve",
    "solve_target",
    "stored_plan",
    "update_index",
    "validate_plan",
    "world_of",
    "write_plan_file",
]
