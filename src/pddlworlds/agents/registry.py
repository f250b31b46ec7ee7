"""The agents by name: `AGENTS` maps a name to how to build it, whether it needs a model, and its flags.

A new agent is one module plus one entry here; `make_agent`, `AGENT_NAMES` and `LLM_AGENT_NAMES` (which
the evaluation reads) are derived from this table. Scripted agents are imported only when built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..registry import Registry
from .hiagent import HIAGENT_CONFIGS, HiAgent
from .standard import StandardAgent

if TYPE_CHECKING:
    from ..llm import LLM
    from .base import Agent

__all__ = ["AGENTS", "AGENT_NAMES", "LLM_AGENT_NAMES", "AgentEntry", "make_agent"]


@dataclass(frozen=True)
class AgentEntry:
    """How to build one named agent.

    `factory(llm, **keywords)` for an agent that needs a model, `factory(**keywords)` otherwise; `flags`
    are the constructor keywords that make this entry what it is (e.g. a HiAgent ablation's switches);
    `options` names the run options (`pddlworlds eval --prompt-file` -> "prompt_file", `--setting` ->
"setting") the factory takes.
    """

    factory: Callable[..., Agent]
    needs_llm: bool
    flags: Mapping[str, Any] = field(default_factory=dict)
    options: tuple[str, ...] = ()


def _expert(**kwargs: Any) -> Agent:
    from .scripted import ExpertAgent

    return ExpertAgent(**kwargs)


def _random(**kwargs: Any) -> Agent:
    from .scripted import RandomAgent

    return RandomAgent(**kwargs)


def _standard(llm: LLM, prompt_file: str | None = None, **kwargs: Any) -> Agent:
    """STANDARD; with an AgentBoard prompt file, its prompt is assembled as AgentBoard's own agent does
    (AgentBoard's reply format, which the admissible-action setting does not cover)."""
    if prompt_file is None:
        return StandardAgent(llm, **kwargs)
    if kwargs.pop("setting", "free") != "free":
        raise ValueError("a setting other than free is for the agents' own prompts, not an AgentBoard --prompt-file")
    from .agentboard import AgentBoardStandardAgent

    return AgentBoardStandardAgent(llm, prompt_file, **kwargs)


def _hiagent_entry(summarize: bool, retrieve: bool, hide_finished: bool) -> AgentEntry:
    flags = {"summarize": summarize, "retrieve": retrieve, "hide_finished": hide_finished}
    return AgentEntry(HiAgent, needs_llm=True, flags=MappingProxyType(flags), options=("setting",))


AGENTS: Registry[AgentEntry] = Registry(
    "agent",
    {
        "standard": AgentEntry(_standard, needs_llm=True, options=("prompt_file", "setting")),
        **{name: _hiagent_entry(*switches) for name, switches in HIAGENT_CONFIGS.items()},
        "expert": AgentEntry(_expert, needs_llm=False),
        "random": AgentEntry(_random, needs_llm=False),
    }
)

AGENT_NAMES: tuple[str, ...] = tuple(AGENTS)
LLM_AGENT_NAMES: tuple[str, ...] = tuple(name for name, entry in AGENTS.items() if entry.needs_llm)


def make_agent(name: str, llm: LLM | None = None, **kwargs: Any) -> Agent:
    """The agent called `name`; LLM agents need `llm`, extra keywords go to the constructor
    (e.g. `max_tokens`, `example`, or `seed` for "random")."""
    entry = AGENTS[name]
    if not entry.needs_llm:
        return entry.factory(**entry.flags, **kwargs)
    if llm is None:
        raise ValueError(f"agent {name!r} needs an llm")
    return entry.factory(llm, **entry.flags, **kwargs)
