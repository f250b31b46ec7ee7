"""The default optimal planner on what unified-planning cannot read: action costs, conditional effects,
derived predicates (tiny domains written here), from the initial state and from another one."""

from __future__ import annotations

from pathlib import Path

from pddlworlds.planning import PLANNERS, PlanStatus, replay, resolve_target, solve, solve_target, world_of
from pddlworlds.planning.fd_driver import problem_lists
from pddlworlds.planning.worker import tagged_pids

ROADS_DOMAIN = """(define (domain roads)
  (:requirements :strips :typing :action-costs)
  (:types place)
  (:predicates (at ?p - place) (road ?from ?to - place))
  (:functions (total-cost) - number (road-length ?from ?to - place) - number)
  (:action drive
    :parameters (?from ?to - place)
    :precondition (and (at ?from) (road ?from ?to))
    :effect (and (not (at ?from)) (at ?to) (increase (total-cost) (road-length ?from ?to)))))
"""

# a -> c directly costs 10; a -> b -> c costs 2; d -> c directly costs 5, d -> a -> b -> c costs 3 (d is
# reachable from c, so a state at d is one of the task's).
ROADS_PROBLEM = """(define (problem trip) (:domain roads)
  (:objects a b c d - place)
  (:init (at a) (road a c) (road a b) (road b c) (road d c) (road d a) (road c d)
         (= (road-length c d) 1) (= (road-length a c) 10) (= (road-length a b) 1) (= (road-length b c) 1)
         (= (road-length d c) 5) (= (road-length d a) 1) (= (total-cost) 0))
  (:goal (at c))
  (:metric minimize (total-cost)))
"""

BRIEFCASE_DOMAIN = """(define (domain briefcase)
  (:requirements :typing :conditional-effects :negative-preconditions)
  (:types location thing)
  (:predicates (case-at ?l - location) (at ?t - thing ?l - location) (in ?t - thing))
  (:action move
    :parameters (?from ?to - location)
    :precondition (and (case-at ?from) (not (case-at ?to)))
    :effect (and (not (case-at ?from)) (case-at ?to)
                 (forall (?t - thing) (when (in ?t) (and (at ?t ?to) (not (at ?t ?from)))))))
  (:action put-in
    :parameters (?t - thing ?l - location)
    :precondition (and (at ?t ?l) (case-at ?l) (not (in ?t)))
    :effect (in ?t))
  (:action take-out
    :parameters (?t - thing)
    :precondition (in ?t)
    :effect (not (in ?t))))
"""

BRIEFCASE_PROBLEM = """(define (problem office) (:domain briefcase)
  (:objects home office - location p1 p2 - thing)
  (:init (case-at home) (at p1 home) (at p2 home))
  (:goal (and (at p1 office) (at p2 office) (case-at home))))
"""

DOORS_DOMAIN = """(define (domain doors)
  (:requirements :typing :derived-predicates :existential-preconditions :disjunctive-preconditions)
  (:types room)
  (:predicates (in ?r - room) (door ?x ?y - room) (open ?x ?y - room) (reach ?x ?y - room))
  (:derived (reach ?x ?y - room)
    (or (open ?x ?y) (exists (?z - room) (and (open ?x ?z) (reach ?z ?y)))))
  (:action open-door
    :parameters (?x ?y - room)
    :precondition (door ?x ?y)
    :effect (open ?x ?y))
  (:action walk
    :parameters (?x ?y - room)
    :precondition (and (in ?x) (reach ?x ?y))
    :effect (and (not (in ?x)) (in ?y))))
"""

DOORS_PROBLEM = """(define (problem hall) (:domain doors)
  (:objects r1 r2 r3 r4 - room)
  (:init (in r1) (door r1 r2) (door r2 r3) (door r3 r4) (door r1 r4))
  (:goal (and (in r3))))
"""


def _files(tmp_path: Path, name: str, domain: str, problem: str) -> tuple[Path, Path]:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "domain.pddl").write_text(domain)
    (folder / "problem.pddl").write_text(problem)
    return folder / "domain.pddl", folder / "problem.pddl"


def _replayed_cost(domain: Path, problem: Path, plan, state: int | None = None) -> int:
    """The plan's cost as our ground task has it, checked to reach the goal: an independent replay."""
    world = world_of(resolve_target(domain, problem))
    played = replay(world, plan.actions, world.initial_state if state is None else state)
    assert played.goal and played.indices is not None, played.reason
    return sum(world.task.actions[i].cost for i in played.indices)


def test_fd_opt_is_the_driver_and_cost_optimal(tmp_path):
    """The cheapest plan (a -> b -> c, cost 2) is longer than the shortest (a -> c, cost 10)."""
    assert PLANNERS["fd-opt"].engine == "fast-downward-driver"
    domain, problem = _files(tmp_path, "roads", ROADS_DOMAIN, ROADS_PROBLEM)
    plan = solve(domain, problem, timeout=60)
    assert plan.status is PlanStatus.SOLVED_OPTIMALLY, plan.message
    assert plan.actions == (("drive", ("a", "b")), ("drive", ("b", "c")))
    assert (plan.length, plan.cost) == (2, 2) == (2, _replayed_cost(domain, problem, plan))
    assert plan.details["method"] == "--search astar(lmcut())" and "cost-optimal" in plan.message
    assert plan.to_dict()["cost"] == 2
    assert tagged_pids(plan.details["worker_token"]) == []


def test_from_another_state_the_cost_facts_are_kept(tmp_path):
    """From d, the direct road (5) loses to d -> a -> b -> c (3): only if the `(= ...)` facts survive."""
    domain, problem = _files(tmp_path, "roads", ROADS_DOMAIN, ROADS_PROBLEM)
    target = resolve_target(domain, problem)
    world = world_of(target)
    atoms = [atom for atom in world.task.true_atoms(world.initial_state) if atom != ("at", ("a",))] + [("at", ("d",))]
    plan = solve_target(target, "fd-opt", 60, initial_atoms=atoms)
    assert plan.status is PlanStatus.SOLVED_OPTIMALLY, plan.message
    assert [a[1] for a in plan.actions] == [("d", "a"), ("a", "b"), ("b", "c")]
    assert plan.cost == 3 == _replayed_cost(domain, problem, plan, world.task.state_of(atoms))


def test_conditional_effects_use_hmax(tmp_path):
    domain, problem = _files(tmp_path, "briefcase", BRIEFCASE_DOMAIN, BRIEFCASE_PROBLEM)
    assert any(a.conditional for a in world_of(resolve_target(domain, problem)).task.actions)
    plan = solve(domain, problem, timeout=60)
    assert plan.status is PlanStatus.SOLVED_OPTIMALLY, plan.message
    assert plan.details["method"] == "--search astar(hmax())"
    assert plan.length == plan.cost == 6 == _replayed_cost(domain, problem, plan)  # in, in, go, out, out, back
    assert ("move", ("home", "office")) in plan.actions


def test_derived_predicates_use_blind_search_from_any_state(tmp_path):
    domain, problem = _files(tmp_path, "doors", DOORS_DOMAIN, DOORS_PROBLEM)
    plan = solve(domain, problem, timeout=60)
    assert plan.status is PlanStatus.SOLVED_OPTIMALLY, plan.message
    assert plan.details["method"] == "--search astar(blind())"
    assert plan.length == 3 and plan.actions[-1] == ("walk", ("r1", "r3"))
    assert _replayed_cost(domain, problem, plan) == 3
    # After opening r1-r2 the derived (reach r1 r2) holds; it must not be written into :init.
    target = resolve_target(domain, problem)
    world = world_of(target)
    state = world.task.apply(world.initial_state, world.action_of("open-door", ("r1", "r2")))
    atoms = world.task.true_atoms(state)
    assert ("reach", ("r1", "r2")) in atoms
    init = next(s for s in problem_lists(world.task.lifted, atoms) if s[0] == ":init")
    assert ["reach", "r1", "r2"] not in init and ["open", "r1", "r2"] in init
    again = solve_target(target, "fd-opt", 60, initial_atoms=atoms)
    assert again.status is PlanStatus.SOLVED_OPTIMALLY and again.length == 2, again.message
    assert _replayed_cost(domain, problem, again, state) == 2


def test_the_unified_planning_path_refuses_what_the_driver_plans(tmp_path):
    """Why the default moved: unified-planning cannot read derived predicates (an ERROR, not a crash)."""
    domain, problem = _files(tmp_path, "doors", DOORS_DOMAIN, DOORS_PROBLEM)
    plan = solve(domain, problem, planner="fd-opt-up", timeout=60)
    assert plan.status is PlanStatus.ERROR and plan.message


def test_unsolvable_with_costs_is_proven(tmp_path):
    domain, problem = _files(tmp_path, "roads", ROADS_DOMAIN, ROADS_PROBLEM.replace("(road b c)", "")
                             .replace("(road a c)", "").replace("(road d c)", ""))
    plan = solve(domain, problem, timeout=60)
    assert plan.status is PlanStatus.UNSOLVABLE, plan.message
    assert plan.cost is None and plan.length is None


def test_files_over_unified_plannings_limit_plan(tmp_path):
    """A problem past unified-planning's 128 KiB (here padded with a comment) still plans with fd-opt."""
    from pddlworlds.worlds.pddl import MAX_UP_BYTES

    domain, problem = _files(tmp_path, "roads", ROADS_DOMAIN, ROADS_PROBLEM + ";" + "x" * MAX_UP_BYTES + "\n")
    assert problem.stat().st_size > MAX_UP_BYTES
    plan = solve(domain, problem, timeout=60)
    assert plan.status is PlanStatus.SOLVED_OPTIMALLY and plan.cost == 2, plan.message
