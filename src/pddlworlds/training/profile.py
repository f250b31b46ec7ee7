"""The agents as the trained adapter knows them: the prompts without the in-context example.

For `pddlworlds eval --agents pddlworlds.training.profile:standard,pddlworlds.training.profile:hiagent`;
the agents record `example: False` in their flags, so the run configuration says which profile ran.
"""

from __future__ import annotations

from ..agents import Agent, make_agent
from ..llm import LLM

__all__ = ["hiagent", "standard"]


def standard(llm: LLM) -> Agent:
    """STANDARD without the in-context example."""
    return make_agent("standard", llm, example=False)


def hiagent(llm: LLM) -> Agent:
    """HiAgent without the in-context example."""
    return make_agent("hiagent", llm, example=False)
