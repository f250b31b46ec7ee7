"""Registration and `make_env` over STRIPS PDDL of your own (no text.toml: the bare PDDL phrasing)."""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import pddlworlds
from pddlworlds.registration import env_id, register_envs

DOMAIN = """\
(define (domain lights)
  (:requirements :strips :typing)
  (:types room switch)
  (:predicates (dark ?r - room) (lit ?r - room) (wired ?s - switch ?r - room) (at ?r - room))
  (:action flip
    :parameters (?s - switch ?r - room)
    :precondition (and (wired ?s ?r) (dark ?r))
    :effect (and (lit ?r) (not (dark ?r))))
  (:action walk
    :parameters (?from ?to - room)
    :precondition (at ?from)
    :effect (and (at ?to) (not (at ?from)))))
"""

PROBLEM = """\
(define (problem lights2) (:domain lights)
  (:objects hall kitchen - room s1 s2 - switch)
  (:init (dark hall) (dark kitchen) (wired s1 hall) (wired s2 kitchen) (at hall))
  (:goal (and (lit hall) (lit kitchen))))
"""


@pytest.fixture
def custom(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "lights"
    folder.mkdir()
    (folder / "domain.pddl").write_text(DOMAIN)
    (folder / "p1.pddl").write_text(PROBLEM)
    (folder / "p2.pddl").write_text(
        PROBLEM.replace("(dark kitchen)", "(lit kitchen)").replace("lights2", "l1")
    )
    return folder / "domain.pddl", folder / "p1.pddl"


def test_ids_are_registered() -> None:
    ids = register_envs()
    assert ids == register_envs()  # idempotent
    assert env_id("blocksworld") == "pddlworlds/Blocksworld-v0"
    for id_ in ("Blocksworld", "Gripper", "Tyreworld", "Barman"):
        assert f"pddlworlds/{id_}-v0" in gym.registry


def test_make_env_with_bare_pddl_phrasing(custom) -> None:
    domain, problem = custom
    env = pddlworlds.make_env(domain, problem)
    try:
        assert env.spec is None or env.spec.max_episode_steps in (None, 30)
        obs, info = env.reset(seed=0)
        assert (
            obs == "hall is dark. kitchen is dark. s1 is wired hall. s2 is wired kitchen. at hall is true."
        )
        assert (info["domain"], info["split"], info["problem"]) == ("lights", "custom", "p1")
        assert (
            info["goal"]
            == "The goal is to satisfy the following conditions: hall is lit, kitchen is lit."
        )
        obs, _, _, _, info = env.step("check valid actions")
        assert info["valid_actions"] == [
            "flip s1 hall", "flip s2 kitchen", "walk hall hall", "walk hall kitchen",
        ]  # fmt: skip
        obs, _, _, _, info = env.step("flip s2 hall")
        assert obs == "Cannot flip s2 hall: s2 is not wired hall."
        obs, reward, terminated, _, info = env.step("(flip s1 hall)")
        assert info["action_valid"] and reward == 0.5 and not terminated
        assert (
            obs == "kitchen is dark. hall is lit. s1 is wired hall. s2 is wired kitchen. at hall is true."
        )
        obs, reward, terminated, _, info = env.step("Flip s2 kitchen.")
        assert terminated and obs.endswith("The goal is reached.") and info["progress"] == 1.0
        obs, *_ = env.step("go north")
        assert obs.startswith("Unknown action 'go north'. Actions are: flip <s> <r>, walk <from> <to>, ")
    finally:
        env.close()


def test_make_env_options(custom) -> None:
    domain, problem = custom
    several = pddlworlds.make_env(domain, [problem, problem.with_name("p2.pddl")], max_episode_steps=3)
    assert several.unwrapped.problem_names == ["p1", "p2"]
    assert {several.reset(seed=s)[1]["problem"] for s in range(10)} == {"p1", "p2"}
    assert [several.step("nothing")[3] for _ in range(3)] == [False, False, True]
    bare = pddlworlds.make_env(domain, problem, max_episode_steps=None, observation_mode="changes")
    assert not isinstance(bare, gym.wrappers.TimeLimit)
    bare.reset()
    assert bare.step("flip s1 hall")[0] == "hall is lit. hall is not dark."
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*alternative render modes")  # no spec outside gym.make
        check_env(bare.unwrapped)


def test_make_env_with_a_text_file(custom, tmp_path: Path) -> None:
    domain, problem = custom
    text = tmp_path / "words.toml"
    text.write_text(
        '[predicates]\nlit = ["{r} is lit", "{r} is not lit"]\n'
        '[actions]\nflip = ["flip {s} for {r}", "press {s} in {r}"]\n'
    )
    env = pddlworlds.make_env(domain, problem, text_file=text)
    env.reset()
    assert env.unwrapped.valid_actions()[:2] == ["flip s1 for hall", "flip s2 for kitchen"]
    obs, *_ = env.step("press s1 in hall")
    assert "hall is lit." in obs


def test_relative_paths_name_the_domain_folder(custom, monkeypatch) -> None:
    domain, _ = custom
    monkeypatch.chdir(domain.parent)
    env = pddlworlds.make_env("domain.pddl", "p1.pddl")
    assert env.reset()[1]["domain"] == "lights"
