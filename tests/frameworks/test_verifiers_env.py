"""The verifiers environment (`frameworks.verifiers_env`), loaded by name as verifiers loads it.

- `vf-eval pddlworlds` (verifiers' own command, a process of its own) plays two Blocksworld problems
  against a scripted OpenAI-compatible server on 127.0.0.1, and `pddlworlds eval` plays STANDARD on the
  same scripts: each episode's rubric (success, progress, steps, efficiency, executability, the reward)
  is what our evaluation computes for the episode `pddlworlds eval` played. One episode is solved with
  detours (a listing, an invalid action, prose around the action), the other runs out of its budget.
- Loaded by the package's name, a row per problem whose prompt is the chat's first messages, replies cut
  before an observation of their own, the reward weight on the option's reward; bad options are refused in
  one line; the registry names the module. (Every world's opening chat: `test_expert_data.py`, heavy.)
- (embedded) `vf-eval` against `pddlworlds serve`: the model's replies, parsed and replayed through
  Gymnasium, score what the rubric says.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from pddlworlds.frameworks.chat import action_of, first_message, system_message
from pddlworlds.frameworks.episodes import EpisodeOptions, make_env, reset_kwargs
from pddlworlds.frameworks.expert_data import expert_rows
from pddlworlds.records import EpisodeRecord, StepRecord
from pddlworlds.scoring.metrics import episode_metrics, executability
from pddlworlds.testing.fake_openai import FakeOpenAIServer
from pddlworlds.testing.servers import free_port, pddlworlds_command, source_env, started

pytest.importorskip("verifiers", reason="the verifiers environment needs the verifiers extra (scripts/setup.sh installs it)")

VF_EVAL = str(Path(sys.executable).with_name("vf-eval"))
DOMAIN, PROBLEMS, MAX_STEPS = "blocksworld", ("problem1", "problem2"), 12


@pytest.fixture
def own_signals():
    """verifiers' environments install SIGINT and SIGTERM handlers when built; the test process keeps its own."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for number, handler in saved.items():
        signal.signal(number, handler)


def goal_line(problem: str) -> str:
    env = make_env(EpisodeOptions(domain=DOMAIN, problem=problem))
    observation, info = env.reset(**reset_kwargs(EpisodeOptions(domain=DOMAIN, problem=problem)))
    env.close()
    return first_message(observation, info).splitlines()[1]  # "Goal: ..."


def scripts() -> dict[str, list[str]]:
    """Goal line -> the replies for that problem's episode, in order."""
    plan = [row["action"] for row in expert_rows(EpisodeOptions(domain=DOMAIN, problem=PROBLEMS[0]))]
    solved = [f"Action: {plan[0]}", "check valid actions", "Let me think.\n**Action:** pick up b9",
              f"I put it down now.\nAction: {plan[1]}", *[f"Action: {a}" for a in plan[2:]]]
    stuck = [f"Action: {plan[0]}", "Action: look around", *["Action: fly away"] * (MAX_STEPS - 2)]
    return {goal_line(PROBLEMS[0]): solved, goal_line(PROBLEMS[1]): stuck}


def scripted_server() -> FakeOpenAIServer:
    """Replies by problem (found by its goal line, which both prompts hold) and by how many that problem had:
    the same episode whatever the order of requests."""
    by_goal, given, lock = scripts(), Counter(), threading.Lock()

    def respond(messages: list[dict]) -> str:
        text = "\n".join(m["content"] for m in messages if m["role"] == "user")
        goal = next(g for g in by_goal if g + "\n" in text)
        with lock:
            given[goal] += 1
            return by_goal[goal][given[goal] - 1]

    return FakeOpenAIServer(respond)


def run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=cwd, env=source_env(**env), capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return done


def vf_results(folder: Path) -> list[dict]:
    [results] = folder.glob("outputs/evals/*/*/results.jsonl")
    return [json.loads(line) for line in results.read_text().splitlines()]


def rubric_of(record: EpisodeRecord, max_steps: int) -> dict[str, float]:
    """The rubric's numbers, from our scoring of the record."""
    ours = episode_metrics(record, max_steps)
    ratio = ours["steps_over_optimal"]
    return {"success": 1.0 if ours["success"] else 0.0, "progress": ours["progress"], "steps": ours["steps"],
            "efficiency": 1.0 / ratio if ratio else 0.0, "executability": executability(record) or 0.0}


def test_vf_eval_scores_scripted_episodes_as_pddlworlds_eval_does(tmp_path: Path) -> None:
    from pddlworlds.cli import main

    args = {"domain": DOMAIN, "problems": ",".join(PROBLEMS), "max_steps": MAX_STEPS}
    with scripted_server() as srv:
        run([VF_EVAL, "pddlworlds", "-a", json.dumps(args), "-m", "fake-model", "-b", srv.base_url,
             "-k", "FAKE_KEY", "-n", str(len(PROBLEMS)), "-r", "1", "-s"], tmp_path, FAKE_KEY="unused")
    with scripted_server() as srv:
        assert main(["eval", "--agents", "standard", "--domains", DOMAIN, "--problems", ",".join(PROBLEMS),
                     "--max-steps", str(MAX_STEPS), "--workers", "1", "--llm", "openai:fake-model", "--base-url",
                     srv.base_url, "--api-key", "unused", "--out", str(tmp_path / "run"), "--no-progress",
                     "--no-report"]) == 0
    ours = {}
    for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines():
        record = EpisodeRecord.from_stored(json.loads(line))
        ours[record.problem] = record
    played = {json.loads(row["info"])["problem"] if isinstance(row["info"], str) else row["info"]["problem"]: row
              for row in vf_results(tmp_path)}
    assert sorted(played) == sorted(ours) == sorted(PROBLEMS)
    for problem, row in played.items():
        expected = rubric_of(ours[problem], MAX_STEPS)
        assert {k: row["metrics"][k] for k in expected} == expected, problem
        assert row["reward"] == expected["progress"]
        replies = [m["content"] for m in row["completion"] if m["role"] == "assistant"]
        assert [action_of(r) for r in replies] == [s.action for s in ours[problem].trajectory]
    solved, stuck = rubric_of(ours[PROBLEMS[0]], MAX_STEPS), rubric_of(ours[PROBLEMS[1]], MAX_STEPS)
    assert solved["success"] == 1.0 and 0.0 < solved["efficiency"] < 1.0 and solved["executability"] < 1.0
    assert stuck["success"] == 0.0 and stuck["steps"] == MAX_STEPS and stuck["efficiency"] == 0.0


def test_load_environment_by_the_package_name_gives_a_row_per_problem(own_signals) -> None:
    import pddlworlds
    from pddlworlds.frameworks import adapter
    from pddlworlds.frameworks.verifiers_env import PDDLWorldsVerifiersEnv, load_environment, opening_messages

    env = pddlworlds.load_environment(domain="gripper", split="generated", limit=2, max_steps=7, reward="success")
    assert isinstance(env, PDDLWorldsVerifiersEnv) and adapter("verifiers") is load_environment
    rows = env.get_eval_dataset()
    assert len(rows) == 2 and rows.to_list() == env.get_dataset().to_list()
    assert env.sampling_args["stop"] == ["\nObservation:"]  # a reply ends before an observation of its own
    for row in rows:
        options = EpisodeOptions(**json.loads(row["info"]))
        assert (options.domain, options.split, options.max_steps, options.reward) == ("gripper", "generated", 7, "success")
        assert row["prompt"] == opening_messages(options)
    gym_env = make_env(options)
    observation, info = gym_env.reset(**reset_kwargs(options))
    assert row["prompt"] == [{"role": "system", "content": system_message(gym_env)},
                             {"role": "user", "content": first_message(observation, info)}]
    gym_env.close()
    weights = dict(zip(env.rubric._get_reward_func_names(), env.rubric._get_reward_weights(), strict=True))
    assert weights == {"success": 1.0, "progress": 0.0, "steps": 0.0, "efficiency": 0.0, "executability": 0.0,
                       "num_turns": 0.0}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"domain": "chess"}, "unknown domain 'chess'; "),
        ({"problems": "problem1,prob99"}, "unknown problem 'prob99' in blocksworld/agentboard; problems: problem1"),
        ({"limit": 0}, "limit must be a whole number of at least 1, not 0"),
        ({"reward": "dense"}, "reward must be one of progress, success, not 'dense'"),
        ({"split": "../x"}, "split must be the name of one of the domain's splits, not a path"),
    ],
)
def test_bad_options_are_refused_in_one_line(args: dict, message: str) -> None:
    from pddlworlds.frameworks.verifiers_env import load_environment

    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        load_environment(**args)


@pytest.mark.embedded
@pytest.mark.slow
@pytest.mark.xdist_group("model-processes")  # see pyproject.toml
def test_vf_eval_plays_against_pddlworlds_serve(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="the embedded model needs llama-cpp-python")
    pytest.importorskip("fastapi", reason="pddlworlds serve needs the server extra")
    steps = 2
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    with started(pddlworlds_command("serve", "--port", str(port), "--name", "gemma", "--threads", "1"),
                 f"{base_url}/models"):
        run([VF_EVAL, "pddlworlds", "-a", json.dumps({"domain": "gripper", "problems": "prob01", "max_steps": steps}),
             "-m", "gemma", "-b", base_url, "-k", "SERVE_KEY", "-n", "1", "-r", "1", "-t", "24", "-s"], tmp_path,
            SERVE_KEY="unused")
    [row] = vf_results(tmp_path)
    replies = [m["content"] for m in row["completion"] if m["role"] == "assistant"]
    assert len(replies) == steps and row["metrics"]["num_turns"] == steps
    options = EpisodeOptions(domain="gripper", problem="prob01", max_steps=steps)
    env = make_env(options)
    first = env.reset(**reset_kwargs(options))
    trajectory, info = [], first[1]
    for reply in replies:  # the model's replies, read as the environment read them, replayed through Gymnasium
        action = action_of(reply)
        observation, _, _, _, info = env.step(action)
        trajectory.append(StepRecord.of_step(action, observation, info))
    env.close()
    record = EpisodeRecord.of_episode("replay", None, first, info, trajectory, 0.0)
    expected = rubric_of(record, steps)
    assert {k: row["metrics"][k] for k in expected} == expected
    assert row["reward"] == expected["progress"]
