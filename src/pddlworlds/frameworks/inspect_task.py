"""Inspect tasks: pddlworlds problems evaluated with `inspect eval`, on any model Inspect can reach.

    inspect eval pddlworlds/gripper -T split=agentboard -T agent=react --model openai/gpt-4o-mini
    inspect eval pddlworlds/blocksworld -T agent=standard -T problems=problem1 -T max_steps=5 \\
        --model openai-api/pddlworlds/gemma --model-base-url http://127.0.0.1:8000/v1   # `pddlworlds serve`
    inspect eval src/pddlworlds/frameworks/inspect_task.py@barman ...                   # the file itself
    inspect eval pddlworlds/pddlworlds -T domains_root=my_domains -T domain=briefcase ... # domains of your own

One sample per problem of the split. `agent`: "react", Inspect's own ReAct agent with our actions as tools
(`act`, `check_valid_actions`), or one of ours by its `pddlworlds eval` name ("standard", "hiagent", the
ablations, "expert", "random"), whose model calls go to the model Inspect evaluates (`InspectLLM`). Either
plays the Gymnasium environment itself, through a wrapper that records every step; the log keeps those
steps (the sample's store) and the episode record our evaluation stores (the score's metadata), and the
scores are our evaluation's per-episode numbers for that record: success, progress, steps (an unsolved
episode counts the budget), steps over the optimal length (solved episodes with a known optimum) and
executability. A value an episode does not have (steps over optimal without a known optimum, or unsolved)
is NaN in its score, which Inspect leaves out of the mean and counts among the unscored samples, so each
score's mean is over the episodes its `scored_samples` says, as `pddlworlds eval`'s means are.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym

# Absolute imports: `inspect eval path/to/inspect_task.py@gripper` loads this file as a module of its own.
from pddlworlds.agents.registry import AGENTS, make_agent
from pddlworlds.frameworks import missing_extra
from pddlworlds.frameworks.episodes import EpisodeOptions, Turn, choose_problems, make_env, reset_kwargs
from pddlworlds.records import EpisodeRecord, StepRecord
from pddlworlds.scoring.metrics import episode_metrics
from pddlworlds.unsolvable.claim import IMPOSSIBLE_ACTION
from pddlworlds.worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS, DEFAULT_SPLIT, domains
from pddlworlds.worlds.profiles import DEFAULT_PROFILE

try:
    from inspect_ai import Task, task
    from inspect_ai.agent import AgentState, react
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import get_model
    from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
    from inspect_ai.solver import Generate, TaskState, solver
    from inspect_ai.tool import Tool, ToolError, tool
except ImportError as exc:  # the optional extra is not installed
    raise missing_extra("inspect", exc) from exc

from pddlworlds.frameworks.inspect_model import InspectLLM

__all__ = [
    "INSPECT_AGENT", "SCORES", "STORE_KEY", "StepLog", "barman", "blocksworld", "gripper", "pddlworlds", "task_flag",
    "tyreworld",
]

#: The `agent` that is Inspect's own ReAct agent with our actions as tools.
INSPECT_AGENT = "react"
#: Where a sample's store keeps the episode: {"options": ..., "turns": [...], "record": ...}.
STORE_KEY = "pddlworlds_episode"
#: The scores: our evaluation's per-episode values of these names (`scoring.metrics.episode_metrics`).
SCORES = ("success", "progress", "steps", "steps_over_optimal", "executability")

INSTRUCTIONS = (
    "You are solving a planning problem in a text world. Each call of the act tool takes one action, written "
    "as in the domain's sentences (for example 'pick up b1' or 'move from rooma to roomb'), and returns what "
    "you observe. check_valid_actions lists every action you can take now. Each call of either tool is one "
    "step of your budget of {max_steps}. The episode ends when the goal is reached or the budget is spent."
)
#: Added to `INSTRUCTIONS` when the episode offers the `impossible` action (as our agents' prompts gain a rule).
IMPOSSIBLE_INSTRUCTION = (
    f"Some tasks cannot be done. If you are sure the goal cannot be reached, call act with '{IMPOSSIBLE_ACTION}': "
    "it ends the episode, and on a task that can be done it counts as a failure."
)
#: How a boolean task parameter may be written (`-T example=no`); case does not matter.
TRUE_WORDS, FALSE_WORDS = ("true", "1", "yes"), ("false", "0", "no")


def task_flag(name: str, value: object) -> bool | None:
    """A boolean task parameter from what `-T` gives (a bool, 0/1, or a word of `TRUE_WORDS`/`FALSE_WORDS`);
    None stays None. Anything else is refused in one line: a typo must not silently read as true."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    word = value.strip().lower() if isinstance(value, str) else None
    if word in TRUE_WORDS or word in FALSE_WORDS:
        return word in TRUE_WORDS
    raise ValueError(f"{name} must be true or false (true/false, yes/no, 1/0), not {value!r}")


class StepLog(gym.Wrapper):
    """The environment, recording every reset and step (`turns`, JSON-ready: what the Inspect log keeps)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.turns: list[dict[str, Any]] = []

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        self.turns = [_turn_dict(None, Turn(observation, 0.0, False, False, info))]
        return observation, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.turns.append(_turn_dict(action, Turn(observation, float(reward), bool(terminated), bool(truncated), info)))
        return observation, reward, terminated, truncated, info

    @property
    def done(self) -> bool:
        last = self.turns[-1] if self.turns else None
        return last is None or bool(last["terminated"] or last["truncated"])


def _turn_dict(action: str | None, turn: Turn) -> dict[str, Any]:
    return {"action": action, **dataclasses.asdict(turn), "info": dict(turn.info)}


def record_of(log: StepLog, agent: str, model: str | None, seed: int | None, run_time_s: float) -> EpisodeRecord:
    """The episode record of a logged episode (as `Agent.run` makes one, without model-side fields)."""
    first, last = log.turns[0], log.turns[-1]
    trajectory = [StepRecord.of_step(t["action"], t["observation"], t["info"]) for t in log.turns[1:]]
    costed = bool(getattr(log.unwrapped, "action_costs", False))  # the record keeps the cost where it means more
    return EpisodeRecord.of_episode(agent, seed, (first["observation"], first["info"]), last["info"], trajectory,
                                    run_time_s, costed=costed, model=model)


# ---- the tools of Inspect's agent ---------------------------------------------------------------


def _step_tool(log: StepLog, text: str) -> str:
    if log.done:
        raise ToolError("The episode is over; no more actions are taken.")
    observation, *_ = log.step(text)
    return observation


@tool(name="act", max_output=0)
def act_tool(log: StepLog) -> Tool:
    async def execute(action: str) -> str:
        """Take one action in the world and see what happens.

        Args:
            action: The action in words, for example "pick up b1" or "move from rooma to roomb".

        Returns:
            What you observe after the action (or why it could not be taken).
        """
        return _step_tool(log, action)

    return execute


@tool(name="check_valid_actions", max_output=0)
def check_valid_actions_tool(log: StepLog) -> Tool:
    async def execute() -> str:
        """List every action that can be taken now (this costs one step).

        Returns:
            The valid actions, comma-separated.
        """
        return _step_tool(log, "check valid actions")

    return execute


# ---- solver, scorer, task ------------------------------------------------------------------------


@solver
def play(agent: str = INSPECT_AGENT, options: dict[str, Any] | None = None, example: bool | None = None,
         max_tokens: int | None = None):  # Inspect's decorator gives the solver its type
    """Play the sample's problem with `agent`; the episode goes into the sample's store."""
    options = dict(options or {})
    base = EpisodeOptions.within(options.pop("domains_root", None), options)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        chosen = base.updated({"problem": state.metadata["problem"]})
        log = StepLog(make_env(chosen))
        start = time.perf_counter()
        if agent == INSPECT_AGENT:
            record = await _play_react(state, log, chosen)
        else:
            record = await _play_ours(agent, log, chosen, example, max_tokens)
        record = dataclasses.replace(record, run_time_s=time.perf_counter() - start)
        state.store.set(STORE_KEY, {"options": dataclasses.asdict(chosen), "turns": log.turns,
                                    "record": record.to_dict()})
        log.close()
        return state

    return solve


async def _play_react(state: TaskState, log: StepLog, options: EpisodeOptions) -> EpisodeRecord:
    log.reset(**reset_kwargs(options))
    reminders = 0

    async def keep_going(agent_state: AgentState) -> bool | str:
        nonlocal reminders
        if log.done:
            return False
        if agent_state.output.message.tool_calls:
            return True
        reminders += 1  # a reply without a tool call: remind, but not past the step budget
        return "Call the act tool with your next action." if reminders <= budget else False

    budget = options.budget()
    prompt = INSTRUCTIONS.format(max_steps=budget)
    if options.offers_impossible:
        prompt = f"{prompt} {IMPOSSIBLE_INSTRUCTION}"
    agent = react(prompt=prompt, tools=[act_tool(log), check_valid_actions_tool(log)], submit=False,
                  on_continue=keep_going)
    result = await agent(AgentState(messages=state.messages))
    state.messages = result.messages
    if result.output:
        state.output = result.output
    return record_of(log, INSPECT_AGENT, str(get_model()), options.seed, 0.0)


async def _play_ours(name: str, log: StepLog, options: EpisodeOptions, example: bool | None,
                     max_tokens: int | None) -> EpisodeRecord:
    entry = AGENTS[name]
    llm = InspectLLM(get_model(), asyncio.get_running_loop()) if entry.needs_llm else None
    kwargs: dict[str, Any] = {}
    if entry.needs_llm and example is not None:
        kwargs["example"] = example
    if entry.needs_llm and max_tokens is not None:
        kwargs["max_tokens"] = max_tokens
    agent = make_agent(name, llm, **kwargs)
    reset = reset_kwargs(options)
    return await asyncio.to_thread(agent.run, log, seed=reset["seed"], options=reset["options"])


def _known(value: Any) -> bool:
    """Whether a per-episode value is known: not None (our scoring's unknown) nor NaN (Inspect's)."""
    return value is not None and not (isinstance(value, float) and math.isnan(value))


@metric
def mean_of_known() -> Metric:
    """The mean over the samples that have the value (steps over optimal exists for solved episodes with a
    known optimum only), as our evaluation's aggregates take it."""

    def compute(scores: list[SampleScore]) -> float:
        known = [float(s.score.value) for s in scores if _known(s.score.value)]  # type: ignore[arg-type]
        return sum(known) / len(known) if known else float("nan")

    return compute


@scorer(metrics={name: [mean_of_known()] for name in SCORES})
def episode_scores(max_steps: int | None = None):  # Inspect's decorator types it
    """Our evaluation's per-episode numbers for the episode in the sample's store; an unsolved episode counts
    its own step budget (`max_steps`, else the one its environment played it with)."""

    async def score(state: TaskState, target: Target) -> Score:
        episode = state.store.get(STORE_KEY)
        record = EpisodeRecord.from_dict(episode["record"])
        played = episode["turns"][0]["info"].get("step_budget") if episode.get("turns") else None
        values = episode_metrics(record, max_steps or played or DEFAULT_MAX_EPISODE_STEPS)
        outcome = "solved" if record.success else "not solved"
        return Score(
            value={name: values[name] if _known(values[name]) else float("nan") for name in SCORES},
            answer=f"{outcome} in {record.steps} steps, progress {record.progress:.2f}",
            explanation=f"optimal length {record.optimal_length}" if record.optimal_length else None,
            metadata={"episode": episode["record"]},
        )

    return score


def _sample(options: EpisodeOptions) -> Sample:
    env = make_env(options)
    observation, info = env.reset(**reset_kwargs(options))
    env.close()
    text = f"{info['goal']}\n\nWhat you observe now:\n{observation}"
    metadata = {k: info[k] for k in ("domain", "split", "problem", "optimal_length", "solvable")}
    return Sample(id=f"{info['domain']}/{info['problem']}", input=text, metadata=metadata)


@task
def pddlworlds(
    domain: str | None = None,
    split: str | None = None,
    agent: str = INSPECT_AGENT,
    problems: str | list[str] | None = None,
    limit: int | None = None,
    max_steps: int | None = None,
    profile: str = DEFAULT_PROFILE,
    reward: str = "progress",
    seed: int = 0,
    example: bool | str | None = None,
    max_tokens: int | None = None,
    allow_impossible: bool | str | None = None,
    domains_root: str | None = None,
) -> Task:
    """The problems of one domain and split (`problems`: a comma-separated subset; `limit`: the first n),
    played by `agent` with `max_steps` steps each (None: each problem's own budget, 30 or a ladder band's);
    `example` and `max_tokens` go to our LLM agents (None:
    the agent's default; `example=false` as for a model trained without the in-context example).
    `allow_impossible` offers the `impossible` action; None decides as `pddlworlds eval` does (offered on
    a split with unsolvable problems), so an agent scores here what it scores there. `domains_root`: a folder
    of domain folders (laid out as `pddl_domains/`) whose `domain` is played instead of a shipped one (default
    domain: blocksworld, or the root's first; default split: agentboard, or the domain's first)."""
    if agent != INSPECT_AGENT and agent not in AGENTS:
        raise ValueError(f"unknown agent {agent!r}; agents: {INSPECT_AGENT}, {', '.join(AGENTS)}")
    example = task_flag("example", example)
    options = EpisodeOptions.within(domains_root, {
        "domain": domain, "split": split, "profile": profile, "seed": seed, "max_steps": max_steps, "reward": reward,
        "allow_impossible": task_flag("allow_impossible", allow_impossible)})
    split = options.split
    samples = [_sample(options.updated({"problem": p})) for p in choose_problems(options, problems, limit)]
    chosen = {k: v for k, v in dataclasses.asdict(options).items() if k != "problem"}
    return Task(
        dataset=MemoryDataset(samples, name=f"pddlworlds-{options.domain}-{split}"),
        solver=play(agent, chosen, example, max_tokens),
        scorer=episode_scores(max_steps),
        metadata={"domain": options.domain, "split": split, "agent": agent, "profile": profile,
                  "example": example, "allow_impossible": options.offers_impossible,
                  **({"domains_root": options.domains_root} if options.domains_root is not None else {})},
    )


@task
def blocksworld(split: str = DEFAULT_SPLIT, agent: str = INSPECT_AGENT, **options: Any) -> Task:
    """`pddlworlds(domain="blocksworld", ...)`."""
    return pddlworlds("blocksworld", split, agent, **options)


@task
def gripper(split: str = DEFAULT_SPLIT, agent: str = INSPECT_AGENT, **options: Any) -> Task:
    """`pddlworlds(domain="gripper", ...)`."""
    return pddlworlds("gripper", split, agent, **options)


@task
def tyreworld(split: str = DEFAULT_SPLIT, agent: str = INSPECT_AGENT, **options: Any) -> Task:
    """`pddlworlds(domain="tyreworld", ...)`."""
    return pddlworlds("tyreworld", split, agent, **options)


@task
def barman(split: str = DEFAULT_SPLIT, agent: str = INSPECT_AGENT, **options: Any) -> Task:
    """`pddlworlds(domain="barman", ...)`."""
    return pddlworlds("barman", split, agent, **options)


def _world_task(world: str) -> Callable[..., Task]:
    """The task named after a catalogue world: `pddlworlds(domain=world, ...)`."""

    def world_task(split: str | None = None, agent: str = INSPECT_AGENT, **options: Any) -> Task:
        return pddlworlds(world, split, agent, **options)

    world_task.__name__ = world_task.__qualname__ = world
    world_task.__doc__ = f"`pddlworlds(domain={world!r}, ...)` (split: the world's own, its public ladder)."
    return task(name=world)(world_task)


# A named task for every other shipped world (`inspect eval pddlworlds/sokoban`), as the four above have:
# Inspect finds tasks by the module-level names of this entry-point module.
for _world in domains():
    if _world not in globals():
        globals()[_world] = _world_task(_world)
