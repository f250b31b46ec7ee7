"""STANDARD: the model sees the instruction, the example, the goal and the whole history, and writes an action."""

from __future__ import annotations

import gymnasium as gym

from ..env import StepInfo
from ..llm import LLM
from ..records import LLMCall
from . import compact, prompts
from .llm_agent import ERROR_ACTION, Insights, LLMAgent
from .memory import Pair
from .parsing import parse_reply
from .settings import DEFAULT_SETTING

__all__ = ["StandardAgent"]


class StandardAgent(LLMAgent):
    """The whole history of (action, observation) pairs in the prompt; the model writes the next action."""

    name = "standard"

    def __init__(
        self,
        llm: LLM,
        *,
        max_tokens: int = 64,
        example: bool | None = None,
        insights: Insights = None,
        setting: str = DEFAULT_SETTING,
        choice_score: str | None = None,
        score_all: bool = False,
    ):
        super().__init__(
            llm, max_tokens=max_tokens, example=example, insights=insights, setting=setting, choice_score=choice_score,
            score_all=score_all,
        )
        self.history: list[Pair] = []

    def _system_text(self, world) -> str:
        return prompts.standard_system(
            world, self.example, look_around=self.look_around, describe=self.setting.describe_actions
        )

    def _compact_system(self) -> str:
        return compact.standard_system(listed=not self.setting.diffs)

    def reset(self, observation: str, info: StepInfo, env: gym.Env, seed: int | None = None) -> None:
        super().reset(observation, info, env, seed)
        self.history = []

    def memory_text(self) -> str:
        if self.compact:
            return compact.render_pairs(self.history)
        return prompts.render_pairs(self.history)

    def act(self, observation: str, info: StepInfo) -> str:
        cue = compact.standard_cue() if self.compact else prompts.standard_cue()
        memory, messages = self.view(self.memory_text(), observation, cue)
        if self.setting.chooses:  # the cue ends on "Action:": the action follows it directly
            calls: list[LLMCall] = []
            reply, call = self._admissible_reply(messages, calls, head=False)
            self._set_details(call, calls, memory)
            return reply.action
        completion, call = self._call("action", messages, self.max_tokens, prompts.ACTION_STOP)
        action = ERROR_ACTION if completion.error else parse_reply(completion.text).action
        self._set_details(call, [call], memory)
        return action

    def observe(self, action: str, observation: str, info: StepInfo) -> None:
        self.history.append(Pair(action, observation, step=int(info["step"]), change=self.step_change()))
