"""Reasonable orders among the goal's conditions (`worlds.goal_orders`): which open condition a chosen
subgoal may not name yet, from the translator's mutex groups."""

from __future__ import annotations

import random
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest

from pddlworlds.worlds.catalogue import get_domain
from pddlworlds.worlds.goal_orders import goal_orders, mutex_masks
from pddlworlds.worlds.ground_task import set_bits
from pddlworlds.worlds.search import breadth_first_search
from pddlworlds.worlds.world import World

LAMP = """(define (domain lamp) (:requirements :strips :negative-preconditions :disjunctive-preconditions)
 (:predicates (lit) (dark) (done) (spare))
 (:action switch-on :parameters () :precondition (dark) :effect (and (lit) (not (dark))))
 (:action switch-off :parameters () :precondition (lit) :effect (and (dark) (not (lit))))
 (:action work :parameters () :precondition PRE :effect (done)))
"""


PROBLEM1 = {"gripper": "prob01", "barman": "p01", "tyreworld": "p01"}


def agentboard(domain: str, problem: str) -> World:
    d = get_domain(domain, None)
    return World.load(d.domain_file, Path(d.domain_file).parent / "problems" / "agentboard" / f"{problem}.pddl")


def named(world: World) -> dict[tuple, set[tuple]]:
    task = world.task
    return {task.atoms[a]: {task.atoms[b] for b in set_bits(mask)} for a, mask in world.goal_orders.before.items()}


def test_a_tower_is_built_from_the_bottom() -> None:
    """problem10's goal is one tower, b4 b1 b7 b3 b2 b5 b6 from the top: each block's place comes after the
    places of the blocks under it, and nothing else is ordered. At the start b2 is on b5 already, but b5 is
    not on b6, so b3 on b2 is not offered either: only b5 on b6 is."""
    world = agentboard("blocksworld", "problem10")
    tower = ["b4", "b1", "b7", "b3", "b2", "b5", "b6"]
    on = [("on", pair) for pair in pairwise(tower)]
    assert named(world) == {upper: set(on[i + 1:]) for i, upper in enumerate(on[:-1])}
    task = world.task
    assert ("on", ("b2", "b5")) in {task.atoms[i] for i in set_bits(task.init)}
    ready = world.goal_orders.ready(task.goal_pos & ~task.init)
    assert {task.atoms[i] for i in set_bits(ready)} == {("on", ("b5", "b6"))}


@pytest.mark.parametrize("domain", ["gripper", "barman", "tyreworld"])
def test_goals_any_order_reaches_have_none(domain: str) -> None:
    world = agentboard(domain, PROBLEM1[domain])
    assert named(world) == {}
    open_goal = world.task.goal_pos & ~world.initial_state
    assert world.goal_orders.ready(open_goal) == open_goal


def test_the_mutexes_are_the_translators_invariants() -> None:
    """In Blocksworld a block held, clear, or under another are one fact of it at a time."""
    world = agentboard("blocksworld", "problem1")
    task = world.task
    partners = {task.atoms[i] for i in set_bits(mutex_masks(task)[task.atom_index[("holding", ("b2",))]])}
    assert {("clear", ("b2",)), ("on", ("b3", "b2")), ("on", ("b2", "b1")), ("on-table", ("b2",))} <= partners
    assert ("holding", ("b3",)) in partners  # one hand
    assert ("clear", ("b3",)) not in partners


def first_conditions(world: World, state: int, plan: tuple[int, ...]) -> int:
    """The goal conditions the plan's first step that makes any true makes true."""
    task = world.task
    for action in plan:
        after = task.apply(state, action)
        made = task.goal_pos & after & ~state
        if made:
            return made
        state = after
    return 0


def test_no_optimal_plan_the_search_finds_makes_an_ordered_condition_true_first() -> None:
    """The orders leave out only conditions made true too early: from states a seeded random walk reaches,
    the first condition the breadth-first search's optimal plan makes true is always one still offered
    (Blocksworld, where the orders do leave some out)."""
    rng = random.Random(7)
    left = open_ = 0
    for problem in ("problem2", "problem4", "problem6", "problem8", "problem9"):
        world = agentboard("blocksworld", problem)
        task = world.task
        state = world.initial_state
        for _ in range(12):
            search = breadth_first_search(replace(task, init=state), 200_000)
            assert search.status == "solvable"
            made = first_conditions(world, state, tuple(search.plan))
            open_goal = task.goal_pos & ~state
            ready = world.goal_orders.ready(open_goal)
            assert made & ~ready == 0, (problem, state)
            left += (open_goal & ~ready).bit_count()
            open_ += open_goal.bit_count()
            valid = task.applicable(state)
            state = task.apply(state, rng.choice(valid))
    assert 0 < left < open_


@pytest.mark.parametrize(("pre", "init", "ordered"), [
    ("(dark)", "(dark)", True),  # working needs the lamp dark: lit first is undone again
    ("(not (lit))", "(dark)", True),  # the same through a negative precondition
    ("(or (dark) (spare))", "(dark) (spare)", False),  # another way to work, lamp lit or not
    ("(or (dark) (spare))", "(dark)", True),  # the other way is never open
])
def test_an_order_needs_every_achiever_to_undo_the_other(tmp_path: Path, pre: str, init: str, ordered: bool) -> None:
    (tmp_path / "domain.pddl").write_text(LAMP.replace("PRE", pre))
    (tmp_path / "problem.pddl").write_text(
        f"(define (problem p) (:domain lamp) (:init {init}) (:goal (and (lit) (done))))")
    world = World.load(tmp_path / "domain.pddl", tmp_path / "problem.pddl")
    task = world.task
    lit, done = task.atom_index[("lit", ())], task.atom_index[("done", ())]
    assert goal_orders(task).before == ({lit: 1 << done} if ordered else {})
    assert world.goal_orders.ready(1 << lit | 1 << done) == (1 << done if ordered else 1 << lit | 1 << done)
