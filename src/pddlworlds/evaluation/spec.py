"""What a run plays: agents (by name or factory path), problems, seeds, the step budget and the model.

A `RunPlan` expands into `EpisodeSpec`s (picklable, so they travel to threads, processes and Ray actors).
The model is a `pddlworlds.llm.BackendSpec`, read from `--llm NAME:ARG` through the `BACKENDS` table.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..llm import BackendSpec
from ..worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS, DEFAULT_SPLIT
from ..worlds.ladder import step_budget
from ..worlds.profiles import DEFAULT_PROFILE
from .errors import EvaluationError

if TYPE_CHECKING:
    from ..agents.insights import InsightSource

__all__ = [
    "BackendSpec",
    "EpisodeSpec",
    "RunPlan",
    "agent_names",
    "resolve_agent",
]


@dataclass(frozen=True, order=True)
class EpisodeSpec:
    """One episode to play (picklable)."""

    agent: str
    domain: str
    split: str
    problem: str
    seed: int | None
    max_steps: int = DEFAULT_MAX_EPISODE_STEPS
    profile: str = DEFAULT_PROFILE  # whose text and scoring rules the environment plays by
    allow_impossible: bool = False  # the env offers the `impossible` action
    prompt_file: str | None = None  # an AgentBoard prompt file for the agents that take one
    setting: str = "free"  # what LLM agents play in (`pddlworlds.agents.SETTINGS`)
    insights: InsightSource | None = None  # what an LLM agent of a trial reads (its memory's `use(...)`)
    trial: int | None = None
    choice_score: str | None = None  # a ranking rule other than the setting's (`admissible.CHOICE_SCORES`)
    observation_mode: str | None = None  # what the environment shows after an action (None: domain default)
    domains_root: str | None = None  # the folder of domain folders `domain` is one of (None: the shipped ones)
    score_all: bool = False  # a choosing setting scores every candidate whole, not only what decides the pick

    @property
    def key(self) -> tuple[str, str, str, str, int | None]:
        return (self.agent, self.domain, self.split, self.problem, self.seed)


def agent_names() -> list[str]:
    """The built-in agents' names (the `pddlworlds.agents.AGENTS` registry)."""
    from ..agents import AGENT_NAMES

    return list(AGENT_NAMES)


def resolve_agent(
    name: str, prompt_file: str | None = None, setting: str = "free", choice_score: str | None = None,
    score_all: bool = False,
) -> tuple[Callable[[Any], Any], bool]:
    """(factory(llm) -> Agent, needs a model) for a built-in name or a `package.module:factory` path.

    A factory of your own says it needs no model with an attribute `needs_llm = False`. `prompt_file` goes
    to the built-in agents whose registry entry takes that option (STANDARD), `setting` (other than
    "free"), `choice_score` and `score_all` to the LLM agents that take them; an LLM agent that cannot honour them is
    refused here.
    """
    if setting != "free" and ":" in name:
        raise EvaluationError(f"--setting {setting} applies to the built-in LLM agents, not {name!r}")
    if ":" in name:
        module_name, _, attr = name.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise EvaluationError(f"cannot load agent factory {name!r}: {exc}") from exc
        if not callable(factory):
            raise EvaluationError(f"agent factory {name!r} is not callable")
        return factory, bool(getattr(factory, "needs_llm", True))
    known = agent_names()
    if name not in known:
        raise EvaluationError(
            f"unknown agent {name!r}; agents: {', '.join(known)}; or give package.module:factory"
        )
    from ..agents import AGENTS

    entry = AGENTS[name]
    options: dict[str, Any] = {}
    if prompt_file is not None and "prompt_file" in entry.options:
        options["prompt_file"] = prompt_file
    if setting != "free" and entry.needs_llm:
        if "setting" not in entry.options or "prompt_file" in options:
            what = "with an AgentBoard --prompt-file" if "prompt_file" in options else ""
            raise EvaluationError(f"--setting {setting} does not apply to agent {name!r} {what}".rstrip())
        options["setting"] = setting
        if choice_score is not None:
            options["choice_score"] = choice_score
        if score_all:
            options["score_all"] = True
    return functools.partial(_make_builtin_agent, name, options), entry.needs_llm


def _make_builtin_agent(name: str, options: dict[str, Any], llm: Any, **kwargs: Any) -> Any:
    from ..agents import make_agent

    return make_agent(name, llm, **options, **kwargs)


@dataclass
class RunPlan:
    """The episodes of a run: agents x domains x problems x seeds, on one split with one step budget."""

    agents: list[str]
    problems: dict[str, list[str]]  # domain -> problem names, in the order they are played
    split: str = DEFAULT_SPLIT
    seeds: list[int] = field(default_factory=lambda: [0])
    #: Steps per episode; None: each problem's own budget (a ladder band's, else 30: `worlds.ladder.step_budget`).
    max_steps: int | None = DEFAULT_MAX_EPISODE_STEPS
    backend: BackendSpec = field(default_factory=BackendSpec)
    profile: str = DEFAULT_PROFILE  # the environments' profile (`gym.make(..., profile=...)`)
    allow_impossible: bool = False  # offer the `impossible` action (splits with unsolvable problems)
    prompt_file: str | None = None  # `--prompt-file`: an AgentBoard prompt file for STANDARD
    setting: str = "free"  # `--setting`: what LLM agents play in (`pddlworlds.agents.SETTINGS`)
    insights: InsightSource | None = None  # set per trial by `evaluation.trials`: the memory's `use(...)`
    trial: int | None = None  # and the trial
    choice_score: str | None = None  # `--choice-score`: a ranking rule other than the setting's
    observation_mode: str | None = None  # `--observation-mode` or the setting's (None: each domain's default)
    domains_root: str | None = None  # `--domains-root`: a folder of domain folders (None: the shipped ones)
    score_all: bool = False  # `--score-all-candidates`: every candidate's log-probability whole, in the record

    @property
    def domains(self) -> list[str]:
        return list(self.problems)

    def budget(self, domain: str, problem: str) -> int:
        """The steps an episode on `problem` gets: `max_steps`, or the problem's own budget (30, or a ladder
        band's, at least twice the proven shortest plan)."""
        if self.max_steps is not None:
            return self.max_steps
        from ..artefacts.plans import optimal_lengths

        shortest = optimal_lengths(domain, self.split).get(problem) if self.domains_root is None else None
        return step_budget(self.split, problem, shortest)

    def episodes(self) -> list[EpisodeSpec]:
        """Problem by problem, every agent on it, so a partial run already holds paired episodes."""
        return [
            EpisodeSpec(
                agent, domain, self.split, problem, seed, self.budget(domain, problem),
                self.profile, self.allow_impossible, self.prompt_file, self.setting, self.insights, self.trial,
                self.choice_score, self.observation_mode, self.domains_root, self.score_all,
            )
            for domain, problems in self.problems.items()
            for problem in problems
            for seed in self.seeds
            for agent in self.agents
        ]

    def needs_llm(self) -> bool:
        return any(resolve_agent(a, self.prompt_file, self.setting, self.choice_score, self.score_all)[1]
                   for a in self.agents)
