"""`solve`: one planner call, and what its answer is worth.

The engines' statuses are not trusted (up-fast-downward #37, #28): Fast Downward through
unified-planning calls an optimal plan "satisficing" when the problem has no quality metric, and
up-pyperplan calls every exhausted search "incomplete". A returned plan counts only when it replays on our
own grounded task to the goal *and* unified-planning's `PlanValidator` accepts it (where the engine went
through unified-planning; Fast Downward's driver, `fd_driver`, reads domains unified-planning cannot, and
its plan cost must equal the replay's); "optimal" comes from the configuration being admissible (with
action costs, cost-optimal); "unsolvable" needs evidence from the engine's log (Fast Downward) or
a complete search (pyperplan); anything else is an ERROR.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Any

from ..worlds.catalogue import DEFAULT_SPLIT
from ..worlds.grounding import Atom
from ..worlds.world import World
from .configs import DRIVER, PlannerConfig, get_planner
from .fd_driver import admissible_search, run_driver
from .results import Action, Plan, PlanStatus, action_pddl
from .targets import Target, replay, resolve_target, world_of
from .worker import run_worker

__all__ = ["solve", "solve_target"]

_FD_UNSOLVABLE = ("provably unsolvable", "exit code: 10", "exit code: 11", "Completely explored state space")
_FD_INCOMPLETE = ("exit code: 12",)


def _unsolvable_evidence(config: PlannerConfig, log: str) -> tuple[bool, str]:
    """Whether a 'no plan' answer is backed by the engine's own evidence, and how strongly."""
    if config.engine.startswith("fast-downward"):
        if any(marker in log for marker in _FD_UNSOLVABLE):
            return True, "proven unsolvable by Fast Downward"
        if any(marker in log for marker in _FD_INCOMPLETE) and config.complete:
            return True, "search space exhausted (Fast Downward exit code 12: unsolved, search incomplete)"
        return False, ""
    if config.engine.startswith("pyperplan") and config.complete:
        # up-pyperplan reports every failed search as UNSOLVABLE_INCOMPLETELY (it compares the search
        # function with its name), but A* and greedy best-first search with a closed list are complete.
        return True, "search space exhausted by pyperplan"
    return False, ""


def _checked(plan: Plan, config: PlannerConfig, world: World, actions: list[Action], state: int,
             result: dict[str, Any]) -> Plan:
    """The engine's plan, kept only if it replays on our ground task to the goal (and unified-planning's
    validator, where it ran, agrees, and the engine's cost, where it gave one, is the replay's)."""
    played = replay(world, actions, state)
    cost = None if played.indices is None else sum(world.task.actions[i].cost for i in played.indices)
    reasons = []
    if played.indices is None:
        reasons.append(f"replay: {played.reason}")
    elif not played.goal:
        reasons.append("replay: the goal does not hold at the end")
    if result.get("up_valid") is False:
        reasons.append(f"unified-planning validator: {result.get('up_message') or 'invalid'}")
    engine_cost = result.get("plan_cost")
    # a search on the task without its costs (`unit_cost`) reports the plan's length as its cost
    replayed = len(actions) if config.params.get("unit_cost") else cost
    if engine_cost is not None and replayed is not None and engine_cost != replayed:
        reasons.append(f"the engine's plan cost {engine_cost} is not the replay's {replayed}")
    if reasons:
        plan.message = f"the engine returned an invalid plan ({result['engine_status']}): " + "; ".join(reasons)
        plan.details["invalid_actions"] = [action_pddl(a) for a in actions]
        return plan
    plan.actions = tuple(actions)
    plan.text = tuple(world.action_text(i) for i in played.indices or ())
    plan.length = len(actions)
    plan.cost = cost
    plan.optimal = config.admissible
    plan.status = PlanStatus.SOLVED_OPTIMALLY if config.admissible else PlanStatus.SOLVED_SATISFICING
    checks = "replay" if result.get("up_valid") is None else "replay and unified-planning"
    optimal = ("; cost-optimal: admissible search" if world.task.costs and not config.params.get("unit_cost")
               else "; optimal: admissible search")
    plan.message = f"plan validated ({checks})" + (optimal if config.admissible else "")
    return plan


def solve(
    domain: str | os.PathLike,
    problem: str | os.PathLike,
    planner: str | PlannerConfig = "fd-opt",
    timeout: float = 60,
    split: str = DEFAULT_SPLIT,
    *,
    initial_atoms: Iterable[Atom] | None = None,
    text_file: str | os.PathLike | None = None,
    domains_root: str | os.PathLike | None = None,
    nice: int = 0,
    memory_mb: int | None = None,
    cpu_seconds: float | None = None,
    _on_start: Callable[[int, str], None] | None = None,
) -> Plan:
    """Plan for a shipped problem (`solve("gripper", "prob01")`) or PDDL files (`solve(dom_path, prob_path)`).

    `initial_atoms` replaces the initial state (every atom that holds, static ones included), as the
    expert does to replan from where an episode stands. With `domains_root`, `domain` is one of that
    folder's domain folders (`pddlworlds plan --domains-root`). `nice` lowers the planner processes' priority,
    `memory_mb` caps their address space, `cpu_seconds` the search's CPU time (Fast Downward's driver only). Never raises for planner failures: they come back as a `Plan`
    with status TIMEOUT, UNSOLVABLE or ERROR (an unknown domain or problem name still raises ValueError).
    """
    return solve_target(resolve_target(domain, problem, split, text_file, domains_root), planner, timeout,
                        initial_atoms=initial_atoms, nice=nice, memory_mb=memory_mb, on_start=_on_start,
                        cpu_seconds=cpu_seconds)


def solve_target(
    target: Target,
    planner: str | PlannerConfig = "fd-opt",
    timeout: float = 60,
    *,
    initial_atoms: Iterable[Atom] | None = None,
    nice: int = 0,
    memory_mb: int | None = None,
    on_start: Callable[[int, str], None] | None = None,
    cpu_seconds: float | None = None,
) -> Plan:
    """Plan for a resolved `Target`, from `initial_atoms` when given (solving "from this state").

    The expert agent calls this with the atoms of the state its episode is in and a `Target` built from
    its environment's files; `solve` is this after resolving names. `timeout` covers the whole call: the
    reading and grounding done here first (bounded in memory by the size guards, `grounding.check_size`)
    count against it, and the planner's process gets what is left.
    """
    start = time.perf_counter()
    config = get_planner(planner)
    world = world_of(target)
    atoms = None if initial_atoms is None else sorted((n, tuple(a)) for n, a in initial_atoms)
    state = world.initial_state if atoms is None else world.task.state_of(atoms)
    plan = Plan(target.domain, target.problem, config.name, PlanStatus.ERROR,
                details={"engine": config.engine, "method": config.label, "action_costs": world.task.costs})
    search, why = admissible_search(world.task) if config.engine == DRIVER else ("", "")
    if config.engine == DRIVER:
        plan.details.update(method=" ".join(config.driver_args(search)), search_reason=why)
    left = float(timeout) - (time.perf_counter() - start)
    if left <= 0:
        plan.time_s = time.perf_counter() - start
        plan.status = PlanStatus.TIMEOUT
        plan.message = f"no plan within {timeout:g} s: reading and grounding the problem took it all"
        return plan
    if config.engine == DRIVER:
        result = run_driver(world.task.lifted, config.driver_args(search), left, initial_atoms=atoms, nice=nice,
                            memory_mb=memory_mb, on_start=on_start, unit_cost=bool(config.params.get("unit_cost")),
                            cpu_seconds=cpu_seconds)
        timed_out, pid, token, log_tail = result["timed_out"], result["pid"], result["token"], ""
    else:
        request = {
            "domain_file": str(target.domain_file),
            "problem_file": str(target.problem_file),
            "engine": config.engine,
            "params": config.params,
            "initial_atoms": None if atoms is None else [[n, list(a)] for n, a in atoms],
            "nice": nice,
            "memory_mb": memory_mb,
        }
        run = run_worker(request, left, on_start)
        result, timed_out, pid, token, log_tail = run.result, run.timed_out, run.pid, run.token, run.log_tail
    plan.time_s = time.perf_counter() - start
    plan.details.update(worker_pid=pid, worker_token=token)
    if timed_out:
        plan.status = PlanStatus.TIMEOUT
        plan.message = f"no plan within {timeout:g} s; the planner's process group was killed"
        return plan
    if result is None:
        plan.message = "the planner process ended without a result: " + log_tail[-500:]
        return plan
    if "error" in result:
        plan.message = result["error"]
        plan.details["traceback"] = result.get("traceback", "")
        return plan

    engine_status = result["engine_status"]
    log = result.get("log_tail", "")
    plan.details.update(engine_status=engine_status, engine_time_s=result.get("engine_time_s"), log_tail=log)
    actions = result.get("actions")
    if actions is not None:
        return _checked(plan, config, world, [(s, tuple(a)) for s, a in actions], state, result)
    if engine_status.startswith("UNSOLVABLE"):
        ok, why = _unsolvable_evidence(config, log)
        if ok:
            plan.status = PlanStatus.UNSOLVABLE
            plan.message = why
        else:
            plan.message = f"the engine said {engine_status} without evidence of unsolvability: {log[-300:]}"
        return plan
    if engine_status == "TIMEOUT":
        plan.status = PlanStatus.TIMEOUT
        plan.message = "the engine timed out"
        return plan
    if engine_status == "MEMOUT":
        plan.message = "out of memory" + (f" ({memory_mb} MB)" if memory_mb else "")
        return plan
    plan.message = f"engine status {engine_status}: {log[-300:]}"
    return plan
