"""PDDL features outside STRIPS with types are refused by name, with the file that holds them (the domain
file for what a domain declares) and the line, before unified-planning reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pddlworlds.worlds.pddl import PDDLError, read_task
from pddlworlds.registration import make_env

PROBLEM = """\
(define (problem p1) (:domain d)
  (:objects a b - thing)
  (:init (p a))
  (:goal (and (q a))))
"""


def domain(requirements: str = ":strips :typing", extra: str = "", effect: str = "(and (q ?x) (not (p ?x)))",
           precondition: str = "(p ?x)") -> str:
    return f"""\
(define (domain d)
  (:requirements {requirements})
  (:types thing)
  (:predicates (p ?x - thing) (q ?x - thing))
{extra}
  (:action go
    :parameters (?x - thing)
    :precondition {precondition}
    :effect {effect}))
"""


CASES = [
    ("forall effect", domain(effect="(and (q ?x) (forall (?y - thing) (not (p ?y))))"), 9,
     "not STRIPS: the effect of action 'go' uses universally quantified effects (forall), which is not supported"),
    ("when effect", domain(effect="(and (q ?x) (when (p ?x) (not (p ?x))))"), 9,
     "the effect of action 'go' uses conditional effects (when)"),
    ("action costs", domain(":strips :typing :action-costs", "  (:functions (total-cost) - number)",
                            "(and (q ?x) (increase (total-cost) 1))"), 2,
     "requirement :action-costs (action costs) is not supported"),
    ("cost without the flag", domain(effect="(and (q ?x) (increase (total-cost) 1))"), 9,
     "the effect of action 'go' uses numeric effects (increase)"),
    ("functions", domain(extra="  (:functions (fuel ?x - thing))"), 5, "numeric functions (:functions) are not supported"),
    ("derived", domain(extra="  (:derived (q ?x - thing) (p ?x))"), 5, "derived predicates (:derived) are not supported"),
    ("derived flag", domain(":strips :derived-predicates"), 2, "requirement :derived-predicates"),
    ("durative", domain(extra="  (:durative-action fly :parameters (?x - thing) :duration (= ?duration 1)\n"
                              "    :condition (at start (p ?x)) :effect (at end (q ?x)))"), 5,
     "durative actions (:durative-action) are not supported"),
    ("durative flag", domain(":strips :durative-actions"), 2, "requirement :durative-actions (durative actions)"),
    ("exists precondition", domain(precondition="(exists (?y - thing) (p ?y))"), 8,
     "the precondition of action 'go' uses existential quantification (exists)"),
    ("or precondition", domain(precondition="(or (p ?x) (q ?x))"), 8, "uses disjunction (or)"),
]


@pytest.mark.parametrize(("name", "text", "line", "expected"), CASES, ids=[c[0] for c in CASES])
def test_unsupported_domain_features_name_the_domain_file_and_line(tmp_path: Path, name, text, line, expected):
    (tmp_path / "domain.pddl").write_text(text)
    (tmp_path / "p1.pddl").write_text(PROBLEM)
    with pytest.raises(PDDLError) as info:
        read_task(tmp_path / "domain.pddl", tmp_path / "p1.pddl")
    assert info.value.path == str(tmp_path / "domain.pddl") and info.value.line == line
    assert str(info.value).startswith(f"{tmp_path / 'domain.pddl'}:{line}: ") and expected in str(info.value)
    with pytest.raises(PDDLError, match="domain.pddl:"):
        make_env(tmp_path / "domain.pddl", tmp_path / "p1.pddl")


@pytest.mark.parametrize(
    ("goal", "expected"),
    [("(forall (?y - thing) (q ?y))", "the goal uses universal quantification (forall)"),
     ("(or (q a) (q b))", "the goal uses disjunction (or)")],
)
def test_unsupported_goals_name_the_problem_file(tmp_path: Path, goal, expected):
    (tmp_path / "domain.pddl").write_text(domain())
    (tmp_path / "p1.pddl").write_text(PROBLEM.replace("(:goal (and (q a)))", f"(:goal {goal})"))
    with pytest.raises(PDDLError) as info:
        read_task(tmp_path / "domain.pddl", tmp_path / "p1.pddl")
    assert info.value.path == str(tmp_path / "p1.pddl") and info.value.line == 4 and expected in str(info.value)


def test_a_metric_in_the_problem_is_refused_by_name(tmp_path: Path):
    (tmp_path / "domain.pddl").write_text(domain())
    (tmp_path / "p1.pddl").write_text(PROBLEM[:-2] + "\n  (:metric minimize (total-time)))\n")
    with pytest.raises(PDDLError, match=r"p1.pddl:5: not STRIPS: :metric is not supported"):
        read_task(tmp_path / "domain.pddl", tmp_path / "p1.pddl")


def test_plain_strips_with_negative_preconditions_still_reads(tmp_path: Path):
    (tmp_path / "domain.pddl").write_text(domain(":strips :typing :negative-preconditions",
                                                 precondition="(and (p ?x) (not (q ?x)))"))
    (tmp_path / "p1.pddl").write_text(PROBLEM)
    task = read_task(tmp_path / "domain.pddl", tmp_path / "p1.pddl")
    assert [s.name for s in task.schemas] == ["go"] and not task.schemas[0].preconditions[1].positive
