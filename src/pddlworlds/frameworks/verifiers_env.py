"""The verifiers environment: pddlworlds problems as a `verifiers.MultiTurnEnv`, for `vf-eval`, `vf-train` and
the trainers that load verifiers environments by name.

    vf-eval pddlworlds -a '{"domain": "gripper", "split": "generated", "max_steps": 30}' \\
        -m MODEL -b http://127.0.0.1:8000/v1 -k API_KEY_VARIABLE -n 5 -r 1

`vf-eval pddlworlds` imports the package by that name and calls its `load_environment(**env_args)`, which is
this module's. One dataset row per problem of the split (`problems`: a comma-separated subset; `limit`:
the first n); the row's prompt is the chat's system message and the problem (`frameworks.chat`), and its
`info` the episode's options. Each rollout plays that problem on the Gymnasium environment itself
(`episodes.Episode`): the model's reply is read as our agents' replies are, the step's observation is the
environment's reply, and the rollout ends when the episode does (the goal, the budget, or a claim of
`impossible`).

The rubric is our evaluation's per-episode numbers for the episode played (`scoring.metrics`): `success`,
`progress`, `steps` (an unsolved episode counts the budget), `efficiency` (the proven optimal length over
the steps taken, on a solved episode with a known optimum, else 0.0: 1.0 is an optimal episode, and its
inverse is `pddlworlds eval`'s steps over optimal) and `executability` (the fraction of valid actions).
The reward is `progress` (or `success` with `reward="success"`), the Gymnasium episode's return; the others
are metrics (weight 0).
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

from ..records import EpisodeRecord
from ..scoring.metrics import episode_metrics, executability
from ..worlds.profiles import DEFAULT_PROFILE
from . import missing_extra
from .chat import REPLY_STOP, action_of, first_message, observation_message, system_message
from .episodes import Episode, EpisodeOptions, choose_problems, make_env, reset_kwargs

try:
    import verifiers as vf
    from datasets import Dataset
except ImportError as exc:  # the optional extra is not installed
    raise missing_extra("verifiers", exc) from exc

__all__ = ["AGENT_NAME", "METRICS", "PDDLWorldsVerifiersEnv", "episode_record", "load_environment", "opening_messages"]

#: The `agent` of the episode records this environment makes (`episode_record`).
AGENT_NAME = "verifiers"
#: The rubric's functions, in order: our evaluation's per-episode numbers (see the module's docstring).
METRICS = ("success", "progress", "steps", "efficiency", "executability")
#: Where a rollout's state keeps its episode while it is played, and its record once it ends.
_LIVE, _RECORD = "pddlworlds_live", "pddlworlds_episode"


def _options(state: dict[str, Any]) -> EpisodeOptions:
    info = state["info"]
    return EpisodeOptions(**(json.loads(info) if isinstance(info, str) else info))


def episode_record(state: dict[str, Any]) -> EpisodeRecord:
    """The record of the episode a rollout played (ended or not), as `pddlworlds eval` stores one."""
    if _RECORD in state:
        return EpisodeRecord.from_dict(state[_RECORD])
    live = state.get(_LIVE)
    if live is None:  # the rollout failed before its episode started
        raise ValueError("the rollout has no episode: it failed before the reset")
    return _record(live, state.get("error"))


def _record(live: dict[str, Any], error: object = None) -> EpisodeRecord:
    """The record of a live episode (`Episode.record`); `error`: what stopped the rollout early (the model's
    endpoint failing, say), kept as the record's fault as `pddlworlds eval` keeps one."""
    episode: Episode = live["episode"]
    return episode.record(AGENT_NAME, run_time_s=time.perf_counter() - live["start"],
                          error=repr(error) if error is not None else None)


def _numbers(state: dict[str, Any]) -> dict[str, Any]:
    try:
        record = episode_record(state)
    except ValueError:
        return {"success": False, "progress": 0.0, "steps": None, "steps_over_optimal": None, "executability": None}
    return episode_metrics(record, _options(state).budget())


def success(state: dict[str, Any]) -> float:
    """1.0 when the episode reached its goal (or rightly claimed `impossible`), else 0.0."""
    return 1.0 if _numbers(state)["success"] else 0.0


def progress(state: dict[str, Any]) -> float:
    """The best fraction of the goal's conditions the episode reached (the progress-reward return)."""
    return float(_numbers(state)["progress"])


def steps(state: dict[str, Any]) -> float:
    """Steps taken; an unsolved episode counts its whole budget (as `pddlworlds eval` counts it)."""
    value = _numbers(state)["steps"]
    return float(value) if value is not None else float(_options(state).budget())


def efficiency(state: dict[str, Any]) -> float:
    """The proven optimal length over the steps taken, on a solved episode with a known optimum; else 0.0."""
    ratio = _numbers(state)["steps_over_optimal"]
    return 1.0 / ratio if ratio else 0.0


def executability_metric(state: dict[str, Any]) -> float:
    """The fraction of the episode's actions the environment could take (0.0 for an episode without steps)."""
    try:
        value = executability(episode_record(state))
    except ValueError:
        value = None
    return float(value) if value is not None else 0.0


executability_metric.__name__ = "executability"  # the metric's name in verifiers' results


def episode_rubric(reward: str) -> vf.Rubric:
    """Every number of `METRICS`; the one named by `reward` ("progress" or "success") weighs 1, the rest 0."""
    funcs = {"success": success, "progress": progress, "steps": steps, "efficiency": efficiency,
             "executability": executability_metric}
    rubric = vf.Rubric()
    for name in METRICS:
        rubric.add_reward_func(funcs[name], weight=1.0 if name == reward else 0.0)
    return rubric


class PDDLWorldsVerifiersEnv(vf.MultiTurnEnv):
    """One rollout per dataset row: the row's problem played to its end, one model reply a step."""

    def __init__(self, options: EpisodeOptions, problems: list[str], **kwargs: Any) -> None:
        rows = Dataset.from_list([_row(options.updated({"problem": name})) for name in problems])
        longest = max(options.budget(name) for name in problems)  # each episode's own budget ends it sooner
        # Replies stop before the model writes an observation of its own, unless the caller's sampling says.
        sampling = {"stop": list(REPLY_STOP), **(kwargs.pop("sampling_args", None) or {})}
        # One turn more than the budget: the rollout's last reply is stepped (and the episode truncated) in
        # the turn after it, which a stop at the budget itself would skip.
        super().__init__(dataset=rows, eval_dataset=rows, rubric=episode_rubric(options.reward),
                         max_turns=longest + 1, message_type="chat", sampling_args=sampling, **kwargs)
        self.options = options

    async def setup_state(self, state: vf.State) -> vf.State:
        options = _options(state)
        episode = Episode()
        episode.reset(options)
        state[_LIVE] = {"episode": episode, "start": time.perf_counter()}
        return state

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: Any) -> vf.Messages:
        live = state[_LIVE]
        completion = state["trajectory"][-1]["completion"]
        reply = completion[-1].get("content") if isinstance(completion, list) and completion else completion
        action = action_of(reply if isinstance(reply, str) else "")
        turn = live["episode"].step(action)
        answer: vf.Messages = [{"role": "user", "content": observation_message(turn.observation)}]
        if turn.done:
            state["final_env_response"] = answer
        return answer

    @vf.cleanup
    async def close_episode(self, state: vf.State) -> None:
        """Keep the finished episode's record (JSON, for the rubric and `--state-columns
        pddlworlds_episode`) and close its Gymnasium environment: a state must cross processes as data."""
        live = state.pop(_LIVE, None)
        if live is not None:
            state[_RECORD] = _record(live, state.get("error")).to_dict()
            live["episode"].close()


def opening_messages(options: EpisodeOptions) -> list[dict[str, str]]:
    """The chat a rollout of `options`' problem opens with: the system message and the problem (the first
    prompt of the problem's rows in `pddlworlds export` too)."""
    env = make_env(options)
    try:
        observation, info = env.reset(**reset_kwargs(options))
        return [{"role": "system", "content": system_message(env)},
                {"role": "user", "content": first_message(observation, info)}]
    finally:
        env.close()


def _row(options: EpisodeOptions) -> dict[str, Any]:
    # `info` as JSON text: a dataset column keeps one type per field, and the options mix None with values
    return {"prompt": opening_messages(options), "info": json.dumps(dataclasses.asdict(options)), "answer": ""}


def load_environment(
    domain: str | None = None,
    split: str | None = None,
    problems: str | list[str] | None = None,
    limit: int | None = None,
    max_steps: int | None = None,
    profile: str = DEFAULT_PROFILE,
    reward: str = "progress",
    seed: int = 0,
    observation_mode: str | None = None,
    allow_impossible: bool | None = None,
    domains_root: str | None = None,
    **kwargs: Any,
) -> PDDLWorldsVerifiersEnv:
    """The environment over one world and split (`domain`: any of the catalogue's, or with `domains_root`
    one of that folder's; default blocksworld and agentboard, or the folder's first domain and that domain's
    first split). The options are `EpisodeOptions`' (`allow_impossible`: None offers the action on a split
    with unsolvable problems, as `pddlworlds eval` does); other keywords go to `verifiers.MultiTurnEnv`.
    A held-out split is played only when named, as every split is."""
    options = EpisodeOptions.within(domains_root, {
        "domain": domain, "split": split, "profile": profile, "seed": seed, "max_steps": max_steps,
        "reward": reward, "observation_mode": observation_mode, "allow_impossible": allow_impossible})
    chosen = choose_problems(options, problems, limit)
    if not chosen:
        raise ValueError(f"{options.domain}/{options.split} has no problem to play")
    return PDDLWorldsVerifiersEnv(options, chosen, **kwargs)
