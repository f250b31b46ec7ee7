"""STANDARD: the model sees the instruction, the example, the goal and the whole history, and writes an action.

`LLMAgent` holds what both LLM agents share: the prompt prefix built at `reset`, one model call with its
`LLMCall` record, and the per-step details `Agent.run` stores. A backend error never raises: the step
sends the empty action, which the environment counts as an invalid step.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from ..llm import LLM, Completion, Message
from ..records import LLMCall
from . import prompts
from .base import Agent
from .impossible_rule import with_impossible_rule
from .memory import Pair

__all__ = ["LLMAgent", "StandardAgent", "ERROR_ACTION"]

#: What is sent to the environment when the model gave no usable reply: the env rejects it as empty.
ERROR_ACTION = ""


class LLMAgent(Agent):
    """Shared plumbing of the LLM agents; subclasses write `_system_text` and `act`."""

    def __init__(self, llm: LLM, *, max_tokens: int, example: bool = True):
        self.llm = llm
        self.model = llm.model_id
        self.max_tokens = max_tokens
        self.use_example = example
        self.example: prompts.Example | None = None
        self.system = ""
        self.task = ""
        self._details: dict[str, Any] = {}

    def flags(self) -> dict[str, Any]:
        return {
            "prompts_version": prompts.PROMPTS_VERSION,
            "example": self.use_example,
            "example_problem": self.example.problem if self.example else None,
            "max_tokens": self.max_tokens,
        }

    def reset(self, observation: str, info: dict[str, Any], env: gym.Env, seed: int | None = None) -> None:
        base = env.unwrapped
        world = base.world
        self.look_around = base.observation_mode == "changes"
        self.example = prompts.build_example(base, info["problem"]) if self.use_example else None
        self.system = self._system_text(world)
        self.system = with_impossible_rule(self.system, env)  # the `impossible` action, when offered
        self.task = prompts.problem_text(info["goal"], observation)
        self._details = {}

    def _system_text(self, world) -> str:
        raise NotImplementedError

    def messages(self, memory: str, cue: str) -> list[Message]:
        """The prompt: fixed system text, then the problem, the memory and the cue (in that order)."""
        return [Message("system", self.system), Message("user", f"{self.task}{memory}{cue}")]

    def _call(
        self, purpose: str, messages: list[Message], max_tokens: int, stop: tuple[str, ...] = ()
    ) -> tuple[Completion, LLMCall]:
        completion = self.llm.chat(messages, max_tokens=max_tokens, stop=stop, temperature=0.0)
        call = LLMCall(
            purpose=purpose,
            prompt_tokens=int(completion.prompt_tokens),
            completion_tokens=int(completion.completion_tokens),
            latency_s=float(completion.latency_s),
            raw_output=_raw(completion),
            error=completion.error,
        )
        return completion, call

    def step_details(self) -> dict[str, Any]:
        return dict(self._details)

    def _set_details(self, action_call: LLMCall, calls: list[LLMCall], memory: str, **extra: Any) -> None:
        """Details of the call that produced the action; `calls` has every call of the step."""
        self._details = {
            "prompt_tokens": action_call.prompt_tokens,
            "completion_tokens": action_call.completion_tokens,
            "latency_s": action_call.latency_s,
            "raw_output": action_call.raw_output,
            "memory_view": memory,
            "calls": list(calls),
            **extra,
        }


def _raw(completion: Completion) -> str:
    if completion.error is None:
        return completion.text
    return completion.raw if completion.raw is not None else completion.text


class StandardAgent(LLMAgent):
    """The whole history of (action, observation) pairs in the prompt; the model writes the next action."""

    name = "standard"

    def __init__(self, llm: LLM, *, max_tokens: int = 64, example: bool = True):
        super().__init__(llm, max_tokens=max_tokens, example=example)
        self.history: list[Pair] = []

    def _system_text(self, world) -> str:
        return prompts.standard_system(world, self.example, look_around=self.look_around)

    def reset(self, observation: str, info: dict[str, Any], env: gym.Env, seed: int | None = None) -> None:
        super().reset(observation, info, env, seed)
        self.history = []

    def memory_text(self) -> str:
        return prompts.render_pairs(self.history)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        memory = self.memory_text()
        completion, call = self._call(
            "action", self.messages(memory, prompts.standard_cue()), self.max_tokens, prompts.ACTION_STOP
        )
        action = ERROR_ACTION if completion.error else prompts.parse_reply(completion.text).action
        self._set_details(call, [call], memory)
        return action

    def observe(self, action: str, observation: str, info: dict[str, Any]) -> None:
        self.history.append(Pair(action, observation, step=int(info["step"])))
