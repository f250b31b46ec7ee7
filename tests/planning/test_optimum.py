"""Both optima of a problem (`planning.optimum`): on a domain with action costs the shortest plan and the
cheapest differ, each is proven by its own search, and the baselines, the records and the report measure
steps against the shortest and cost against the cheapest, so no agent beats a proven optimum in either."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pddlworlds.planning import PlanStatus, prove_shortest_and_cheapest
from pddlworlds.planning import baselines as B
from pddlworlds.records import EpisodeRecord
from pddlworlds.reports.report import write_report
from pddlworlds.scoring import metrics as M

#: From a to d: one jump (cost 10) or three steps (cost 1 each).
DOMAIN = """(define (domain hops) (:requirements :typing :action-costs)
  (:types spot)
  (:predicates (at ?s - spot) (next ?a ?b - spot))
  (:functions (total-cost) - number)
  (:action step :parameters (?a ?b - spot) :precondition (and (at ?a) (next ?a ?b))
    :effect (and (not (at ?a)) (at ?b) (increase (total-cost) 1)))
  (:action jump :parameters (?a ?b - spot) :precondition (at ?a)
    :effect (and (not (at ?a)) (at ?b) (increase (total-cost) 10))))"""
PROBLEM = """(define (problem h1) (:domain hops) (:objects a b c d - spot)
  (:init (at a) (next a b) (next b c) (next c d) (= (total-cost) 0))
  (:goal (at d)) (:metric minimize (total-cost)))"""


@pytest.fixture
def hops(tmp_path: Path) -> Path:
    folder = tmp_path / "mine" / "hops"
    (folder / "problems" / "agentboard").mkdir(parents=True)
    (folder / "domain.pddl").write_text(DOMAIN)
    (folder / "problems" / "agentboard" / "p01.pddl").write_text(PROBLEM)
    return folder


def test_the_shortest_and_the_cheapest_plan_are_proven_apart(hops: Path) -> None:
    shortest, cheapest = prove_shortest_and_cheapest(hops / "domain.pddl", hops / "problems" / "agentboard" / "p01.pddl",
                                                     timeout=60)
    assert cheapest is not None
    assert (shortest.status, shortest.length, shortest.cost, shortest.optimal) == (PlanStatus.SOLVED_OPTIMALLY, 1, 10, True)
    assert shortest.pddl == ["(jump a d)"]
    assert (cheapest.status, cheapest.length, cheapest.cost, cheapest.optimal) == (PlanStatus.SOLVED_OPTIMALLY, 3, 3, True)


def test_a_unit_cost_problem_needs_one_proof(tmp_path: Path) -> None:
    (tmp_path / "d.pddl").write_text(DOMAIN.replace(" (increase (total-cost) 1)", "").replace(
        " (increase (total-cost) 10)", "").replace(":action-costs", ":strips"))
    (tmp_path / "p.pddl").write_text(PROBLEM.replace(" (:metric minimize (total-cost))", ""))
    shortest, cheapest = prove_shortest_and_cheapest(tmp_path / "d.pddl", tmp_path / "p.pddl", timeout=60)
    assert cheapest is None and shortest.length == 1 and shortest.optimal


def test_an_unsolvable_costed_problem_is_proven_once(tmp_path: Path) -> None:
    (tmp_path / "d.pddl").write_text(DOMAIN.replace("(:action jump", "(:action jump-never").replace(
        ":precondition (at ?a)\n", ":precondition (and (at ?a) (next ?b ?a) (next ?a ?b))\n"))
    (tmp_path / "p.pddl").write_text(PROBLEM.replace("(next c d)", ""))
    shortest, cheapest = prove_shortest_and_cheapest(tmp_path / "d.pddl", tmp_path / "p.pddl", timeout=60)
    assert cheapest is not None and shortest.status is cheapest.status is PlanStatus.UNSOLVABLE


def test_baselines_give_the_shortest_length_and_the_cheapest_cost(hops: Path, tmp_path: Path) -> None:
    found = B.ensure_baselines(tmp_path / B.BASELINES_FILE, hops.parent, {"hops": ["p01"]}, "agentboard", timeout=60)
    baseline = found[("hops", "agentboard", "p01")]
    assert (baseline.length, baseline.cost, baseline.proven, baseline.length_proven) == (1, 3, True, True)
    line = B.fill_optimal({"domain": "hops", "split": "agentboard", "problem": "p01", "optimal_length": None}, found)
    assert (line["optimal_length"], line["optimal_cost"]) == (1, 3)


def test_a_row_from_before_the_shortest_proof_is_planned_again(hops: Path, tmp_path: Path) -> None:
    path = tmp_path / B.BASELINES_FILE  # as written before: the cheapest plan's length, no length_proven
    path.write_text("domain,split,problem,length,cost,action_costs,proven,status,planner,timeout_s,time_s,message\n"
                    "hops,agentboard,p01,3,3,true,true,solved_optimally,fd-opt,60,0.5,proven optimal\n")
    assert B.ensure_baselines(path, hops.parent, {"hops": ["p01"]}, "agentboard", timeout=60)[
        ("hops", "agentboard", "p01")].length == 1


def record(steps: int, cost: int) -> EpisodeRecord:
    return EpisodeRecord("standard", "hops", "agentboard", "p01", 0, True, 1.0, steps, 1, 0.1, "goal", "obs",
                         cost=cost, optimal_cost=3)


def test_no_agent_beats_either_optimum(tmp_path: Path) -> None:
    jumper, stepper = M.episode_metrics(record(1, 10)), M.episode_metrics(record(3, 3))
    assert (jumper["steps_over_optimal"], jumper["extra_steps"], jumper["cost_over_optimal"]) == (1.0, 0.0, 10 / 3)
    assert (stepper["steps_over_optimal"], stepper["extra_steps"], stepper["cost_over_optimal"]) == (3.0, 2.0, 1.0)
    out = tmp_path / "run"
    out.mkdir()
    (out / "episodes.jsonl").write_text(json.dumps(record(1, 10).to_dict()) + "\n")
    text = write_report(out, plots=False).read_text()
    assert "shortest plan" in text and "cheapest plan" in text
