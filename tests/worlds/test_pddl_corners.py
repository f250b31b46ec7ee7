"""The corners of legal PDDL (`worlds/pddl_corners.py`, and what reading and grounding make of them): each is
read with PDDL's semantics, checked against pymimir where it reads the file too, or refused in one line
naming the file, the line and the feature."""

from __future__ import annotations

from pathlib import Path

import pymimir
import pytest

from pddlworlds.worlds.grounding import GroundTask, ground
from pddlworlds.worlds.pddl import PDDLError, read_task


def write(tmp_path: Path, domain: str, problem: str) -> tuple[Path, Path]:
    (tmp_path / "domain.pddl").write_text(domain)
    (tmp_path / "problem.pddl").write_text(problem)
    return tmp_path / "domain.pddl", tmp_path / "problem.pddl"


def load(tmp_path: Path, domain: str, problem: str) -> GroundTask:
    return ground(read_task(*write(tmp_path, domain, problem)))


def applicable(task: GroundTask, state: int | None = None) -> list[str]:
    return [task.actions[i].pddl for i in task.applicable(task.init if state is None else state)]


def mimir_applicable(domain: Path, problem: Path) -> list[str]:
    initial = pymimir.Problem(pymimir.Domain(str(domain)), str(problem)).get_initial_state()
    return sorted("(" + " ".join(str(a).lower().strip("()").split()) + ")" for a in initial.generate_applicable_actions())


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and "Traceback" not in text, text
    return text


# ---- repeated variables ---------------------------------------------------------------------------

TRIANGLE = """(define (domain tri) (:requirements :strips)
  (:predicates (tri ?a ?b ?c) (done ?x))
  (:action go :parameters (?x ?y) :precondition (tri ?x ?x ?y) :effect (done ?x)))"""


def test_a_precondition_atom_that_repeats_a_variable_binds_both_places_to_one_object(tmp_path: Path) -> None:
    problem = "(define (problem p) (:domain tri) (:objects a b) (:init (tri a a b) (tri a b a)) (:goal (done a)))"
    task = load(tmp_path, TRIANGLE, problem)  # the exploration offers (go a a) from (tri a b a): never applicable
    assert applicable(task) == ["(go a b)"] == mimir_applicable(tmp_path / "domain.pddl", tmp_path / "problem.pddl")


# ---- types: implied parents, either anywhere, undeclared ------------------------------------------

VEHICLES = """(define (domain vehicles) (:requirements :typing :adl)
  (:types car truck - vehicle place)
  (:predicates (at ?v - (either car truck) ?p - place) (road ?a ?b - place) (moved ?v - vehicle) (checked))
  (:action drive :parameters (?v - (either car truck) ?a ?b - place)
    :precondition (and (at ?v ?a) (road ?a ?b)) :effect (and (not (at ?v ?a)) (at ?v ?b)))
  (:action mark :parameters (?v - vehicle) :precondition (and) :effect (moved ?v))
  (:action check :parameters ()
    :precondition (forall (?v - (either car truck)) (exists (?p - place) (at ?v ?p))) :effect (checked)))"""
VEHICLES_PROBLEM = """(define (problem v1) (:domain vehicles) (:objects c - car t - truck v - vehicle l1 l2 - place)
  (:init (at c l1) (at t l1) (road l1 l2)) (:goal (and (at c l2) (at t l2) (checked))))"""


def test_a_type_named_only_as_a_parent_is_a_type_of_object_and_either_reads_anywhere(tmp_path: Path) -> None:
    task = load(tmp_path, VEHICLES, VEHICLES_PROBLEM)  # (pymimir 0.13 reads no `either` in parameters)
    assert applicable(task) == ["(drive c l1 l2)", "(drive t l1 l2)", "(mark c)", "(mark t)", "(mark v)", "(check)"]
    state = task.apply(task.apply(task.init, task.action_index[("drive", ("c", "l1", "l2"))]),
                       task.action_index[("drive", ("t", "l1", "l2"))])
    assert applicable(task, state) == ["(mark c)", "(mark t)", "(mark v)", "(check)"]


def test_either_in_a_quantified_effect_and_goal(tmp_path: Path) -> None:
    domain = VEHICLES.replace(":effect (checked)))", ":effect (and (checked) (forall (?v - (either car)) (moved ?v)))))")
    problem = VEHICLES_PROBLEM.replace("(checked))))", "(forall (?x - (either car truck)) (moved ?x)))))")
    task = load(tmp_path, domain, problem)
    index = task.action_index[("check", ())]
    after = task.apply(task.init, index)
    assert {args for name, args in task.true_atoms(after) if name == "moved"} == {("c",)}  # cars only
    assert len(task.lifted.goal_conditions) == 1 and not task.is_goal(after)


@pytest.mark.parametrize(("where", "domain", "problem", "said"), [
    ("object", VEHICLES, VEHICLES_PROBLEM.replace("v - vehicle", "v - boat"), "problem.pddl:1: the object v has the type 'boat'"),
    ("parameter", VEHICLES.replace("(?v - vehicle)", "(?v - boat)"), VEHICLES_PROBLEM,
     "domain.pddl:6: parameter ?v of action 'mark' has the type 'boat'"),
    ("quantifier", VEHICLES.replace("(?p - place)", "(?p - spot)"), VEHICLES_PROBLEM,
     "domain.pddl:8: a quantified variable of action 'check' has the type 'spot'"),
    ("untyped domain", ("(define (domain u) (:predicates (p ?x)) (:action a :parameters (?x) :precondition (p ?x) "
                        ":effect (not (p ?x))))"), "(define (problem u1) (:domain u) (:objects o - thing) (:init) (:goal (and)))",
     "the object o has the type 'thing', which the domain does not declare (its types: none)"),
])
def test_an_undeclared_type_is_refused_in_one_line(tmp_path: Path, where: str, domain: str, problem: str,
                                                   said: str) -> None:
    with pytest.raises(PDDLError) as caught:
        read_task(*write(tmp_path, domain, problem))
    assert said in one_line(caught)


# ---- action costs ---------------------------------------------------------------------------------

COSTS = """(define (domain costs) (:requirements :action-costs :conditional-effects)
  (:predicates (p ?x) (q ?x) (r))
  (:functions (total-cost) - number (w ?x) - number)
  (:action both :parameters (?x) :precondition (p ?x)
    :effect (and (q ?x) (increase (total-cost) 1) (and (increase (total-cost) 2))))
  (:action weighed :parameters (?x) :precondition (p ?x) :effect (and (r) (increase (total-cost) (w ?x)))))"""
COSTS_PROBLEM = """(define (problem c1) (:domain costs) (:objects a b)
  (:init (p a) (p b) (= (w a) 4) (= (total-cost) 0)) (:goal (q a)) (:metric minimize (total-cost)))"""


def test_two_cost_effects_of_one_action_are_summed(tmp_path: Path) -> None:
    task = load(tmp_path, COSTS, COSTS_PROBLEM)
    assert {a.pddl: a.cost for a in task.actions} == {"(both a)": 3, "(both b)": 3, "(weighed a)": 4}
    initial = pymimir.Problem(pymimir.Domain(str(tmp_path / "domain.pddl")), str(tmp_path / "problem.pddl")
                              ).get_initial_state()
    mimir = {str(a).lower(): a.apply(initial, return_cost=True)[1] for a in initial.generate_applicable_actions()}
    assert mimir == {"(both a)": 3, "(both b)": 3, "(weighed a)": 4}  # summed, and (weighed b) left out alike


def test_a_cost_function_without_a_value_leaves_its_action_out_and_says_so(tmp_path: Path) -> None:
    task = load(tmp_path, COSTS, COSTS_PROBLEM)  # (w b) has no value: (weighed b) is not an action
    assert ("weighed", ("b",)) not in task.action_index
    assert task.lifted.schemas[1].cost_function == ("w", (0,))
    assert [(name, args) for name, args, _ in task.lifted.values] == [("w", ("a",))]


@pytest.mark.parametrize(("effect", "said"), [
    ("(when (r) (increase (total-cost) 2))", "action 'both' increases total-cost inside (when ...): a conditional"),
    ("(forall (?y) (increase (total-cost) 2))", "action 'both' increases total-cost inside (forall ...)"),
    ("(increase (total-cost) 1) (increase (total-cost) (w ?x))", "action 'both' has 2 cost effects"),
])
def test_costs_that_no_single_cost_effect_says_are_refused_in_one_line(tmp_path: Path, effect: str, said: str) -> None:
    domain = COSTS.replace("(increase (total-cost) 1) (and (increase (total-cost) 2))", effect)
    with pytest.raises(PDDLError) as caught:
        read_task(*write(tmp_path, domain, COSTS_PROBLEM))
    assert said in one_line(caught) and "domain.pddl:5:" in str(caught.value)


# ---- names declared twice -------------------------------------------------------------------------


@pytest.mark.parametrize(("domain", "said"), [
    (("(define (domain d) (:predicates (p) (q)) (:action a :parameters () :precondition (p) :effect (q))\n"
      "(:action a :parameters () :precondition (q) :effect (p)))"), "domain.pddl:2: the action 'a' is declared twice (first on line 1)"),
    ("(define (domain d) (:predicates (p)\n (p ?x)) (:action a :parameters () :precondition (p) :effect (not (p))))",
     "domain.pddl:2: the predicate 'p' is declared twice"),
    (("(define (domain d) (:requirements :typing) (:types s u - object t - s t - u) (:predicates (p))\n"
      "(:action a :parameters () :precondition (p) :effect (not (p))))"), "the type 't' is declared twice"),
    ("(define (domain d) (:predicates (p ?x)) (:action a :parameters (?x ?x) :precondition (p ?x) :effect (not (p ?x))))",
     "action 'a' names the parameter ?x twice"),
    (("(define (domain d) (:requirements :typing) (:types t - (either a b)) (:predicates (p)) (:action a :parameters () "
      ":precondition (p) :effect (not (p))))"), "the type t is given the parent (either a b): a type has one parent"),
])
def test_names_declared_twice_are_refused_in_one_line(tmp_path: Path, domain: str, said: str) -> None:
    with pytest.raises(PDDLError) as caught:
        read_task(*write(tmp_path, domain, "(define (problem p1) (:domain d) (:init) (:goal (and)))"))
    assert said in one_line(caught)


def test_a_type_declared_under_object_and_under_another_type_is_of_the_other(tmp_path: Path) -> None:
    """IPC 2006's Storage declares `area - object` and `area - surface`: the second says all the first does."""
    domain = ("(define (domain d) (:requirements :typing) (:types area surface - object crate - surface area - surface)"
              " (:predicates (free ?s - surface)) (:action take :parameters (?a - area) :precondition (free ?a)"
              " :effect (not (free ?a))))")
    problem = "(define (problem p1) (:domain d) (:objects a1 - area c1 - crate) (:init (free a1) (free c1)) (:goal (not (free a1))))"
    task = load(tmp_path, domain, problem)
    assert applicable(task) == ["(take a1)"]
    assert set(read_task(*write(tmp_path, domain, problem)).supertypes["area"]) == {"area", "surface", "object"}


@pytest.mark.parametrize(("domain_types", "objects", "said"), [
    ("c - object", "x - c - c", "problem.pddl:1: the objects: '- c' follows no name"),
    ("c - object - object", "x - c", "domain.pddl:1: the types: '- object' follows no name"),
])
def test_a_type_that_follows_no_name_is_refused_in_one_line(tmp_path: Path, domain_types: str, objects: str,
                                                          said: str) -> None:
    domain = (f"(define (domain t) (:requirements :typing) (:types {domain_types}) (:predicates (p ?x - c))"
              " (:action go :parameters (?x - c) :precondition (p ?x) :effect (not (p ?x))))")
    problem = f"(define (problem q) (:domain t) (:objects {objects}) (:init (p x)) (:goal (not (p x))))"
    with pytest.raises(PDDLError) as caught:
        read_task(*write(tmp_path, domain, problem))
    assert said in one_line(caught)
