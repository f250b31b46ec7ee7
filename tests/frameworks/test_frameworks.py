"""The framework adapters' shared parts, without their frameworks: the episode options and their errors,
the registry, the error a missing extra gives, the TRL environment's tools and reward, `env-server`'s
refusals of bad arguments."""

from __future__ import annotations

import importlib
import subprocess
import sys

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401  (registers the ids)
from pddlworlds.frameworks import FRAMEWORKS, Episode, EpisodeOptions, EpisodeOver, adapter
from pddlworlds.frameworks.trl_env import PDDLWorldsToolEnv
from pddlworlds.registration import env_id
from pddlworlds.testing.servers import pddlworlds_command, source_env


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"domain": "chess"}, "unknown domain 'chess'; 4[0-9] domains: `pddlworlds list` shows them"),
        ({"domain": "logistic"}, "unknown domain 'logistic'; did you mean logistics"),
        ({"split": "nosuch"}, "has no split 'nosuch'; splits: agentboard"),
        ({"split": "../etc"}, "split must be the name of one of the domain's splits, not a path"),
        ({"profile": "gym"}, "unknown profile 'gym'"),
        ({"reward": "dense"}, "reward must be one of progress, success, not 'dense'"),
        ({"max_steps": 0}, "max_steps must be a whole number from 1 to 10000, not 0"),
        ({"max_steps": True}, "max_steps must be a whole number"),
        ({"seed": -1}, "seed must be a whole number of at least 0, not -1"),
        ({"observation_mode": "some"}, "observation_mode must be one of full, fluents, changes, not 'some'"),
        ({"colour": "red"}, "unknown reset option 'colour'; options: domain, split, profile, problem, seed"),
        ({"split": "s" * 300}, "has no split 'ssss"),
        ({"problem": ""}, "problem must name a problem of the split, not an empty text"),
        ({"problem": "p" * 300}, "unknown problem 'pppp"),
        ({"allow_impossible": "yes"}, "allow_impossible must be true or false, not 'yes'"),
    ],
)
def test_bad_options_are_refused_in_one_line(changes, message) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        EpisodeOptions().updated(changes)
    assert len(str(caught.value)) < 400 and "/" not in str(caught.value).replace("../etc", "")


def test_impossible_is_offered_by_the_split_as_eval_offers_it_and_a_default_problem_keeps_to_its_domain() -> None:
    """Left out, `allow_impossible` follows the split (offered where a stored proof shows a problem
    unsolvable, as `pddlworlds eval` decides); given, it is obeyed. A default problem is dropped when a
    reset moves to another domain, kept when it stays."""
    assert EpisodeOptions(domain="gripper", split="impossible").offers_impossible
    assert EpisodeOptions(domain="tyreworld", split="agentboard-mixed").offers_impossible
    assert not EpisodeOptions(domain="gripper").offers_impossible
    assert not EpisodeOptions(domain="gripper", split="impossible", allow_impossible=False).offers_impossible
    episode = Episode()
    episode.reset(EpisodeOptions(domain="gripper", split="impossible", problem="easy-02-nowhere-ball1"))
    claim = episode.step("impossible")
    assert claim.terminated and claim.info["success"] and claim.info["claimed_impossible"], claim.info
    episode.close()
    defaults = EpisodeOptions(domain="gripper", problem="prob02")
    assert defaults.updated({"seed": 4}).problem == "prob02"
    assert defaults.updated({"domain": "Gripper"}).problem == "prob02"
    assert defaults.updated({"domain": "blocksworld", "seed": 4}).problem is None
    assert defaults.updated({"split": "agentboard-mixed"}).problem is None


def test_episode_is_the_gymnasium_environment() -> None:
    """`Episode` plays what `gym.make` plays; a refused reset keeps the episode under way; a step after the
    end or before the first reset is refused."""
    episode = Episode()
    with pytest.raises(EpisodeOver, match="reset first"):
        episode.step("look around")
    options = EpisodeOptions(domain="blocksworld", problem="problem5", max_steps=2, seed=3)
    env = gym.make(env_id("blocksworld"), step_budget=2)  # the environment truncates at its step budget
    assert episode.reset(options).observation == env.reset(seed=3, options={"problem": "problem5"})[0]
    with pytest.raises(ValueError, match="unknown problem 'problem99'"):
        episode.reset(options.updated({"problem": "problem99"}))
    for action in ["(unstack b4 b1)", "look around"]:
        turn = episode.step(action)
        assert (turn.observation, turn.reward, turn.terminated, turn.truncated, turn.info) == env.step(action)
    assert turn.truncated and turn.done
    with pytest.raises(EpisodeOver, match="the episode is over after 2 steps: reset to start another"):
        episode.step("look around")
    episode.close()


def test_registry_names_each_framework_adapter() -> None:
    assert list(FRAMEWORKS) == ["openenv", "trl", "inspect", "verifiers"]
    assert adapter("trl") is PDDLWorldsToolEnv  # needs nothing beyond the core install
    with pytest.raises(ValueError, match="unknown framework 'gym'"):
        adapter("gym")


def test_a_missing_extra_names_the_extra_to_install(monkeypatch) -> None:
    for name in [m for m in sys.modules if m.startswith("pddlworlds.frameworks.openenv")]:
        monkeypatch.delitem(sys.modules, name)
    loaded = [m for m in sys.modules if m == "openenv" or m.startswith("openenv.")]
    for name in {"openenv", "openenv.core", *loaded}:  # as if openenv-core were not installed
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r"the openenv adapter needs openenv.core .*pip install 'pddlworlds\[openenv\]'"):
        importlib.import_module("pddlworlds.frameworks.openenv_env")


def test_tool_env_plays_the_dataset_rows_problem_and_pays_the_return() -> None:
    """TRL's `reset(**row)` picks the row's problem; the tools are Gymnasium steps; `get_reward()` is the
    episode's return under either reward."""
    env = PDDLWorldsToolEnv(max_steps=10)
    prompt = env.reset(prompt=[{"role": "user", "content": ""}], domain="blocksworld", problem="problem5", other=1)
    reference = gym.make(env_id("blocksworld"), max_episode_steps=10)
    observation, info = reference.reset(options={"problem": "problem5"})
    assert info["goal"] in prompt and observation in prompt and "10 steps" in prompt
    paid = 0.0
    for action in ["(unstack b4 b1)", "check valid actions", "stack b4 on b4"]:
        text = env.check_valid_actions() if action == "check valid actions" else env.act(action)
        observation, reward, *_ = reference.step(action)
        assert text == observation
        paid += reward
    assert env.get_reward() == paid == 0.5 and env.info["step"] == 3
    sparse = PDDLWorldsToolEnv(reward="success")
    sparse.reset(domain="blocksworld", problem="problem5")
    sparse.act("(unstack b4 b1)")
    assert sparse.get_reward() == 0.0


def test_tool_env_close_closes_its_gymnasium_environment_and_is_not_a_tool(monkeypatch) -> None:
    """`close()` (and leaving a `with` block) closes the episode's environment; TRL does not offer it as a
    tool (it lists the class's plain functions), and a reset after it plays again."""
    import inspect

    from pddlworlds.frameworks import episodes

    closed: list[str] = []
    make = episodes.make_env

    def spied(options):
        env = make(options)
        close = env.close
        env.close = lambda: (closed.append(options.domain), close())[1]
        return env

    monkeypatch.setattr(episodes, "make_env", spied)
    with PDDLWorldsToolEnv(max_steps=5) as env:
        env.reset(domain="gripper", problem="prob01")
        env.act("check valid actions")
        assert closed == []
    assert closed == ["gripper"] and env.info is None
    with pytest.raises(ValueError, match="no episode has started: reset first"):
        env.get_reward()
    env.reset(domain="blocksworld", problem="problem1")
    assert env.info["step"] == 0
    env.close()
    assert closed == ["gripper", "blocksworld"]
    offered = [n for n, _ in inspect.getmembers(PDDLWorldsToolEnv, predicate=inspect.isfunction)]
    assert "close" not in offered and "close" in dir(PDDLWorldsToolEnv) and PDDLWorldsToolEnv.close.__doc__


def test_tool_env_methods_are_the_tools_trl_offers() -> None:
    """TRL offers every public function of the class but `reset` and `get_reward`, described from its
    docstring by transformers' own schema reader."""
    pytest.importorskip("transformers")
    import inspect

    from transformers.utils import get_json_schema

    names = [n for n, _ in inspect.getmembers(PDDLWorldsToolEnv, predicate=inspect.isfunction)
             if not n.startswith("_") and n not in ("reset", "get_reward")]
    assert names == ["act", "check_valid_actions"]
    act = get_json_schema(PDDLWorldsToolEnv().act)["function"]
    assert act["parameters"]["required"] == ["action"] and "pick up b1" in act["parameters"]["properties"]["action"]["description"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "0"], "--port must be between 1 and 65535, not 0"),
        (["--max-sessions", "0"], "--max-sessions must be between 1 and 4096, not 0"),
        (["--domain", "chess"], "unknown domain 'chess'"),
        (["--problem", "problem99"], "unknown problem 'problem99'; problems: problem1, "),
        (["--session-timeout", "nan"], "--session-timeout must be a number of seconds above 0 and at most 86,400"),
        (["--session-timeout", "inf"], "--session-timeout must be a number of seconds above 0"),
        (["--api-key", " "], "--api-key must not be empty"),
        (["--split", "x" * 300], "has no split 'xxxx"),
    ],
)
def test_env_server_refuses_bad_arguments_in_one_line(argv, message) -> None:
    run = subprocess.run(pddlworlds_command("env-server", *argv), env=source_env(), capture_output=True,
                         text=True, timeout=120, check=False)
    assert run.returncode == 2
    assert run.stderr.startswith("pddlworlds env-server: error:") and message in run.stderr
    assert run.stderr.count("\n") == 1


def test_every_catalogue_world_has_a_named_inspect_task_with_its_ladder_budgets() -> None:
    """`inspect eval pddlworlds/<world>` for every shipped world; a ladder problem's samples are played with its
    band's budget unless `max_steps` says otherwise."""
    from inspect_ai._util.registry import registry_info

    from pddlworlds.frameworks import inspect_task
    from pddlworlds.worlds.catalogue import domains

    for name in domains():
        assert registry_info(getattr(inspect_task, name)).name.endswith(name)
    task = inspect_task.logistics(problems="ladder-hard-01")
    assert task.metadata["domain"] == "logistics" and task.metadata["split"] == "ladder"
    options = EpisodeOptions(domain="logistics", split="ladder")
    assert options.budget("ladder-hard-01") == 80 and options.budget("ladder-easy-02") == 30
    assert EpisodeOptions(domain="logistics", split="ladder", max_steps=7).budget("ladder-hard-01") == 7
    assert EpisodeOptions(domain="gripper").budget("prob01") == 30
