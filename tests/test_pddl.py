"""Reading PDDL: errors that name the file and line, normalisation with a warning, STRIPS only."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from pddlworlds.worlds.catalogue import load_task
from pddlworlds.worlds.pddl import (
    PDDLError,
    PDDLNormalisationWarning,
    normalise_domain,
    normalise_problem,
    read_task,
    read_up_problem,
)

DOMAIN = """\
(define (domain toy)
  (:requirements :strips :typing :negative-preconditions)
  (:types thing)
  (:predicates (p ?x - thing) (q ?x - thing) (done))
  (:action go
    :parameters (?x - thing)
    :precondition (and (p ?x) (not (q ?x)))
    :effect (and (q ?x) (not (p ?x)))))
"""

PROBLEM = """\
(define (problem toy1) (:domain toy)
  (:objects a b - thing)
  (:init (p a) (p b))
  (:goal (and (q a) (q b))))
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


@pytest.fixture
def toy(tmp_path: Path) -> tuple[Path, Path]:
    return write(tmp_path, "domain.pddl", DOMAIN), write(tmp_path, "problem.pddl", PROBLEM)


def read_quietly(domain: Path, problem: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a well-formed file loads without any warning
        return read_task(domain, problem)


def test_reads_a_small_strips_task(toy) -> None:
    task = read_quietly(*toy)
    assert task.domain_name == "toy"
    assert dict(task.objects) == {"a": "thing", "b": "thing"}
    assert task.init == {("p", ("a",)), ("p", ("b",))}
    assert set(task.goal) == {("q", ("a",), True), ("q", ("b",), True)}
    (go,) = task.schemas
    assert go.parameters == ("x",) and go.types == ("thing",)
    assert {(lit.predicate, lit.positive) for lit in go.preconditions} == {("p", True), ("q", False)}


# ---- errors name the file and the line ----------------------------------------------------------


def test_unexpected_parenthesis_names_file_and_line(tmp_path: Path, toy) -> None:
    bad = write(tmp_path, "bad.pddl", DOMAIN + "\n; a stray parenthesis after the domain\n  )\n")
    with pytest.raises(PDDLError) as caught:
        read_task(bad, toy[1])
    assert caught.value.path == str(bad)
    assert caught.value.line == 11
    assert str(caught.value) == f"{bad}:11: unexpected ')'"


def test_unclosed_parenthesis_names_file_and_a_line(tmp_path: Path, toy) -> None:
    bad = write(tmp_path, "bad.pddl", PROBLEM.replace("(:init (p a) (p b))", "(:init (p a) (p b)"))
    with pytest.raises(PDDLError) as caught:
        read_task(toy[0], bad)
    assert caught.value.path == str(bad)
    assert isinstance(caught.value.line, int)
    assert str(bad) in str(caught.value) and "unclosed" in str(caught.value)


def test_undeclared_predicate_in_domain_blames_the_domain(tmp_path: Path, toy) -> None:
    bad = write(tmp_path, "bad.pddl", DOMAIN.replace("(not (q ?x))", "(not (r ?x))"))
    with pytest.raises(PDDLError) as caught:
        read_task(bad, toy[1])
    assert caught.value.path == str(bad)
    assert caught.value.line == 7
    assert "cannot parse domain" in str(caught.value)


def test_undeclared_predicate_in_problem_blames_the_problem(tmp_path: Path, toy) -> None:
    bad = write(tmp_path, "bad.pddl", PROBLEM.replace("(:init (p a) (p b))", "(:init (p a)\n  (zz b))"))
    with pytest.raises(PDDLError) as caught:
        read_task(toy[0], bad)
    assert caught.value.path == str(bad)
    assert caught.value.line == 4
    assert "cannot parse problem" in str(caught.value)


def test_missing_file(tmp_path: Path, toy) -> None:
    with pytest.raises(PDDLError, match="cannot read file"):
        read_task(toy[0], tmp_path / "nowhere.pddl")
    with pytest.raises(PDDLError, match="cannot read file"):
        load_task(tmp_path / "nowhere.pddl", toy[1])


def test_no_define_form(tmp_path: Path, toy) -> None:
    bad = write(tmp_path, "bad.pddl", "; only a comment\n(problem)\n")
    with pytest.raises(PDDLError, match="define"):
        read_task(toy[0], bad)


# ---- normalisation: warn, then load --------------------------------------------------------------


def test_section_order_is_normalised_with_a_warning(tmp_path: Path, toy) -> None:
    shuffled = DOMAIN.replace(
        "(:types thing)\n  (:predicates (p ?x - thing) (q ?x - thing) (done))",
        "(:predicates (p ?x - thing) (q ?x - thing) (done))\n  (:constants c - thing)\n  (:types thing)",
    )
    domain = write(tmp_path, "shuffled.pddl", shuffled)
    with pytest.warns(PDDLNormalisationWarning, match="reordered sections"):
        task = read_task(domain, toy[1])
    assert ("c", "thing") in task.objects
    text, changes = normalise_domain(shuffled)
    assert changes and text.index(":types") < text.index(":constants") < text.index(":predicates")
    assert normalise_domain(DOMAIN) == (DOMAIN, [])


def test_declarations_after_an_action_are_moved_before_it(tmp_path: Path, toy) -> None:
    late = DOMAIN.replace("  (:predicates (p ?x - thing) (q ?x - thing) (done))\n", "")
    late = late.rstrip()[:-1] + "\n  (:predicates (p ?x - thing) (q ?x - thing) (done)))\n"
    domain = write(tmp_path, "late.pddl", late)
    with pytest.warns(PDDLNormalisationWarning):
        task = read_task(domain, toy[1])
    assert [s.name for s in task.schemas] == ["go"]


def test_duplicate_names_are_normalised_with_a_warning(tmp_path: Path) -> None:
    domain = write(
        tmp_path, "domain.pddl", DOMAIN.replace("(:types thing)", "(:types thing)\n  (:constants c - thing)")
    )
    problem = write(
        tmp_path, "problem.pddl", PROBLEM.replace("(:objects a b - thing)", "(:objects a b a c - thing)")
    )
    with pytest.warns(PDDLNormalisationWarning) as record:
        task = read_task(domain, problem)
    message = " ".join(str(w.message) for w in record)
    assert "'a' (declared twice)" in message and "'c' (a domain constant)" in message
    assert sorted(name for name, _ in task.objects) == ["a", "b", "c"]


def test_conflicting_duplicate_is_an_error(tmp_path: Path) -> None:
    text = PROBLEM.replace("(:objects a b - thing)", "(:objects a b - thing a - other)")
    with pytest.raises(PDDLError, match="'a'"):
        normalise_problem(text, {}, tmp_path / "p.pddl")


def test_normalisation_warning_repeats_on_a_cache_hit(tmp_path: Path, toy) -> None:
    problem = write(tmp_path, "dup.pddl", PROBLEM.replace("a b - thing", "a b b - thing"))
    for _ in range(2):  # the second load comes from the disk cache and must warn all the same
        with pytest.warns(PDDLNormalisationWarning, match="declared twice"):
            task = load_task(toy[0], problem)
        assert sorted(name for name, _ in task.objects) == ["a", "b"]


def test_normalisation_warning_on_a_cache_hit_names_the_file_read_now(tmp_path: Path, toy) -> None:
    """The cache is keyed by content: a copy of a problem read from another folder is named as itself."""
    text = PROBLEM.replace("a b - thing", "a b b - thing")
    (tmp_path / "one").mkdir(), (tmp_path / "two").mkdir()
    for problem in (write(tmp_path / "one", "dup.pddl", text), write(tmp_path / "two", "dup.pddl", text)):
        with pytest.warns(PDDLNormalisationWarning) as record:
            load_task(toy[0], problem)
        assert all(str(w.message).startswith(str(problem)) for w in record), [str(w.message) for w in record]


def test_shipped_tyreworld_is_normalised(world_of) -> None:
    from pddlworlds.worlds.catalogue import get_domain

    d = get_domain("tyreworld")
    with pytest.warns(PDDLNormalisationWarning, match="domain constant"):
        task = load_task(d.domain_file, d.problem_file("p01"))
    assert sum(1 for name, _ in task.objects if name == "jack") == 1


# ---- STRIPS only ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requirement", "precondition", "effect", "what"),
    [
        (":disjunctive-preconditions", "(or (p ?x) (q ?x))", "(q ?x)", "disjunction (or)"),
        (":conditional-effects", "(p ?x)", "(and (q ?x) (when (q ?x) (not (p ?x))))", "conditional effects (when)"),
        (":existential-preconditions", "(exists (?y - thing) (p ?y))", "(q ?x)", "existential quantification"),
        (":universal-preconditions", "(forall (?y - thing) (p ?y))", "(q ?x)", "universal quantification"),
    ],
    ids=["or", "when", "exists", "forall"],
)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pyparsing's, inside unified-planning's reader
def test_non_strips_constructs_are_rejected(
    tmp_path: Path, toy, requirement, precondition, effect, what
) -> None:
    text = DOMAIN.replace(":negative-preconditions", ":negative-preconditions " + requirement)
    text = text.replace("(and (p ?x) (not (q ?x)))", precondition).replace(
        "(and (q ?x) (not (p ?x)))", effect
    )
    domain = write(tmp_path, "domain.pddl", text)
    with pytest.raises(PDDLError, match="not STRIPS") as caught:
        read_task(domain, toy[1])
    assert what in str(caught.value)


def test_numeric_fluents_are_rejected(tmp_path: Path, toy) -> None:
    text = DOMAIN.replace(":negative-preconditions", ":negative-preconditions :numeric-fluents")
    text = text.replace("(done))", "(done))\n  (:functions (cost) - number)")
    domain = write(tmp_path, "domain.pddl", text)
    problem = write(tmp_path, "problem.pddl", PROBLEM.replace("(p b))", "(p b) (= (cost) 0))"))
    with pytest.raises(PDDLError, match=r"domain.pddl:\d+: not STRIPS: requirement :numeric-fluents"):
        read_task(domain, problem)


# ---- the unified-planning problem ----------------------------------------------------------------


def test_read_up_problem_gives_a_problem_the_simulator_accepts(toy) -> None:
    from unified_planning.environment import get_environment
    from unified_planning.shortcuts import SequentialSimulator

    problem = read_up_problem(*toy, environment=get_environment())
    simulator = SequentialSimulator(problem)
    state = simulator.get_initial_state()
    applicable = sorted(
        (a.name, tuple(str(p) for p in ps)) for a, ps in simulator.get_applicable_actions(state)
    )
    assert applicable == [("go", ("a",)), ("go", ("b",))]


def test_read_up_problem_is_private_by_default(toy) -> None:
    from unified_planning.environment import get_environment

    first, second = read_up_problem(*toy), read_up_problem(*toy)
    assert first.environment is not second.environment
    assert first.environment is not get_environment()
