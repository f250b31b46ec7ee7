"""The catalogue's ladders: bands and budgets, cards, the generators' registry and draws, and the builder."""

from __future__ import annotations

import math

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401 -- registers the ids
from pddlworlds.generators.ladder_build import build_ladder
from pddlworlds.generators.ladders import (
    HEADER_MARK,
    LadderGenerator,
    draw_candidate,
    ladder_generators,
    logistics,
)
from pddlworlds.registration import domain_env_kwargs
from pddlworlds.worlds.cards import read_card
from pddlworlds.worlds.catalogue import get_domain
from pddlworlds.worlds.ladder import (
    BANDS,
    HELDOUT_SPLIT,
    LADDER_SPLIT,
    band_of,
    band_of_problem,
    ladder_problem_name,
    step_budget,
)
from pddlworlds.worlds.pddl import PDDLError


def test_bands_names_and_budgets():
    assert [(b.name, b.low, b.high, b.step_budget) for b in BANDS] == [
        ("easy", 1, 10, 30), ("medium", 11, 20, 50), ("hard", 21, 40, 80)]
    assert band_of(10).name == "easy" and band_of(11).name == "medium" and band_of(40).name == "hard"
    assert band_of(0) is None and band_of(41) is None
    assert ladder_problem_name(LADDER_SPLIT, "medium", 4) == "ladder-medium-04"
    assert ladder_problem_name(HELDOUT_SPLIT, "hard", 2) == "heldout-hard-02"
    assert band_of_problem("heldout-hard-02").name == "hard" and band_of_problem("easy-01") is None
    assert step_budget(LADDER_SPLIT, "ladder-hard-01") == 80
    assert step_budget("agentboard", "p01") == 30 and step_budget("generated", "hard-01") == 30
    # a band by cost can hold long plans (Sokoban's walks cost nothing): never less than twice the shortest
    assert step_budget(LADDER_SPLIT, "ladder-easy-02", 35) == 70 and step_budget(LADDER_SPLIT, "ladder-easy-02", 9) == 30
    env = gym.make("pddlworlds/Sokoban-v0")
    _, info = env.reset(options={"problem": "ladder-easy-02"})
    easy_top, easy_budget = 10, 30
    assert info["optimal_cost"] <= easy_top < easy_budget < 2 * info["optimal_length"] == info["step_budget"]
    with pytest.raises(ValueError, match="not a ladder split"):
        ladder_problem_name("agentboard", "easy", 1)


def test_draws_are_deterministic_and_headed():
    generator = ladder_generators()["logistics"]
    first = draw_candidate(generator, "medium", 3, 0)
    assert first == draw_candidate(generator, "medium", 3, 0)
    assert first.text != draw_candidate(generator, "medium", 3, 1).text
    assert first.text.startswith(HEADER_MARK) and "; seed=0 world=logistics band=medium candidate=3" in first.text
    for name, (low, high) in generator.bands["medium"].items():
        assert low <= first.parameters[name] <= high
    with pytest.raises(ValueError, match="no band 'epic'"):
        draw_candidate(generator, "epic", 1, 0)
    with pytest.raises(ValueError, match="unknown ladder generator 'atlantis'"):
        ladder_generators()["atlantis"]


def test_builder_keeps_proven_problems_of_each_band():
    """A dry run with one public problem a band: each kept problem is proven and in its band; a band its
    ranges cannot reach is refused naming the band and what was refused."""
    small = LadderGenerator("logistics", {
        "easy": {"cities": (2, 2), "places": (1, 1), "airplanes": (1, 1), "packages": (1, 1), "goals": (1, 1)},
        "medium": {"cities": (2, 2), "places": (2, 2), "airplanes": (1, 1), "packages": (3, 3), "goals": (2, 2)},
        "hard": {"cities": (3, 3), "places": (2, 2), "airplanes": (1, 1), "packages": (4, 4), "goals": (4, 4)},
    }, logistics.build)
    report = build_ladder("logistics", per_band=1, heldout_per_band=0, generator=small, write=False, jobs=1,
                          nice=0, log=lambda _: None)
    assert [k.name for k in report.kept] == ["ladder-easy-01", "ladder-medium-01", "ladder-hard-01"]
    for kept in report.kept:
        assert band_of_problem(kept.name).holds(kept.proof.optimum)
        assert kept.proof.shortest.optimal and kept.proof.length == kept.proof.shortest.length
    tiny = LadderGenerator("logistics", {band: small.bands["easy"] for band in ("easy", "medium", "hard")},
                           logistics.build)
    with pytest.raises(RuntimeError, match="band medium has 0 of 1 problems after 3 candidates"):
        build_ladder("logistics", per_band=1, heldout_per_band=0, generator=tiny, write=False, jobs=1,
                     max_candidates=3, nice=0, log=lambda _: None)


def test_card_fields_are_checked(tmp_path):
    card = read_card(get_domain("logistics").folder / "card.toml")
    assert card.origin == "logistics00" and card.kinds == ("transport",) and card.differences == ""
    bad = tmp_path / "card.toml"
    bad.write_text('title = "X"\norigin = "x"\n')
    with pytest.raises(PDDLError, match="missing attribution, competition"):
        read_card(bad)
    text = (get_domain("logistics").folder / "card.toml").read_text()
    bad.write_text(text.replace('kinds = ["transport"]', 'kinds = ["sightseeing"]'))
    with pytest.raises(PDDLError, match="unknown kinds or features"):
        read_card(bad)


def test_ladder_problems_play_with_their_band_budget():
    env = gym.make("pddlworlds/Logistics-v0")
    _, info = env.reset(options={"problem": "ladder-medium-01"})
    assert info["split"] == LADDER_SPLIT and info["step_budget"] == 50
    truncated = [env.step("look around")[3] for _ in range(50)]
    assert truncated == [False] * 49 + [True]
    env = gym.make("pddlworlds/Logistics-v0", step_budget=3)
    env.reset(options={"problem": "ladder-hard-01"})
    assert [env.step("look around")[3] for _ in range(3)] == [False, False, True]
    env = gym.make("pddlworlds/Logistics-v0", step_budget=math.inf)
    _, info = env.reset(options={"problem": "ladder-easy-01"})
    assert info["step_budget"] is None and not any(env.step("look around")[3] for _ in range(40))
    # the public four keep 30 steps on AgentBoard's problems, with no TimeLimit wrapper
    env = gym.make("pddlworlds/Gripper-v0")
    _, info = env.reset(options={"problem": "prob01"})
    assert info["step_budget"] == 30 and env.spec.max_episode_steps is None
    with pytest.raises(ValueError, match="step_budget must be a whole number"):
        gym.make("pddlworlds/Gripper-v0", step_budget=0)
    assert domain_env_kwargs(LADDER_SPLIT, 7) == {"split": LADDER_SPLIT, "step_budget": 7}
