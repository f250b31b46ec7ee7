"""The text-level transition: every listed valid action parses back to itself and steps validly."""

from __future__ import annotations

import random

from pddlworlds.worlds.action_parser import ParsedAction
from pddlworlds.worlds.text import CHARSET
from pddlworlds.worlds.world import GOAL_REACHED

WALK_STEPS = 15
ALLOWED = set(CHARSET)


def round_trip(world, state: int) -> list[int]:
    """Check every valid action of `state` through the parser and `World.step`; return their indices."""
    task = world.task
    applicable = task.applicable(state)
    texts = world.valid_actions(state)
    assert texts == [world.action_text(i) for i in applicable]
    assert len(set(texts)) == len(texts), "two actions read the same"
    for index, text in zip(applicable, texts):
        action = task.actions[index]
        assert world.parser.parse(text) == ParsedAction(action.schema, action.args), text
        outcome = world.step(state, text, "changes")
        assert outcome.valid and outcome.kind == "action" and outcome.error is None, text
        assert outcome.action == text
        assert outcome.state == task.apply(state, index)
    return applicable


def test_initial_valid_actions_round_trip(domain_problem, world_of) -> None:
    world = world_of(*domain_problem)
    assert round_trip(world, world.initial_state), "no action is valid initially"


def test_random_walk_round_trips(domain_problem, world_of) -> None:
    world = world_of(*domain_problem)
    task = world.task
    rng = random.Random("walk:" + "/".join(domain_problem))
    state = world.initial_state
    for _ in range(WALK_STEPS):
        applicable = round_trip(world, state)
        if not applicable:
            break
        index = rng.choice(applicable)
        mode = rng.choice(["full", "changes"])
        outcome = world.step(state, world.action_text(index), mode)
        after = task.apply(state, index)
        assert outcome.state == after
        expected = world.describe(after) if mode == "full" else world.describe_changes(state, after)
        if task.is_goal(after):
            expected += " " + GOAL_REACHED
        assert outcome.observation == expected
        assert set(outcome.observation) <= ALLOWED
        state = after


def test_observations_describe_the_state(world_of) -> None:
    world = world_of("blocksworld", "problem1")
    assert world.describe(world.initial_state) == (
        "The robot arm is empty. b1 is on the table. b2 is on b3. b3 is on b1. b2 is clear."
    )
    assert world.goal_text() == "The goal is to satisfy the following conditions: b3 is on b2, b2 is on b1."
    after = world.step(world.initial_state, "unstack b2 from b3", "changes")
    # what became true, then what became false, each in atom order; sentences start with a capital
    assert after.observation == (
        "b3 is clear. The robot arm is holding b2. "
        "The robot arm is not empty. b2 is not on b3. b2 is not clear."
    )
    assert world.describe_changes(after.state, after.state) == "Nothing changed."
    assert world.describe(0) == "Nothing is true."


def test_meta_actions_leave_the_state(world_of) -> None:
    world = world_of("tyreworld", "p01")
    state = world.initial_state
    check = world.step(state, "check valid actions", "changes")
    assert check.state == state and check.valid and check.kind == "check valid actions"
    assert check.valid_actions == ("open boot",)
    assert check.observation == "Valid actions are: open boot."
    look = world.step(state, "Look around.", "changes")
    assert look.state == state and look.valid and look.observation == world.observe(state, "full")


def test_a_listed_action_wins_over_the_meta_action_its_words_contain(tmp_path) -> None:
    from pddlworlds.worlds.world import World

    (tmp_path / "domain.pddl").write_text(
        "(define (domain d) (:requirements :strips) (:predicates (p ?x) (q ?x))"
        " (:action peek :parameters (?x) :precondition (p ?x) :effect (q ?x))"
        " (:action poke :parameters (?x) :precondition (p ?x) :effect (not (p ?x))))"
    )
    (tmp_path / "p.pddl").write_text(
        "(define (problem p) (:domain d) (:objects a) (:init (p a)) (:goal (q a)))"
    )
    (tmp_path / "text.toml").write_text('[actions]\npeek = ["look around {x}"]\npoke = ["poke {x}"]\n')
    world = World.load(tmp_path / "domain.pddl", tmp_path / "p.pddl")
    assert world.valid_actions(world.initial_state) == ["look around a", "poke a"]
    # an exact listed action is preferred over a meta-action, and environment and parser agree
    peek = world.step(world.initial_state, "look around a", "full")
    assert peek.kind == "action" and peek.action == "look around a" and peek.state != world.initial_state
    assert world.parser.parse("Look around a.") == world.parser.parse("look around a")
    assert world.parser.parse("look around a").schema == "peek"
    assert world.step(world.initial_state, "look around", "full").kind == "look around"
    assert world.step(world.initial_state, "please look around", "full").kind == "look around"
    poke = world.step(world.initial_state, "poke a", "full")
    assert poke.kind == "action" and poke.state != world.initial_state
    assert world.step(world.initial_state, "Poke a.", "full").state == poke.state
