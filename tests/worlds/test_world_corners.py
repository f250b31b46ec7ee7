"""A world's text on the corners of legal PDDL: parameter names `format` cannot take, names outside the text's
characters refused naming the PDDL file, and invalid actions explained truly (a cost value the problem
omits, a condition over too many bindings to test one by one) without raising."""

from __future__ import annotations

from pathlib import Path

import pytest

from pddlworlds.worlds.catalogue import load_task
from pddlworlds.worlds.pddl import PDDLError
from pddlworlds.worlds.text import load_templates
from pddlworlds.worlds.world import World


def world(tmp_path: Path, domain: str, problem: str) -> World:
    (tmp_path / "domain.pddl").write_text(domain)
    (tmp_path / "problem.pddl").write_text(problem)
    task = load_task(tmp_path / "domain.pddl", tmp_path / "problem.pddl")
    return World(task, load_templates(task))


ODD = """(define (domain odd) (:requirements :strips)
  (:predicates (at ?x.1 ?0) (free ?0))
  (:action go :parameters (?x.1 ?0) :precondition (free ?0) :effect (and (at ?x.1 ?0) (not (free ?0)))))"""


def test_parameters_named_like_attributes_or_positions_fill_their_slots(tmp_path: Path) -> None:
    w = world(tmp_path, ODD, "(define (problem p) (:domain odd) (:objects a b) (:init (free b)) (:goal (at a b)))")
    assert w.valid_actions(w.initial_state) == ["go a b", "go b b"]
    outcome = w.step(w.initial_state, "go a b", "full")
    assert outcome.valid and "a is at b" in outcome.observation and "The goal is reached." in outcome.observation
    assert w.step(outcome.state, "go b b", "full").observation == "Cannot go b b: b is not free."


@pytest.mark.parametrize(("objects", "said"), [
    ("café b", "problem.pddl:2: the object name 'café' uses 'é'"),
    ("a,b c", "problem.pddl:2: the object name 'a,b' uses ','"),
])
def test_a_name_the_text_cannot_carry_is_refused_naming_the_pddl_file(tmp_path: Path, objects: str, said: str) -> None:
    problem = f"(define (problem p) (:domain odd)\n (:objects {objects}) (:init) (:goal (and)))"
    with pytest.raises(PDDLError) as caught:
        world(tmp_path, ODD, problem)
    assert said in str(caught.value) and "\n" not in str(caught.value)


COSTS = """(define (domain costs) (:requirements :action-costs)
  (:predicates (p ?x) (q ?x))
  (:functions (total-cost) - number (w ?x) - number)
  (:action weigh :parameters (?x) :precondition (p ?x) :effect (and (q ?x) (increase (total-cost) (w ?x)))))"""


def test_an_action_whose_cost_has_no_value_is_explained_by_that_value(tmp_path: Path) -> None:
    w = world(tmp_path, COSTS, """(define (problem c) (:domain costs) (:objects a b)
      (:init (p a) (p b) (= (w a) 2) (= (total-cost) 0)) (:goal (q b)) (:metric minimize (total-cost)))""")
    assert w.valid_actions(w.initial_state) == ["weigh a"]
    outcome = w.step(w.initial_state, "weigh b", "full")
    assert not outcome.valid and outcome.observation == "Cannot weigh b: the problem gives (w b), this action's cost, no value."


def test_a_condition_over_too_many_bindings_explains_without_raising(tmp_path: Path) -> None:
    domain = """(define (domain many) (:requirements :adl)
      (:predicates (p ?x ?y ?z) (q))
      (:action a :parameters () :precondition (forall (?x ?y ?z) (p ?x ?y ?z)) :effect (q)))"""
    objects = " ".join(f"o{i}" for i in range(60))  # 216,000 bindings: more than grounding.MAX_QUANTIFIED
    w = world(tmp_path, domain, f"(define (problem m) (:domain many) (:objects {objects}) (:init) (:goal (q)))")
    outcome = w.step(w.initial_state, "a", "full")
    assert not outcome.valid and outcome.error == "precondition"
    assert outcome.observation.startswith("Cannot a: it is not true that for every object ?x, object ?y, object ?z")
