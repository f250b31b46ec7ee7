"""Agents: STANDARD and HiAgent (with its ablations) over an LLM, and scripted baselines.

`make_agent(name, llm)` builds any of `AGENT_NAMES`; the scripted ones ("expert", "random") are imported
only when asked for and need no model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Agent
from .hiagent import HIAGENT_CONFIGS, HiAgent
from .prompts import PROMPTS_VERSION
from .standard import StandardAgent

if TYPE_CHECKING:
    from ..llm import LLM

__all__ = ["Agent", "StandardAgent", "HiAgent", "AGENT_NAMES", "LLM_AGENT_NAMES", "PROMPTS_VERSION", "make_agent"]

LLM_AGENT_NAMES: tuple[str, ...] = ("standard", *HIAGENT_CONFIGS)
AGENT_NAMES: tuple[str, ...] = (*LLM_AGENT_NAMES, "expert", "random")


def make_agent(name: str, llm: LLM | None = None, **kwargs: Any) -> Agent:
    """The agent called `name`; LLM agents need `llm`, extra keywords go to the constructor
    (e.g. `max_tokens`, `example`, or `seed` for "random")."""
    if name == "standard":
        return StandardAgent(_need(llm, name), **kwargs)
    if name in HIAGENT_CONFIGS:
        summarize, retrieve, hide_finished = HIAGENT_CONFIGS[name]
        return HiAgent(
            _need(llm, name), summarize=summarize, retrieve=retrieve, hide_finished=hide_finished, **kwargs
        )
    if name == "expert":
        from .scripted import ExpertAgent

        return ExpertAgent(**kwargs)
    if name == "random":
        from .scripted import RandomAgent

        return RandomAgent(**kwargs)
    raise ValueError(f"unknown agent {name!r}; agents: {', '.join(AGENT_NAMES)}")


def _need(llm: LLM | None, name: str) -> LLM:
    if llm is None:
        raise ValueError(f"agent {name!r} needs an llm")
    return llm
