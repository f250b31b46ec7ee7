"""Scripted episodes of a capable model, played through the stand-in server.

They let a test or a script measure what HiAgent's working memory saves on replies a strong model would
write, without a model: the actions are the optimal plan and the subgoals the ones a person would state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from ..agents import make_agent
from ..llm import Completion, Message, OpenAICompatibleLLM
from ..records import EpisodeRecord
from .fake_openai import FakeOpenAIServer

__all__ = ["BLOCKSWORLD_PROBLEM1_PLAN", "TYREWORLD_P03", "ReplayedModel", "Scenario", "play_scenario"]

#: Blocksworld problem1's optimal plan in the default wording (b1 on the table, b3 on b1, b2 on b3; goal: b3
#: on b2, b2 on b1): the replies of the scripted models in the agent, trial and insight tests and demo.
BLOCKSWORLD_PROBLEM1_PLAN = (
    "unstack b2 from b3",
    "putdown b2",
    "unstack b3 from b1",
    "putdown b3",
    "pickup b2",
    "stack b2 on b1",
    "pickup b3",
    "stack b3 on b2",
)


@dataclass(frozen=True)
class Scenario:
    """One problem, its plan cut into subgoals (statement, actions), and the summary of each finished one."""

    env_id: str
    problem: str
    subgoals: tuple[tuple[str, tuple[str, ...]], ...]
    summaries: tuple[str, ...]

    @property
    def actions(self) -> list[str]:
        return [a for _, actions in self.subgoals for a in actions]

    def replies(self, agent: str) -> list[str]:
        """The action calls' replies: STANDARD writes the action; HiAgent states each subgoal at its start."""
        if agent == "standard":
            return [f"Action: {a}" for a in self.actions]
        return [f"Subgoal: {text}\nAction: {a}" if i == 0 else f"Action: {a}"
                for text, actions in self.subgoals for i, a in enumerate(actions)]


#: Tyreworld p03 (30 actions, the optimal plan) in six subgoals: the tools, the nuts, the spare wheels,
#: then one hub after another by ordinal.
TYREWORLD_P03 = Scenario(
    "pddlworlds/Tyreworld-v0",
    "p03",
    (
        ("Open the boot and fetch the spare wheels and the tools", (
            "open boot", "fetch r3 from boot", "fetch r2 from boot", "fetch r1 from boot",
            "fetch wrench from boot", "fetch jack from boot")),
        ("Loosen the nuts on every hub", (
            "loosen nuts3 on the-hub3", "loosen nuts1 on the-hub1", "loosen nuts2 on the-hub2")),
        ("Inflate the spare wheels", ("fetch pump from boot", "inflate r3", "inflate r2", "inflate r1")),
        ("Change the wheel on the first hub", (
            "jack up the-hub1", "undo nuts1 on the-hub1", "remove w1 from the-hub1", "put away w1 in boot",
            "put r1 on the-hub1", "jack down the-hub1")),
        ("Change the wheel on the second hub", (
            "jack up the-hub2", "undo nuts2 on the-hub2", "remove w2 from the-hub2", "put away w2 in boot",
            "put r2 on the-hub2", "jack down the-hub2")),
        ("Change the wheel on the third hub", (
            "jack up the-hub3", "undo nuts3 on the-hub3", "remove w3 from the-hub3", "put away w3 in boot",
            "put r3 on the-hub3")),
    ),
    (
        "The boot is open; you have r1, r2, r3, the wrench and the jack.",
        "The nuts on the-hub1, the-hub2 and the-hub3 are loose.",
        "r1, r2 and r3 are inflated.",
        "r1 is on the-hub1 and w1 is in boot.",
        "r2 is on the-hub2 and w2 is in boot.",
    ),
)


class ReplayedModel:
    """An LLM whose replies are given, played by an embedded model that pays for each one
    (`EmbeddedLLM.replay`: the prompt evaluated, the reply's tokens decoded one by one), so a scripted
    episode's model time is what that model would spend writing those replies."""

    def __init__(self, model: Any, respond: Callable[[list[dict[str, str]]], str]) -> None:
        self.model = model
        self.respond = respond

    @property
    def model_id(self) -> str:
        return f"{self.model.model_id} (replies given)"

    def count_tokens(self, text: str) -> int:
        return int(self.model.count_tokens(text))

    def chat(self, messages: Sequence[Message], *, max_tokens: int = 128, stop: Sequence[str] = (),
             temperature: float = 0.0) -> Completion:
        reply = self.respond([{"role": m.role, "content": m.content} for m in messages])
        return self.model.replay(messages, reply)


def play_scenario(scenario: Scenario, agent: str, model: Any = None) -> EpisodeRecord:
    """Play `agent` ("standard", "hiagent", ...) on the scenario's replies; summary calls get the scenario's
    summaries in order. Through the stand-in server by default; given an embedded `model`, that model pays
    for every reply (`ReplayedModel`), so the record's times are that model's for these replies."""
    replies, summaries = scenario.replies(agent), list(scenario.summaries)

    def respond(messages: list[dict]) -> str:
        if messages[-1]["content"].endswith("Met:"):
            return f"Met: yes\nSummary: {summaries.pop(0)}"
        return replies.pop(0)

    env = gym.make(scenario.env_id, step_budget=len(scenario.actions))
    if model is not None:
        return make_agent(agent, ReplayedModel(model, respond), example=False).run(
            env, options={"problem": scenario.problem})
    with FakeOpenAIServer(respond) as srv:
        llm = OpenAICompatibleLLM("fake-model", base_url=srv.base_url, api_key="x", max_retries=1)
        return make_agent(agent, llm, example=False).run(env, options={"problem": scenario.problem})
