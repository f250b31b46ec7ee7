"""Which PDDL a world reads: classical PDDL as Fast Downward reads it (ADL, derived predicates, action costs)
loads; numeric state, durative actions, PDDL+, `:constraints`, preferences and metrics other than
`minimize (total-cost)` are refused by name, with the file that holds them (the domain file for what a domain
declares) and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pddlworlds.registration import make_env
from pddlworlds.worlds.grounding import ground
from pddlworlds.worlds.pddl import PDDLError, read_task

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


def write(tmp_path: Path, domain_text: str, problem_text: str = PROBLEM) -> tuple[Path, Path]:
    (tmp_path / "domain.pddl").write_text(domain_text)
    (tmp_path / "p1.pddl").write_text(problem_text)
    return tmp_path / "domain.pddl", tmp_path / "p1.pddl"


# ---- refused: each names the domain file, the line and the feature --------------------------------

FUNCTIONS = "  (:functions (fuel ?x - thing) - number (total-cost) - number)"
CASES = [
    ("numeric increase", domain(extra=FUNCTIONS, effect="(and (q ?x) (increase (fuel ?x) 1))"), 9,
     "the effect of action 'go' increases (fuel ?x): numeric state is not supported"),
    ("decrease", domain(extra=FUNCTIONS, effect="(and (q ?x) (decrease (total-cost) 1))"), 9,
     "the effect of action 'go' uses numeric effects (decrease)"),
    ("assign", domain(extra=FUNCTIONS, effect="(and (q ?x) (assign (fuel ?x) 1))"), 9,
     "the effect of action 'go' uses numeric effects (assign)"),
    ("scale-up", domain(extra=FUNCTIONS, effect="(and (q ?x) (scale-up (fuel ?x) 2))"), 9,
     "the effect of action 'go' uses numeric effects (scale-up)"),
    ("numeric in a conditional effect", domain(extra=FUNCTIONS, effect="(when (p ?x) (increase (fuel ?x) 1))"), 9,
     "the effect of action 'go' increases (fuel ?x): numeric state is not supported"),
    ("numeric precondition", domain(extra=FUNCTIONS, precondition="(and (p ?x) (>= (fuel ?x) 1))"), 8,
     "the precondition of action 'go' uses numeric comparisons (>=)"),
    ("numeric in a derived predicate", domain(":adl :derived-predicates",
                                              FUNCTIONS + "\n  (:derived (q ?x - thing) (> (fuel ?x) 1))", "(p ?x)"), 6,
     "a derived predicate uses numeric comparisons (>)"),
    ("preference in a precondition", domain(precondition="(and (p ?x) (preference pp (p ?x)))"), 8,
     "the precondition of action 'go' uses preferences (preference)"),
    ("durative", domain(extra="  (:durative-action fly :parameters (?x - thing) :duration (= ?duration 1)\n"
                              "    :condition (at start (p ?x)) :effect (at end (q ?x)))"), 5,
     "durative actions (:durative-action) are not supported"),
    ("durative flag", domain(":strips :durative-actions"), 2, "requirement :durative-actions (durative actions)"),
    ("process", domain(extra="  (:process flow :parameters (?x - thing) :precondition (p ?x) "
                             ":effect (increase (fuel ?x) 1))"), 5, "PDDL+ processes (:process) are not supported"),
    ("event", domain(extra="  (:event ev :parameters (?x - thing) :precondition (p ?x) :effect (q ?x))"), 5,
     "PDDL+ events (:event) are not supported"),
    ("time flag", domain(":strips :time"), 2, "requirement :time (PDDL+ time)"),
    ("timed initial literals flag", domain(":strips :timed-initial-literals"), 2,
     "requirement :timed-initial-literals (timed initial literals)"),
    ("constraints", domain(extra="  (:constraints (always (p a)))"), 5, "constraints (:constraints) are not supported"),
    ("constraints flag", domain(":strips :constraints"), 2, "requirement :constraints (constraints)"),
    ("preferences flag", domain(":strips :preferences"), 2, "requirement :preferences (preferences)"),
    ("unknown flag", domain(":strips :typo-flag"), 2, "unknown requirement :typo-flag: PDDL has no such requirement"),
    ("type cycle", domain().replace("(:types thing)", "(:types thing - box box - thing)"), 3,
     "the types form a cycle"),
]


@pytest.mark.parametrize(("name", "text", "line", "expected"), CASES, ids=[c[0] for c in CASES])
def test_unsupported_domain_features_name_the_domain_file_and_line(tmp_path: Path, name, text, line, expected):
    paths = write(tmp_path, text)
    with pytest.raises(PDDLError) as info:
        read_task(*paths)
    assert info.value.path == str(paths[0]) and info.value.line == line
    assert str(info.value).startswith(f"{paths[0]}:{line}: ") and expected in str(info.value)
    assert "\n" not in str(info.value)
    with pytest.raises(PDDLError, match="domain.pddl:"):
        make_env(*paths)


GOALS = [
    ("numeric goal", PROBLEM.replace("(:goal (and (q a)))", "(:goal (and (q a)\n    (> (total-cost) 3)))"), 5,
     "the goal uses numeric comparisons (>)"),
    ("preference in the goal", PROBLEM.replace("(:goal (and (q a)))", "(:goal (and (q a)\n    (preference g (q b))))"),
     5, "the goal uses preferences (preference)"),
    ("constraints", PROBLEM[:-2] + "\n  (:constraints (always (p a))))\n", 5, "constraints (:constraints) are not supported"),
    ("maximize", PROBLEM[:-2] + "\n  (:metric maximize (total-cost)))\n", 5,
     "the metric (:metric maximize (total-cost)) is not supported: only (:metric minimize (total-cost)) is"),
    ("total-time", PROBLEM[:-2] + "\n  (:metric minimize (total-time)))\n", 5,
     "the metric (:metric minimize (total-time)) is not supported"),
    ("metric expression", PROBLEM[:-2] + "\n  (:metric minimize (+ (total-cost) 1)))\n", 5,
     "the metric (:metric minimize (+ (total-cost) 1)) is not supported"),
]


@pytest.mark.parametrize(("name", "text", "line", "expected"), GOALS, ids=[c[0] for c in GOALS])
def test_unsupported_problem_features_name_the_problem_file_and_line(tmp_path: Path, name, text, line, expected):
    paths = write(tmp_path, domain(extra="  (:functions (total-cost) - number)"), text)
    with pytest.raises(PDDLError) as info:
        read_task(*paths)
    assert info.value.path == str(paths[1]) and info.value.line == line
    assert str(info.value).startswith(f"{paths[1]}:{line}: ") and expected in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("number", "expected"), [("-2", "Negative numbers are not allowed"), ("2.5", "Fractional numbers are not supported")]
)
def test_action_costs_are_natural_numbers(tmp_path: Path, number, expected):
    paths = write(tmp_path, domain(":strips :typing :action-costs", "  (:functions (total-cost) - number)",
                                   f"(and (q ?x) (increase (total-cost) {number}))"))
    with pytest.raises(PDDLError, match=rf"domain.pddl:9: cannot parse domain: .*{expected}"):
        read_task(*paths)


# ---- supported: what used to be refused loads, and behaves as PDDL says ---------------------------


def states(task, *actions: str) -> list[set[str]]:
    """The true atoms after each prefix of `actions` (the initial state first)."""
    state, out = task.init, []
    for action in (None, *actions):
        if action is not None:
            schema, *args = action.strip("()").split()
            index = task.action_index[(schema, tuple(args))]
            assert task.is_applicable(state, index), action
            state = task.apply(state, index)
        out.append({"(" + " ".join((n, *a)) + ")" for n, a in task.true_atoms(state)})
    return out


def test_forall_effect(tmp_path: Path):
    task = ground(read_task(*write(tmp_path, domain(effect="(and (q ?x) (forall (?y - thing) (not (p ?y))))"),
                                   PROBLEM.replace("(:init (p a))", "(:init (p a) (p b))"))))
    assert task.lifted.schemas[0].conditional
    assert states(task, "(go b)") == [{"(p a)", "(p b)"}, {"(q b)"}]


def test_when_effect(tmp_path: Path):
    task = ground(read_task(*write(tmp_path, domain(effect="(and (q ?x) (when (q ?x) (not (p ?x))))"))))
    assert states(task, "(go a)", "(go a)") == [{"(p a)"}, {"(p a)", "(q a)"}, {"(q a)"}]


@pytest.mark.parametrize("flag", [":strips :typing :action-costs", ":strips :typing"], ids=["flag", "no flag"])
def test_action_costs(tmp_path: Path, flag):
    """Costs count under `(:metric minimize (total-cost))`, declared requirement or not; without the metric
    every action costs 1."""
    text = domain(flag, "  (:functions (total-cost) - number)", "(and (q ?x) (increase (total-cost) 4))")
    task = ground(read_task(*write(tmp_path, text, PROBLEM[:-2] + "\n  (:metric minimize (total-cost)))\n")))
    assert task.costs and [(a.pddl, a.cost) for a in task.actions] == [("(go a)", 4)]
    task = ground(read_task(*write(tmp_path, text)))
    assert not task.costs and [a.cost for a in task.actions] == [1]


def test_action_costs_by_a_static_function(tmp_path: Path):
    text = domain(":strips :typing :action-costs", "  (:functions (total-cost) - number (price ?x - thing) - number)",
                  "(and (q ?x) (increase (total-cost) (price ?x)))")
    problem = PROBLEM.replace("(:init (p a))", "(:init (p a) (p b) (= (price a) 3) (= (price b) 5) (= (total-cost) 0))")
    task = ground(read_task(*write(tmp_path, text, problem[:-2] + "\n  (:metric minimize (total-cost)))\n")))
    assert [(a.pddl, a.cost) for a in task.actions] == [("(go a)", 3), ("(go b)", 5)]


def test_numeric_functions_declared_but_unused_load(tmp_path: Path):
    task = read_task(*write(tmp_path, domain(extra=FUNCTIONS),
                            PROBLEM.replace("(:init (p a))", "(:init (p a) (= (fuel a) 3))")))
    assert [s.name for s in task.schemas] == ["go"]


@pytest.mark.parametrize("flag", [":numeric-fluents", ":fluents"])
def test_numeric_fluents_flag_declared_for_total_cost_loads(tmp_path: Path, flag):
    text = domain(f":strips :typing :action-costs {flag}", "  (:functions (total-cost) - number)",
                  "(and (q ?x) (increase (total-cost) 2))")
    task = ground(read_task(*write(tmp_path, text, PROBLEM[:-2] + "\n  (:metric minimize (total-cost)))\n")))
    assert [a.cost for a in task.actions] == [2]


def test_derived_predicates(tmp_path: Path):
    text = domain(":strips :typing :derived-predicates", "  (:derived (q ?x - thing) (p ?x))", "(not (p ?x))")
    task = ground(read_task(*write(tmp_path, text)))
    assert task.lifted.derived == ("q",)
    assert states(task, "(go a)") == [{"(p a)", "(q a)"}, set()]  # q follows p, both ways
    assert task.is_goal(task.init) and not task.is_goal(task.apply(task.init, 0))


@pytest.mark.parametrize(
    ("precondition", "applicable"),
    [("(exists (?y - thing) (p ?y))", ["(go a)", "(go b)"]), ("(or (p ?x) (q ?x))", ["(go a)"]),
     ("(forall (?y - thing) (p ?y))", []), ("(imply (p ?x) (q ?x))", ["(go b)"]),
     ("(forall (?y - thing) (or (= ?y ?x) (not (p ?y))))", ["(go a)"])],
    ids=["exists", "or", "forall", "imply", "equality"],
)
def test_quantified_and_disjunctive_preconditions(tmp_path: Path, precondition, applicable):
    task = ground(read_task(*write(tmp_path, domain(":adl", precondition=precondition))))
    assert [task.actions[i].pddl for i in task.applicable(task.init)] == applicable


@pytest.mark.parametrize(
    ("goal", "at_first", "after"),
    [("(forall (?y - thing) (q ?y))", False, False), ("(or (q a) (q b))", False, True),
     ("(exists (?y - thing) (and (q ?y) (not (p ?y))))", False, True)],
    ids=["forall", "or", "exists"],
)
def test_quantified_goals_name_no_error(tmp_path: Path, goal, at_first, after):
    task = ground(read_task(*write(tmp_path, domain(), PROBLEM.replace("(:goal (and (q a)))", f"(:goal {goal})"))))
    assert task.goal_size == 1 and len(task.lifted.goal_conditions) == 1
    state = task.apply(task.init, task.action_index[("go", ("a",))])
    assert task.is_goal(task.init) is at_first and task.is_goal(state) is after
    assert task.progress(state) == (1.0 if after else 0.0)


def test_plain_strips_with_negative_preconditions_still_reads(tmp_path: Path):
    task = read_task(*write(tmp_path, domain(":strips :typing :negative-preconditions",
                                             precondition="(and (p ?x) (not (q ?x)))")))
    assert [s.name for s in task.schemas] == ["go"] and not task.schemas[0].preconditions[1].positive


# ---- what older planners read and the letter of PDDL does not --------------------------------------


def test_an_object_the_domain_uses_undeclared_is_the_problems_object(tmp_path: Path) -> None:
    """The IPC 2000 Tyreworld's `(have wrench)`: a problem object named in an action, taken as a constant
    with the problem's type (Fast Downward's translator refuses the file); a name the problem lacks stays an
    error naming the domain file and line."""
    text = domain(precondition="(and (p ?x) (p a))")
    d, p = write(tmp_path, text)
    with pytest.warns(UserWarning, match=r"uses a \(thing\) without declaring it as constants"):
        task = read_task(d, p)
    assert ("a", "thing") in task.objects and [o for o, _ in task.objects].count("a") == 1
    env = make_env(d, p)
    env.reset(seed=0)
    assert env.unwrapped.valid_actions() == ["go a"]
    assert env.step("go a")[2]  # the goal (q a) holds
    d, p = write(tmp_path, domain(precondition="(and (p ?x) (p zz))"))
    with pytest.raises(PDDLError, match="Undefined object") as caught:
        read_task(d, p)
    assert caught.value.path == str(d)


def test_a_dash_glued_to_its_type_is_read_as_two_words(tmp_path: Path) -> None:
    """`?x -thing` (the fridge domain writes `?c -compressor`): no PDDL name starts with '-'; names with a
    dash inside (`on-table`) are untouched."""
    text = domain().replace("(p ?x - thing) (q ?x - thing)", "(p ?x -thing) (on-table ?x - thing) (q ?x -thing)")
    d, p = write(tmp_path, text, PROBLEM.replace("a b - thing", "a b -thing"))
    task = read_task(d, p)
    assert [name for name, _ in task.predicates] == ["p", "on-table", "q"]
    assert dict(task.objects) == {"a": "thing", "b": "thing"}
    env = make_env(d, p)
    env.reset(seed=0)
    assert env.unwrapped.valid_actions() == ["go a"]
