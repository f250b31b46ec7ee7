"""Reading PDDL: errors that name the file and line, sections in any order, repeated objects, ADL; the
planner's unified-planning reader normalises files with a warning."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from pddlworlds.worlds.catalogue import load_task
from pddlworlds.worlds.grounding import ground
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


# ---- section order and repeated names: the world reads them as they are --------------------------
# (Only the planner's unified-planning reader needs the files rewritten: `read_up_problem` normalises them
# with a `PDDLNormalisationWarning`.)

SHUFFLED = DOMAIN.replace(
    "(:types thing)\n  (:predicates (p ?x - thing) (q ?x - thing) (done))",
    "(:predicates (p ?x - thing) (q ?x - thing) (done))\n  (:constants c - thing)\n  (:types thing)",
)
LATE = DOMAIN.replace("  (:predicates (p ?x - thing) (q ?x - thing) (done))\n", "").rstrip()[:-1] + (
    "\n  (:predicates (p ?x - thing) (q ?x - thing) (done)))\n"
)


def test_sections_in_any_order_load_without_a_warning(tmp_path: Path, toy) -> None:
    domain = write(tmp_path, "shuffled.pddl", SHUFFLED)
    task = read_quietly(domain, toy[1])
    assert ("c", "thing") in task.objects and task.supertypes["thing"] == ("thing", "object")
    assert [a.pddl for a in ground(task).actions] == ["(go a)", "(go b)"]  # (p c) never holds


def test_declarations_after_an_action_load_without_a_warning(tmp_path: Path, toy) -> None:
    domain = write(tmp_path, "late.pddl", LATE)
    task = read_quietly(domain, toy[1])
    assert [s.name for s in task.schemas] == ["go"]
    assert [a.pddl for a in ground(task).actions] == ["(go a)", "(go b)"]


def test_normalise_domain_puts_declarations_first() -> None:
    text, changes = normalise_domain(SHUFFLED)
    assert changes and text.index(":types") < text.index(":constants") < text.index(":predicates")
    assert normalise_domain(DOMAIN) == (DOMAIN, [])
    text, changes = normalise_domain(LATE)
    assert changes and text.index(":predicates") < text.index(":action")


@pytest.mark.parametrize("text", [SHUFFLED, LATE], ids=["shuffled", "late"])
def test_read_up_problem_reorders_sections_with_a_warning(tmp_path: Path, toy, text) -> None:
    domain = write(tmp_path, "domain2.pddl", text)
    with pytest.warns(PDDLNormalisationWarning, match="reordered sections") as record:
        problem = read_up_problem(domain, toy[1])
    assert all(str(w.message).startswith(str(domain)) for w in record)
    assert [a.name for a in problem.actions] == ["go"]


def duplicates(tmp_path: Path) -> tuple[Path, Path]:
    domain = write(
        tmp_path, "domain.pddl", DOMAIN.replace("(:types thing)", "(:types thing)\n  (:constants c - thing)")
    )
    problem = write(
        tmp_path, "problem.pddl", PROBLEM.replace("(:objects a b - thing)", "(:objects a b a c - thing)")
    )
    return domain, problem


def test_repeated_objects_and_constants_are_one_object(tmp_path: Path) -> None:
    task = read_quietly(*duplicates(tmp_path))
    assert sorted(name for name, _ in task.objects) == ["a", "b", "c"]
    assert [a.pddl for a in ground(task).actions] == ["(go a)", "(go b)"]  # (p c) never holds


def test_read_up_problem_drops_repeated_objects_with_a_warning(tmp_path: Path) -> None:
    domain, problem = duplicates(tmp_path)
    with pytest.warns(PDDLNormalisationWarning) as record:
        up = read_up_problem(domain, problem)
    message = " ".join(str(w.message) for w in record)
    assert message.startswith(str(problem))
    assert "'a' (declared twice)" in message and "'c' (a domain constant)" in message
    assert sorted(o.name for o in up.all_objects) == ["a", "b", "c"]


def test_conflicting_duplicate_is_an_error(tmp_path: Path) -> None:
    text = PROBLEM.replace("(:objects a b - thing)", "(:objects a b - thing a - other)")
    with pytest.raises(PDDLError, match="'a'"):
        normalise_problem(text, {}, tmp_path / "p.pddl")
    (tmp_path / "domain.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(text)
    with pytest.raises(PDDLError, match="'a'") as caught:
        read_task(tmp_path / "domain.pddl", tmp_path / "p.pddl")
    assert caught.value.path == str(tmp_path / "p.pddl")


def test_load_task_of_repeated_objects_is_silent_on_a_cache_hit(tmp_path: Path, toy) -> None:
    problem = write(tmp_path, "dup.pddl", PROBLEM.replace("a b - thing", "a b b - thing"))
    for _ in range(2):  # the second load comes from the disk cache
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            task = load_task(toy[0], problem)
        assert sorted(name for name, _ in task.objects) == ["a", "b"]


def test_shipped_tyreworld_loads_as_it_is(world_of) -> None:
    from pddlworlds.worlds.catalogue import get_domain

    d = get_domain("tyreworld")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        task = load_task(d.domain_file, d.problem_file("p01"))
    assert sum(1 for name, _ in task.objects if name == "jack") == 1
    with pytest.warns(PDDLNormalisationWarning, match="domain constant"):
        read_up_problem(d.domain_file, d.problem_file("p01"))


# ---- ADL constructs load and behave as PDDL says -------------------------------------------------
# (go ?x) over a and b, with (p a) (p b) true at first; each case: the precondition, the effect, and the
# applicable actions and true atoms after each action of a short run.


ADL = [
    ("or", "(or (p ?x) (q ?x))", "(and (q ?x) (not (p ?x)))",
     [(None, ["(go a)", "(go b)"], {"(p a)", "(p b)"}),
      ("(go a)", ["(go a)", "(go b)"], {"(q a)", "(p b)"})]),
    ("when", "(p ?x)", "(and (q ?x) (when (q ?x) (not (p ?x))))",
     [(None, ["(go a)", "(go b)"], {"(p a)", "(p b)"}),
      ("(go a)", ["(go a)", "(go b)"], {"(p a)", "(q a)", "(p b)"}),  # the condition is read before
      ("(go a)", ["(go b)"], {"(q a)", "(p b)"})]),
    ("exists", "(exists (?y - thing) (p ?y))", "(and (q ?x) (not (p ?x)))",
     [(None, ["(go a)", "(go b)"], {"(p a)", "(p b)"}),
      ("(go a)", ["(go a)", "(go b)"], {"(q a)", "(p b)"}),
      ("(go b)", [], {"(q a)", "(q b)"})]),
    ("forall", "(forall (?y - thing) (p ?y))", "(and (q ?x) (not (p ?x)))",
     [(None, ["(go a)", "(go b)"], {"(p a)", "(p b)"}),
      ("(go b)", [], {"(p a)", "(q b)"})]),
    ("forall-effect", "(p ?x)", "(and (done) (forall (?y - thing) (when (not (= ?y ?x)) (q ?y))))",
     [(None, ["(go a)", "(go b)"], {"(p a)", "(p b)"}),
      ("(go a)", ["(go a)", "(go b)"], {"(p a)", "(p b)", "(q b)", "(done)"})]),
    ("imply", "(imply (q ?x) (done))", "(q ?x)",
     [(None, ["(go a)", "(go b)"], {"(p a)", "(p b)"}),
      ("(go a)", ["(go b)"], {"(p a)", "(p b)", "(q a)"})]),
]


@pytest.mark.parametrize(("what", "precondition", "effect", "run"), ADL, ids=[c[0] for c in ADL])
def test_adl_constructs_load_and_behave(tmp_path: Path, toy, what, precondition, effect, run) -> None:
    text = DOMAIN.replace(":negative-preconditions", ":adl").replace(
        "(and (p ?x) (not (q ?x)))", precondition).replace("(and (q ?x) (not (p ?x)))", effect)
    task = ground(read_quietly(write(tmp_path, "domain.pddl", text), toy[1]))
    state = task.init
    for action, expected_applicable, expected_atoms in run:
        if action is not None:
            state = task.apply(state, task.action_index[("go", (action.strip("()").split()[1],))])
        assert [task.actions[i].pddl for i in task.applicable(state)] == expected_applicable, action
        assert {"(" + " ".join((n, *a)) + ")" for n, a in task.true_atoms(state)} == expected_atoms, action


@pytest.mark.parametrize(
    ("goal", "holds_at_first", "holds_after_go_a"),
    [("(forall (?y - thing) (p ?y))", True, True), ("(exists (?y - thing) (q ?y))", False, True),
     ("(or (q a) (q b))", False, True), ("(imply (q a) (q b))", True, False),
     ("(and (q a) (not (= a b)))", False, True)],
    ids=["forall", "exists", "or", "imply", "equality"],
)
def test_quantified_goals_load_and_count_as_one_condition(tmp_path: Path, toy, goal, holds_at_first,
                                                          holds_after_go_a) -> None:
    problem = write(tmp_path, "problem.pddl", PROBLEM.replace("(:goal (and (q a) (q b)))", f"(:goal {goal})"))
    text = DOMAIN.replace("(and (q ?x) (not (p ?x)))", "(q ?x)")  # go keeps p: forall p stays true
    task = ground(read_quietly(write(tmp_path, "domain.pddl", text), problem))
    after = task.apply(task.init, task.action_index[("go", ("a",))])
    assert task.lifted.goal_size == task.goal_size
    assert task.is_goal(task.init) is holds_at_first and task.is_goal(after) is holds_after_go_a
    assert all(not name.startswith("goal@") for name, _ in task.true_atoms(after))  # hidden helpers


def test_numeric_state_is_refused_where_it_is_used(tmp_path: Path, toy) -> None:
    text = DOMAIN.replace("(done))", "(done))\n  (:functions (fuel ?x - thing) - number)")
    declared = write(tmp_path, "declared.pddl", text)
    problem = write(tmp_path, "problem.pddl", PROBLEM.replace("(p b))", "(p b) (= (fuel a) 3))"))
    assert [s.name for s in read_quietly(declared, problem).schemas] == ["go"]  # declared, unused: fine
    used = write(tmp_path, "used.pddl", text.replace("(and (q ?x) (not (p ?x)))",
                                                    "(and (q ?x) (not (p ?x))\n  (increase (fuel ?x) 1))"))
    with pytest.raises(PDDLError, match=r"used.pddl:10: the effect of action 'go' increases \(fuel \?x\): "
                                        r"numeric state is not supported"):
        read_task(used, problem)


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


def test_a_question_mark_after_a_name_starts_a_variable(tmp_path: Path) -> None:
    """`(p?x)` reads as `(p ?x)`, as Fast Downward reads it (zenotravel writes `(aircraft?a)`)."""
    domain = write(tmp_path, "d.pddl", "(define (domain z) (:predicates (p ?x) (q ?x))\n"
                                       "  (:action go :parameters (?x) :precondition (p?x) :effect (q ?x)))")
    problem = write(tmp_path, "p.pddl", "(define (problem z1) (:domain z) (:objects a) (:init (p a)) (:goal (q a)))")
    task = ground(read_task(domain, problem))
    assert [task.actions[i].pddl for i in task.applicable(task.init)] == ["(go a)"]
