"""Agents: STANDARD and HiAgent (with its ablations) over an LLM, and scripted baselines.

`make_agent(name, llm)` builds any of `AGENT_NAMES` from the `AGENTS` registry (`registry.py`); the
scripted ones ("expert", "random") are imported only when asked for and need no model.
"""

from __future__ import annotations

from .base import Agent
from .hiagent import HiAgent
from .llm_agent import LLMAgent
from .prompts import PROMPTS_VERSION
from .registry import AGENT_NAMES, AGENTS, LLM_AGENT_NAMES, AgentEntry, make_agent
from .settings import DEFAULT_SETTING, SETTINGS, Setting, get_setting
from .standard import StandardAgent

__all__ = [
    "AGENTS",
    "AGENT_NAMES",
    "DEFAULT_SETTING",
    "LLM_AGENT_NAMES",
    "PROMPTS_VERSION",
    "SETTINGS",
    "Agent",
    "AgentEntry",
    "HiAgent",
    "LLMAgent",
    "Setting",
    "StandardAgent",
    "get_setting",
    "make_agent",
]
