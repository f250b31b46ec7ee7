"""The same problem, seed and actions played through Gymnasium, the OpenEnv server (`pddlworlds env-server`
as a process, driven by the OpenEnv client) and the Inspect task (Inspect's own agent calling our tools)
give the same observations, rewards, ends and info, step for step, on every shipped domain.

Each domain's actions are its stored optimal plan with a listing, an invalid text and a `look around`
mixed in; each domain also varies one option across all three (the success reward, AgentBoard's profile,
a step budget that truncates the episode).
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401  (registers the ids)
from pddlworlds.artefacts.plans import plan_file
from pddlworlds.registration import env_id

pytest.importorskip("openenv.core", reason="the OpenEnv adapter needs the openenv extra (scripts/setup.sh installs it)")
pytest.importorskip("inspect_ai", reason="the Inspect task needs the inspect extra (scripts/setup.sh installs it)")

SEED = 7
#: domain -> (problem, the option varied in all three frameworks)
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "blocksworld": ("problem1", {}),
    "gripper": ("prob01", {"reward": "success"}),
    "tyreworld": ("p05", {"profile": "agentboard"}),
    "barman": ("p15", {"max_steps": 4}),
}
CHECK = "check valid actions"


def actions_for(domain: str, problem: str) -> list[str]:
    plan = [line.strip() for line in plan_file(domain, problem).read_text().splitlines() if line.startswith("(")]
    return [plan[0], CHECK, "fly to the moon", "look around", *plan[1:]]


def turn(action: str | None, observation: str, reward: float, terminated: bool, truncated: bool, info: Any) -> dict:
    """One step as the Inspect task's log keeps it, through JSON as the log does."""
    return json.loads(json.dumps({"action": action, "observation": observation, "reward": float(reward),
                                  "terminated": bool(terminated), "truncated": bool(truncated), "info": dict(info)}))


def gymnasium_turns(domain: str, problem: str, actions: list[str], options: dict[str, Any]) -> list[dict]:
    kwargs = {k: v for k, v in options.items() if k != "max_steps"}
    env = gym.make(env_id(domain), step_budget=options.get("max_steps"), **kwargs)
    observation, info = env.reset(seed=SEED, options={"problem": problem})
    turns = [turn(None, observation, 0.0, False, False, info)]
    for action in actions:
        observation, reward, terminated, truncated, info = env.step(action)
        turns.append(turn(action, observation, reward, terminated, truncated, info))
        if terminated or truncated:
            break
    env.close()
    return turns


def openenv_turns(url: str, domain: str, problem: str, actions: list[str], options: dict[str, Any]) -> list[dict]:
    from pddlworlds.frameworks.openenv_client import PDDLWorldsClient, turn_of

    def as_turn(action: str | None, result: Any) -> dict:
        t = turn_of(result.observation)
        assert result.done == (t.terminated or t.truncated)
        return turn(action, t.observation, t.reward, t.terminated, t.truncated, t.info)

    with PDDLWorldsClient(base_url=url).sync() as client:
        turns = [as_turn(None, client.reset(domain=domain, problem=problem, seed=SEED, **options))]
        for action in actions:
            result = client.step(action)
            turns.append(as_turn(action, result))
            if result.done:
                break
    return turns


def inspect_turns(tmp_path, domain: str, problem: str, actions: list[str], options: dict[str, Any]) -> list[dict]:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from pddlworlds.frameworks import inspect_task

    outputs = []
    for action in actions:
        call = ("check_valid_actions", {}) if action == CHECK else ("act", {"action": action})
        output = ModelOutput.for_tool_call("mockllm/model", *call)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no token counting offline
        outputs.append(output)
    model = get_model("mockllm/model", custom_outputs=outputs)
    task = inspect_task.pddlworlds(domain=domain, problems=problem, seed=SEED, **options)
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    sample = read_eval_log(log.location).samples[0]  # the log as written, read back
    return sample.store[inspect_task.STORE_KEY]["turns"]


def differences(expected: list[dict], got: list[dict], where: str) -> list[str]:
    out = [f"{where} step {i}: {a} != {b}" for i, (a, b) in enumerate(zip(expected, got)) if a != b]
    return out + ([f"{where}: {len(got)} turns, Gymnasium {len(expected)}"] if len(expected) != len(got) else [])


@pytest.mark.parametrize("domain", list(CASES))
def test_gymnasium_openenv_and_inspect_play_alike(domain, env_server, tmp_path) -> None:
    problem, options = CASES[domain]
    actions = actions_for(domain, problem)
    expected = gymnasium_turns(domain, problem, actions, options)
    assert expected[-1]["terminated"] or expected[-1]["truncated"]
    assert any(t["info"].get("valid_actions") for t in expected) and any(not t["info"]["action_valid"] for t in expected)
    served = openenv_turns(env_server, domain, problem, actions, options)
    inspected = inspect_turns(tmp_path, domain, problem, actions, options)
    assert differences(expected, served, "OpenEnv") == []
    assert differences(expected, inspected, "Inspect") == []
