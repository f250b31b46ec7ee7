"""Grounding and the bitmask transition, checked against unified-planning's SequentialSimulator."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import pytest

from pddlworlds.worlds.catalogue import get_domain
from pddlworlds.worlds.grounding import ground, natural_key
from pddlworlds.worlds.pddl import PDDLNormalisationWarning, read_task, read_up_problem

WALK_STEPS = 20
# unified-planning grounds every type-compatible action before it can list the applicable ones (about 10 ms
# each: over ten seconds for a Barman problem). So on Barman the full comparison of applicable sets runs on
# BARMAN_FULL only; on the other Barman problems each of our applicable actions, and a sample of our
# inapplicable ones, is checked with `is_applicable`, which grounds only the actions asked about, over a
# shorter walk. Successor states and goal tests are compared on every step of every problem.
BARMAN_FULL = {"p01"}
BARMAN_WALK_STEPS = 12
INAPPLICABLE_SAMPLE = 3


def _atoms_of(up_state, fluent_exps) -> set[tuple[str, tuple[str, ...]]]:
    return {
        (f.fluent().name, tuple(a.object().name for a in f.args))
        for f in fluent_exps
        if up_state.get_value(f).bool_constant_value()
    }


def test_transition_agrees_with_unified_planning(domain_problem, world_of) -> None:
    from unified_planning.environment import get_environment
    from unified_planning.model.fluent import get_all_fluent_exp
    from unified_planning.shortcuts import SequentialSimulator

    domain, problem = domain_problem
    task = world_of(domain, problem).task
    d = get_domain(domain)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PDDLNormalisationWarning)
        # The global environment: unified-planning 1.3's grounder builds actions there whatever the problem's.
        up_problem = read_up_problem(d.domain_file, d.problem_file(problem), environment=get_environment())
    simulator = SequentialSimulator(up_problem)
    fluent_exps = [f for fluent in up_problem.fluents for f in get_all_fluent_exp(up_problem, fluent)]

    def up_action(index: int):
        action = task.actions[index]
        return up_problem.action(action.schema), [up_problem.object(a) for a in action.args]

    full = domain != "barman" or problem in BARMAN_FULL
    steps = WALK_STEPS if domain != "barman" else BARMAN_WALK_STEPS
    rng = random.Random(f"{domain}/{problem}")
    state, up_state = task.init, simulator.get_initial_state()
    for step in range(steps + 1):
        assert _atoms_of(up_state, fluent_exps) == set(task.true_atoms(state)), f"state after {step} steps"
        assert simulator.is_goal(up_state) == task.is_goal(state)
        ours = task.applicable(state)
        if full:
            theirs = {
                (action.name, tuple(p.object().name for p in params))
                for action, params in simulator.get_applicable_actions(up_state)
            }
            assert theirs == {(task.actions[i].schema, task.actions[i].args) for i in ours}, f"step {step}"
        else:
            for index in ours:
                assert simulator.is_applicable(up_state, *up_action(index)), task.actions[index].pddl
            ours_set = set(ours)
            others = [i for i in range(len(task.actions)) if i not in ours_set]
            for index in rng.sample(others, min(INAPPLICABLE_SAMPLE, len(others))):
                assert not simulator.is_applicable(up_state, *up_action(index)), task.actions[index].pddl
        if step == steps or not ours:
            break
        index = rng.choice(ours)
        state = task.apply(state, index)
        up_state = simulator.apply(up_state, *up_action(index))
        assert up_state is not None


# ---- small tasks by hand -------------------------------------------------------------------------

DOMAIN = """\
(define (domain toy)
  (:requirements :strips :typing :negative-preconditions)
  (:types thing)
  (:predicates (p ?x - thing) (q ?x - thing) (link ?x ?y - thing))
  (:action go
    :parameters (?x ?y - thing)
    :precondition (and (p ?x) (link ?x ?y) (not (q ?y)))
    :effect (and (q ?y) (not (p ?x))))
  (:action flip
    :parameters (?x - thing)
    :precondition (q ?x)
    :effect (and (not (q ?x)) (q ?x) (p ?x))))
"""

PROBLEM = """\
(define (problem toy1) (:domain toy)
  (:objects b10 b2 b1 - thing)
  (:init (p b1) (link b1 b2) (link b2 b10))
  (:goal (and (q b2) (not (p b1)) (q b10))))
"""


@pytest.fixture
def toy(tmp_path: Path):
    (tmp_path / "d.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(PROBLEM)
    return ground(read_task(tmp_path / "d.pddl", tmp_path / "p.pddl"))


def test_natural_key_orders_numbers_by_value() -> None:
    assert sorted(["b10", "b2", "b1", "a"], key=natural_key) == ["a", "b1", "b2", "b10"]


def test_grounding_keeps_the_reachable_actions_in_natural_order(toy) -> None:
    go = [a.args for a in toy.actions if a.schema == "go"]
    assert go == [("b1", "b2"), ("b2", "b10")]  # only linked pairs, in natural order
    # flip b1 needs (q b1), which no action can add: grounding by reachability leaves it out
    assert [a.args for a in toy.actions if a.schema == "flip"] == [("b2",), ("b10",)]
    assert all(atom[0] != "link" or atom in toy.lifted.init for atom in toy.atoms)


def test_grounding_is_reproducible(toy) -> None:
    again = ground(toy.lifted)
    assert again.atoms == toy.atoms and again.actions == toy.actions and again.init == toy.init


def test_negative_preconditions_and_goals(toy) -> None:
    state = toy.init
    go_12 = toy.action_index[("go", ("b1", "b2"))]
    go_2_10 = toy.action_index[("go", ("b2", "b10"))]
    assert toy.applicable(state) == [go_12]
    assert toy.goal_size == 3 and toy.progress(state) == 0.0
    state = toy.apply(state, go_12)
    assert toy.holds(state, ("q", ("b2",))) and not toy.holds(state, ("p", ("b1",)))
    assert toy.progress(state) == pytest.approx(2 / 3)
    assert not toy.is_applicable(state, go_2_10)  # (p b2) does not hold
    flip_2 = toy.action_index[("flip", ("b2",))]
    state = toy.apply(state, flip_2)
    # delete then add: (q b2) is both deleted and added by flip, so it still holds
    assert toy.holds(state, ("q", ("b2",))) and toy.holds(state, ("p", ("b2",)))
    state = toy.apply(state, go_2_10)
    assert toy.is_goal(state) and toy.progress(state) == 1.0
    # the negative goal (not (p b1)) fails when p b1 holds again
    assert not toy.is_goal(state | toy.state_of([("p", ("b1",))]))


def test_state_conversions_round_trip(toy) -> None:
    atoms = [("p", ("b2",)), ("q", ("b10",))]
    state = toy.state_of(atoms)
    assert toy.true_atoms(state) == sorted(atoms, key=toy.atoms.index)
    assert toy.state_of(toy.true_atoms(toy.init)) == toy.init
    with pytest.raises(KeyError, match="not part of this task"):
        toy.state_of([("p", ("nobody",))])
    assert not toy.holds(state, ("p", ("nobody",)))


def test_shipped_grounding_sizes(world_of) -> None:
    # Guards against silent changes in grounding (pruning, typing): sizes of a few public problems.
    assert len(world_of("blocksworld", "problem1").task.actions) == 2 * 3 + 2 * 3 * 3
    gripper = world_of("gripper", "prob01").task  # 2 rooms, 4 balls, 2 grippers; types are static predicates
    assert len(gripper.actions) == 2 * 2 + 2 * (4 * 2 * 2)
    assert sorted({a.schema for a in world_of("barman", "p01").task.actions}) == sorted(
        s.name for s in world_of("barman", "p01").lifted.schemas
    )


def test_applicable_matches_a_full_scan(domain_problem, world_of) -> None:
    """`applicable` tests only the actions whose key atom holds; it must find what a scan of all finds."""
    task = world_of(*domain_problem).task
    rng = random.Random("scan:" + "/".join(domain_problem))
    state = task.init
    for _ in range(30):
        scan = [i for i in range(len(task.actions)) if task.is_applicable(state, i)]
        assert task.applicable(state) == scan
        if not scan:
            break
        state = task.apply(state, rng.choice(scan))


def test_applicable_is_the_same_from_its_memo_and_past_its_budget(world_of) -> None:
    """States met again are listed from the memo of candidates; once the memo's budget is spent the
    candidates are gathered afresh each time; either way the list is a full scan's."""
    from pddlworlds.worlds.ground_task import Memo

    task = world_of("barman", "p01").task
    rng = random.Random("memo")
    states = [task.init]
    for _ in range(40):
        choices = task.applicable(states[-1])
        states.append(task.apply(states[-1], rng.choice(choices)))
    for state in states + states:  # the second pass reads the memo
        assert task.applicable(state) == [i for i in range(len(task.actions)) if task.is_applicable(state, i)]
    small = Memo(3)
    small.keep(1, (10, 11))
    small.keep(2, (12, 13))  # over the budget: not kept
    small.keep(3, (14,))
    assert dict(small) == {1: (10, 11), 3: (14,)} and small.left == 0
