"""AgentBoard's STANDARD prompt from a prompt file of its layout, its reply clean-up, and its pooled scores."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pddlworlds.agents.agentboard import (
    AgentBoardStandardAgent,
    clean_reply,
    load_prompt_file,
    standard_prompt,
)
from pddlworlds.llm import OpenAICompatibleLLM
from pddlworlds.records import EpisodeRecord, StepRecord
from pddlworlds.scoring.agentboard_scores import (
    agentboard_scores,
    grounding_accuracy,
    pooled_progress_rate,
)
from pddlworlds.testing.fake_openai import FakeOpenAIServer

PROMPTS = Path(__file__).parents[1] / "fixtures" / "agentboard_prompts.json"


def test_prompt_file_loads_with_its_hash_and_game_names() -> None:
    prompts = load_prompt_file(PROMPTS)
    assert prompts.sha256 == hashlib.sha256(PROMPTS.read_bytes()).hexdigest()
    assert (
        prompts.for_domain("blocksworld").system_msg == "You plan block moves."
    )  # AgentBoard's "blockworld"
    assert prompts.for_domain("barman").examples[0].startswith("Goal: shot1")  # one string: one example
    assert prompts.for_domain("tyreworld").examples == ()
    with pytest.raises(KeyError, match="no entry for domain 'hanoi'; entries: blockworld, gripper"):
        prompts.for_domain("hanoi")


def test_bad_prompt_files_say_what_is_wrong(tmp_path) -> None:
    bad = tmp_path / "p.json"
    bad.write_text(json.dumps({"gripper": {"system_msg": "s", "instruction": "i"}}))
    with pytest.raises(ValueError, match=r"p.json: entry 'gripper' lacks examples"):
        load_prompt_file(bad)
    bad.write_text("{not json")
    with pytest.raises(ValueError, match=r"p.json: not JSON"):
        load_prompt_file(bad)
    with pytest.raises(ValueError, match=r"missing.json: cannot read"):
        load_prompt_file(tmp_path / "missing.json")


def test_standard_prompt_is_assembled_in_agentboard_order() -> None:
    prompt = load_prompt_file(PROMPTS).for_domain("gripper")
    history = [
        ("Observation", "Robby is at rooma. "),
        ("Action", "check"),
        ("Observation", "Valid actions are: x"),
    ]
    text = standard_prompt(
        prompt, "The goal is to satisfy the following conditions: ball1 is at roomb. ", history
    )
    assert text == (
        prompt.instruction
        + "\nHere are examples:\n" + prompt.examples[0] + "\n"
        + "You should perform actions to accomplish the goal: The goal is to satisfy the following conditions: "
        "ball1 is at roomb. \n"
        + "You should use the following commands for help when your action cannot be understood: check valid actions\n"
        + "Observation: Robby is at rooma. \nAction: check\nObservation: Valid actions are: x"
        + "\nAction: "
    )  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("pickup b1", "pickup b1"),
        ("Action: stack b1 b2", "stack b1 b2"),
        ("  'unstack b1 b2'/ ", "unstack b1 b2"),
        ("My next action is to pick up b1", "pick up b1"),
        ("Think first.\nAction: putdown b1\nmore", "putdown b1"),
        ("The next action:\n\nclose boot", "close boot"),
    ],
)
def test_reply_clean_up(reply, action) -> None:
    assert clean_reply(reply) == action


def test_agent_plays_against_the_stand_in_server_with_agentboard_settings(make_env) -> None:
    replies = ["Action: check valid actions", "unstack b2 from b3", "fly", "putdown b2"]
    with FakeOpenAIServer(replies) as srv:
        llm = OpenAICompatibleLLM(
            "fake-model", base_url=srv.base_url, api_key="k", timeout=5.0
        )
        agent = AgentBoardStandardAgent(llm, PROMPTS)
        env = make_env("blocksworld", profile="agentboard", max_episode_steps=4)
        record = agent.run(env, options={"problem": "problem1"})
        bodies = srv.chat_requests
    first, last = bodies[0], bodies[-1]
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert first["messages"][0]["content"] == "You plan block moves."
    assert (first["stop"], first["max_tokens"], first["temperature"]) == (["\n"], 100, 0.0)
    user = first["messages"][1]["content"]
    assert user.endswith("\nObservation: " + record.initial_observation + "\nAction: ")
    assert "You should perform actions to accomplish the goal: " + record.goal + "\n" in user
    assert last["messages"][1]["content"].endswith(
        "Action: fly\nObservation: The action is not valid and therefore takes no effect. "
        "Please check valid actions.\nAction: "
    )
    assert [s.action for s in record.trajectory] == [
        "check valid actions",
        "unstack b2 from b3",
        "fly",
        "putdown b2",
    ]
    assert [s.valid for s in record.trajectory] == [True, True, False, True]
    assert record.flags["prompt_sha256"] == hashlib.sha256(PROMPTS.read_bytes()).hexdigest()
    assert grounding_accuracy(record) == 0.75


def _record(domain: str, progress: float, valid: list[bool]) -> EpisodeRecord:
    steps = [
        StepRecord(i + 1, "a", "o", v, "action" if v else "invalid", progress) for i, v in enumerate(valid)
    ]
    return EpisodeRecord("standard", domain, "agentboard", "p", 0, progress == 1.0, progress, len(steps), None,
                         0.0, "g", "o", trajectory=steps)  # fmt: skip


def test_scores_pool_every_problem_of_the_split() -> None:
    # 1 Blocksworld problem and 3 Gripper problems: pooled over the 4, not averaged per domain.
    records = [
        _record("blocksworld", 1.0, [True, True]),
        _record("gripper", 0.0, [False, False]),
        _record("gripper", 0.5, [True, False, True, False]),
        _record("gripper", 0.25, [True]),
    ]
    scores = agentboard_scores(records)
    assert scores.episodes == 4
    assert scores.progress_rate == pytest.approx((1.0 + 0.0 + 0.5 + 0.25) / 4)  # per domain would be 0.625
    assert scores.success_rate == 0.25
    assert scores.grounding_accuracy == pytest.approx((1.0 + 0.0 + 0.5 + 1.0) / 4)
    with pytest.raises(ValueError, match="no episodes"):
        pooled_progress_rate([])


def test_eval_with_the_agentboard_profile_and_a_prompt_file_end_to_end(tmp_path: Path) -> None:
    """`pddlworlds eval --profile agentboard --prompt-file ... --llm openai:...` against the stand-in server:
    STANDARD speaks AgentBoard's prompt, the configuration keeps the profile and the file's sha256, and the
    report shows the profile and AgentBoard's pooled scores beside ours."""
    from pddlworlds.cli import main

    replies = ["check valid actions", "unstack b2 from b3", "fly", "putdown b2"] * 2
    out = tmp_path / "run"
    with FakeOpenAIServer(replies) as srv:
        code = main([
            "eval", "--agents", "standard", "--domains", "blocksworld", "--problems", "problem1",
            "--split", "agentboard", "--max-steps", "4", "--profile", "agentboard",
            "--prompt-file", str(PROMPTS), "--llm", "openai:fake-model", "--base-url", srv.base_url,
            "--api-key", "k", "--out", str(out), "--no-progress",
        ])
        bodies = srv.chat_requests
    assert code == 0
    assert bodies[0]["messages"][0]["content"] == "You plan block moves."
    assert (bodies[0]["stop"], bodies[0]["max_tokens"]) == (["\n"], 100)
    config = json.loads((out / "config.json").read_text())
    assert config["profile"] == "agentboard"
    assert config["prompt_file"]["sha256"] == hashlib.sha256(PROMPTS.read_bytes()).hexdigest()
    line = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    assert [s["valid"] for s in line["trajectory"]] == [True, True, False, True]
    assert line["trajectory"][2]["observation"] == (
        "The action is not valid and therefore takes no effect. Please check valid actions."
    )
    report = (out / "report.md").read_text()
    assert "environment profile: **agentboard**" in report
    assert "## AgentBoard's scores (profile `agentboard`)" in report
    # one episode: grounding accuracy 3 valid of 4 steps = 75.0; progress as the episode's own
    row = next(r for r in report.splitlines() if r.startswith("| STANDARD |") and "75.0" in r)
    assert f"{100 * line['progress']:.1f}" in row
