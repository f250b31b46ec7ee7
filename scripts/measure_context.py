#!/usr/bin/env python3
"""Print the mean in-trial context per step of STANDARD and HiAgent on the same scripted actions.

Two episodes: scripted rounds on Blocksworld (below), and a capable model's replies on Tyreworld p03
(`pddlworlds.testing.scenarios.TYREWORLD_P03`: the optimal plan in six subgoals).

A 30-step Blocksworld episode (problem1, `unstack b2 from b3` / `stack b2 on b3` fifteen times) played
through the stand-in OpenAI server; HiAgent opens a new subgoal every 5 steps (6 subgoals) and the
summariser answers with one short sentence. Tokens are counted by the backend's `count_tokens`.

    PYTHONPATH=src python scripts/measure_context.py
"""

from __future__ import annotations

import sys
from statistics import mean

import gymnasium as gym

import pddlworlds  # noqa: F401  (registers the environments)
from pddlworlds.agents import make_agent
from pddlworlds.llm import OpenAICompatibleLLM
from pddlworlds.testing.fake_openai import FakeOpenAIServer
from pddlworlds.testing.scenarios import TYREWORLD_P03, play_scenario

ACTIONS = ["unstack b2 from b3", "stack b2 on b3"] * 15


def replies(name: str) -> list[str]:
    if name == "standard":
        return [f"Action: {a}" for a in ACTIONS]
    return [f"Subgoal: round {i // 5 + 1}\nAction: {a}" if i % 5 == 0 else f"Action: {a}" for i, a in enumerate(ACTIONS)]


def episode(name: str) -> tuple[float, str]:
    queue = replies(name)

    def respond(messages: list[dict]) -> str:
        if messages[-1]["content"].endswith("Met:"):
            return "Met: yes\nSummary: b2 is back on b3."
        return queue.pop(0)

    with FakeOpenAIServer(respond) as srv:
        llm = OpenAICompatibleLLM("fake-model", base_url=srv.base_url, api_key="x", max_retries=1)
        record = make_agent(name, llm).run(gym.make("pddlworlds/Blocksworld-v0", max_episode_steps=len(ACTIONS)),
                                           options={"problem": "problem1"})
    assert [s.action for s in record.trajectory] == ACTIONS and all(s.valid for s in record.trajectory)
    return mean(s.context_tokens for s in record.trajectory), _how_counted()


def _how_counted() -> str:
    """What `OpenAICompatibleLLM.count_tokens` used: tiktoken's encoding when it loads offline, else chars/4."""
    try:
        import tiktoken

        tiktoken.get_encoding("o200k_base")
    except Exception:  # noqa: BLE001 -- any failure to load it offline means chars/4 was used
        return "ceil(chars / 4) (no tiktoken encoding offline)"
    return "tiktoken o200k_base"


def capable_tyreworld() -> tuple[float, float, int]:
    """A capable model's replies on Tyreworld p03 (six subgoals): STANDARD's and HiAgent's mean context
    per step, and the subgoals HiAgent kept."""
    standard = play_scenario(TYREWORLD_P03, "standard")
    hiagent = play_scenario(TYREWORLD_P03, "hiagent")
    return (mean(s.context_tokens for s in standard.trajectory), mean(s.context_tokens for s in hiagent.trajectory),
            len(hiagent.memory))


def main() -> int:
    standard, counted = episode("standard")
    hiagent, _ = episode("hiagent")
    print(f"tokens counted as {counted}")
    print(f"Blocksworld problem1, 6 scripted rounds: standard {standard:.1f} tokens/step; hiagent {hiagent:.1f} "
          f"tokens/step; ratio {hiagent / standard:.3f}")
    standard, hiagent, kept = capable_tyreworld()
    print(f"Tyreworld p03, a capable model's 6 subgoals: standard {standard:.1f} tokens/step; hiagent "
          f"{hiagent:.1f} tokens/step; ratio {hiagent / standard:.3f}; subgoals kept {kept}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
