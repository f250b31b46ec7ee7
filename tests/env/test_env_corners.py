"""The environment on the corners: stepped before its first reset it says so; an invalid action never raises,
whatever its precondition; `info` carries the cheapest plan's cost beside the shortest plan's length; an
episode's record keeps both."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import pddlworlds
from pddlworlds.agents.scripted import ExpertAgent
from pddlworlds.artefacts import plans
from pddlworlds.registration import make_domain_env

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pddl"


def test_a_step_before_the_first_reset_says_to_reset() -> None:
    env = pddlworlds.make_env(FIXTURES / "roads" / "domain.pddl", FIXTURES / "roads" / "problem.pddl")
    with pytest.raises(gym.error.ResetNeeded, match=r"before reset\(\)"):
        env.step("drive a b")
    env.reset()
    assert env.step("drive a b")[4]["action_valid"]


def test_an_invalid_action_over_a_huge_quantifier_never_raises(tmp_path: Path) -> None:
    (tmp_path / "domain.pddl").write_text("""(define (domain many) (:requirements :adl)
      (:predicates (p ?x ?y ?z) (q))
      (:action a :parameters () :precondition (forall (?x ?y ?z) (p ?x ?y ?z)) :effect (q)))""")
    objects = " ".join(f"o{i}" for i in range(60))
    (tmp_path / "problem.pddl").write_text(f"(define (problem m) (:domain many) (:objects {objects}) (:init) (:goal (q)))")
    env = pddlworlds.make_env(tmp_path / "domain.pddl", tmp_path / "problem.pddl")
    env.reset()
    observation, reward, terminated, truncated, info = env.step("a")
    assert not info["action_valid"] and info["error"] == "precondition" and observation.startswith("Cannot a: ")
    assert reward == 0.0 and not terminated and not truncated


def test_info_has_the_cheapest_cost_beside_the_shortest_length(monkeypatch: pytest.MonkeyPatch) -> None:
    env = make_domain_env("blocksworld", None, max_episode_steps=30)
    _, info = env.reset(options={"problem": "problem1"})
    assert info["optimal_length"] == 8 and info["optimal_cost"] is None  # unit costs: the length is the cost
    rows = [row for row in plans.read_index() if (row["domain"], row["split"]) == ("blocksworld", "agentboard")]
    monkeypatch.setattr(plans, "read_index", lambda path=None: [{**row, "cost": "11"} for row in rows])
    env = make_domain_env("blocksworld", None, max_episode_steps=30)
    _, info = env.reset(options={"problem": "problem1"})
    assert (info["optimal_length"], info["optimal_cost"]) == (8, 11)


def test_a_costed_episode_records_the_cheapest_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [row for row in plans.read_index() if (row["domain"], row["split"]) == ("blocksworld", "agentboard")]
    monkeypatch.setattr(plans, "read_index", lambda path=None: [{**row, "cost": "11"} for row in rows])
    env = make_domain_env("blocksworld", None, max_episode_steps=30)
    monkeypatch.setattr(type(env.unwrapped), "action_costs", property(lambda self: True))
    record = ExpertAgent().run(env, seed=0, options={"problem": "problem1"})
    assert record.success and (record.optimal_length, record.optimal_cost, record.cost) == (8, 11, 8)
