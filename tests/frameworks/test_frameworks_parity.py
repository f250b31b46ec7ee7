"""The same agent on the same problems scores the same through every door, and each door reads what the
user wrote and only that.

- Unsolvable problems: the expert run by `pddlworlds eval`, by the Inspect task (Inspect's real `eval`,
  `mockllm` as the model it never calls) and replayed through the TRL environment (in process and on an
  env-server) wins the same episodes with the same progress and steps; `allow_impossible=no` turns the
  action off in the Inspect task as `--allow-impossible` being absent would on a solvable split.
- Inspect's boolean task parameters: true/false/1/0/yes/no in any case or a real bool; anything else is
  refused in one line naming the parameter.
- The TRL environment on a server sends only what its user set, so the server's defaults apply; a
  non-text or over-long action gets the same refusal in process and remotely, and takes no step.
"""

from __future__ import annotations

import json

import pytest

from pddlworlds.frameworks.trl_env import PDDLWorldsToolEnv

pytest.importorskip("openenv.core", reason="the OpenEnv adapter needs the openenv extra (scripts/setup.sh installs it)")
pytest.importorskip("inspect_ai", reason="the Inspect task needs the inspect extra (scripts/setup.sh installs it)")

DOMAIN, SPLIT = "blocksworld", "agentboard-mixed"
#: Two problems a stored proof says are unsolvable and one that is not.
PROBLEMS = ["problem1", "problem2-missing-b1", "problem5-b1-on-b3-and-b2"]
MAX_STEPS = 20


def ended(env: PDDLWorldsToolEnv) -> None:
    """Close a TRL environment's server session (TRL itself keeps them to the process's end; the shared
    test server holds 16)."""
    env._episode.close()


def inspect_scores(tmp_path, **params) -> dict[str, dict]:
    """problem -> (the score values, the logged episode record) of the Inspect task run by Inspect's `eval`."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import get_model

    from pddlworlds.frameworks import inspect_task

    task = inspect_task.pddlworlds(domain=DOMAIN, split=SPLIT, agent="expert", problems=",".join(PROBLEMS),
                                   max_steps=MAX_STEPS, **params)
    [log] = inspect_eval(task, model=get_model("mockllm/model"), log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    samples = read_eval_log(log.location).samples
    return {s.metadata["problem"]: s.scores["episode_scores"].metadata["episode"] for s in samples}


def test_unsolvable_problems_score_alike_through_eval_inspect_and_trl(cli, env_server, tmp_path) -> None:
    code, _, err = cli(["eval", "--agents", "expert", "--domains", DOMAIN, "--split", SPLIT, "--problems",
                        ",".join(PROBLEMS), "--max-steps", str(MAX_STEPS), "--workers", "1", "--out",
                        str(tmp_path / "run"), "--no-progress", "--no-report"])
    assert code == 0, err
    lines = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    ours = {line["problem"]: line for line in lines}
    assert sorted(ours) == sorted(PROBLEMS) and all(line["success"] for line in lines)  # 3/3, the claims included

    def outcome(record: dict) -> tuple:
        return (record["success"], record["progress"], record["steps"], record.get("claimed_impossible", False))

    inspected = inspect_scores(tmp_path / "inspect")
    assert {p: outcome(r) for p, r in inspected.items()} == {p: outcome(r) for p, r in ours.items()}
    assert [inspected[p]["trajectory"][0]["action"] for p in PROBLEMS] == [ours[p]["trajectory"][0]["action"] for p in PROBLEMS]

    for env in (PDDLWorldsToolEnv(max_steps=MAX_STEPS), PDDLWorldsToolEnv(base_url=env_server, max_steps=MAX_STEPS)):
        for problem, record in ours.items():
            assert "act('impossible')" in env.reset(domain=DOMAIN, split=SPLIT, problem=problem, seed=0)  # told
            for step in record["trajectory"]:  # the expert's own actions, through the TRL tools
                env.act(step["action"])
            info = env.info
            assert (info["success"], env.get_reward(), info["step"]) == (True, record["progress"], record["steps"]), problem
        ended(env)

    # the parameter is honoured as written on the command line: without the action the claims cannot win
    refused = inspect_scores(tmp_path / "off", allow_impossible="no")
    assert [refused[p]["success"] for p in PROBLEMS] == [True, False, False]


@pytest.mark.parametrize(("written", "meant"), [
    (True, True), (False, False), ("true", True), ("FALSE", False), ("Yes", True), ("no", False), ("1", True),
    ("0", False), (1, True), (0, False), (None, None),
])
def test_boolean_task_parameters_take_the_usual_spellings(written, meant) -> None:
    from pddlworlds.frameworks import inspect_task

    task = inspect_task.pddlworlds(agent="standard", problems="problem1", example=written, allow_impossible=written)
    offered = False if meant is None else meant  # by default: the agentboard split has no unsolvable problem
    assert (task.metadata["example"], task.metadata["allow_impossible"]) == (meant, offered)


@pytest.mark.parametrize("name", ["example", "allow_impossible"])
@pytest.mark.parametrize("written", ["maybe", "", "2", 2, 1.0, "truee"])
def test_boolean_task_parameters_refuse_anything_else_in_one_line(name, written) -> None:
    from pddlworlds.frameworks import inspect_task

    with pytest.raises(ValueError, match=f"^{name} must be true or false") as caught:
        inspect_task.pddlworlds(agent="standard", problems="problem1", **{name: written})
    assert str(caught.value).endswith(f"not {written!r}") and "\n" not in str(caught.value)


def test_trl_environment_on_a_server_plays_the_servers_defaults(tmp_path) -> None:
    """A server started with `--domain gripper --max-steps 5 --reward success`: a TRL environment that sets
    nothing plays those; what it sets (a keyword, a row's column) still wins."""
    from pddlworlds.testing.servers import free_port, pddlworlds_command, started

    port = free_port()
    command = pddlworlds_command("env-server", "--port", str(port), "--domain", "gripper", "--max-steps", "5",
                                 "--reward", "success", "--max-sessions", "2")
    with started(command, f"http://127.0.0.1:{port}/health"):
        url = f"http://127.0.0.1:{port}"
        remote, local = PDDLWorldsToolEnv(base_url=url), PDDLWorldsToolEnv(domain="gripper", max_steps=5, reward="success")
        assert remote.reset(problem="prob01", seed=0) == local.reset(problem="prob01", seed=0)
        assert remote.info["domain"] == "gripper" and "5 steps" in remote.reset(problem="prob01")
        for action in ["(pick ball1 rooma left)", "(move rooma roomb)", "(drop ball1 roomb left)"]:
            assert remote.act(action) == local.act(action)
        assert remote.info["progress"] == 0.25 and remote.get_reward() == local.get_reward() == 0.0  # the success reward
        keyword = PDDLWorldsToolEnv(base_url=url, max_steps=7)
        assert "7 steps" in keyword.reset(problem="prob02") and keyword.info["domain"] == "gripper"
        assert "9 steps" in keyword.reset(problem="prob02", max_steps=9)  # a row's column over the keyword
        for env in (remote, keyword):
            ended(env)


@pytest.mark.parametrize(("action", "message"), [
    (123, "an action is a text, not int"),
    (None, "an action is a text, not NoneType"),
    ("x" * 2_000, "the action is 2,000 characters long; at most 1,024 are accepted"),
])
def test_trl_tools_refuse_a_bad_action_alike_in_process_and_remotely(env_server, action, message) -> None:
    """TRL hands a tool's exception to the model as the tool result, so the same refusal is the same tool
    result; neither takes a step."""
    results = []
    for env in (PDDLWorldsToolEnv(), PDDLWorldsToolEnv(base_url=env_server)):
        env.reset(domain="gripper", problem="prob01", seed=0)
        with pytest.raises(ValueError) as caught:
            env.act(action)
        results.append((str(caught.value), env.info["step"], env.act("look around"), env.info["step"]))
        ended(env)
    assert results[0] == results[1] and results[0][:2] == (message, 0) and results[0][3] == 1  # the episode plays on
