"""On-policy rounds (DAgger): the current adapter plays, the expert labels every call from where it is.

Trained only on the expert's own states, a model never sees the states its own mistakes lead to. Here
the real STANDARD and HiAgent play generated training problems with the current model (their real
prompts, free decoding; the agent acts on the model's reply), and `RelabelLLM` records every call the
agent makes with the reply the expert would give from the state the episode is in:
- an action call: the next action of an optimal plan from the current state (`expert.StateExpert`);
  for HiAgent with `Subgoal: <line>` first when the expert's first subgoal from this state (cut and named
  as the teacher cuts them, `agents.segments.segment_plan`) is not the subgoal the agent is working on;
- a summary call (HiAgent finishing a subgoal): `Met: yes|no` (yes when the facts the subgoal made true,
  named as the teacher names subgoals, restate its line) and the facts it made true;
- at a dead end (no plan from the state) the call is kept with `reply: null` and `label: "dead-end"`;
  training skips such calls.
The agent's own earlier, possibly wrong, actions stay in the prompts, so the model learns to recover.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from ..agents import make_agent, prompts
from ..agents.hiagent import HiAgent, same_subgoal
from ..agents.segments import name_progress, segment_plan
from ..llm import LLM, Completion, Message
from .expert import StateExpert
from .teacher import MAX_SUBGOAL_STEPS

__all__ = ["LabelledCall", "RelabelLLM", "StateTrail", "play_labelled"]


@dataclass(frozen=True)
class LabelledCall:
    messages: tuple[Message, ...]
    reply: str | None  # the expert's reply from this state; None at a dead end
    label: str  # "expert" or "dead-end"
    purpose: str  # "action" or "summary"
    stop: tuple[str, ...]
    max_tokens: int
    model_reply: str  # what the model wrote (the agent acted on it)
    state: int


class StateTrail(gym.Wrapper):
    """Keeps the state after every step: `states[k]` is the state after step k (`states[0]` at reset)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.states: list[int] = []

    def reset(self, **kwargs: Any):
        result = self.env.reset(**kwargs)
        self.states = [self.env.unwrapped.state]
        return result

    def step(self, action: str):
        result = self.env.step(action)
        self.states.append(self.env.unwrapped.state)
        return result


class RelabelLLM:
    """An `LLM`: the model answers and the agent acts on that; each call is recorded with the expert's
    reply from the episode's current state. `agent` is set once the agent exists."""

    def __init__(self, model: LLM, expert: StateExpert, trail: StateTrail) -> None:
        self.model = model
        self.expert = expert
        self.trail = trail
        self.agent: Any = None
        self.calls: list[LabelledCall] = []

    @property
    def model_id(self) -> str:
        return self.model.model_id

    @property
    def in_context_example(self) -> bool:
        return bool(getattr(self.model, "in_context_example", True))

    def count_tokens(self, text: str) -> int:
        return self.model.count_tokens(text)

    def chat(
        self, messages: Sequence[Message], *, max_tokens: int = 128, stop: Sequence[str] = (), temperature: float = 0.0
    ) -> Completion:
        purpose = "action" if tuple(stop) == tuple(prompts.ACTION_STOP) else "summary"
        state = self.trail.unwrapped.state
        reply = self._action_label(state) if purpose == "action" else self._summary_label(state)
        completion = self.model.chat(messages, max_tokens=max_tokens, stop=stop, temperature=temperature)
        self.calls.append(LabelledCall(tuple(messages), reply, "expert" if reply is not None else "dead-end",
                                       purpose, tuple(stop), int(max_tokens), completion.text, state))
        return completion

    def _action_label(self, state: int) -> str | None:
        plan = self.expert.plan_from(state)
        if not plan:  # a dead end (the goal ends the episode before any call)
            return None
        world = self.expert.world
        action = world.action_text(plan[0])
        if not isinstance(self.agent, HiAgent):
            return f" {action}"
        first = segment_plan(world, plan, MAX_SUBGOAL_STEPS, same=same_subgoal, start=state)[0].text
        current = self.agent.wm.current
        if current is not None and current.text and same_subgoal(current.text, first):
            return f"Action: {action}"
        return f"Subgoal: {first}\nAction: {action}"

    def _summary_label(self, state: int) -> str:
        subgoal = self.agent.wm.subgoals[-1]  # the one being finished
        steps = [p.step for p in subgoal.env_pairs]
        states = self.trail.states
        before = states[steps[0] - 1] if steps else state
        last = states[steps[-1] - 1] if steps else state
        named, summary = name_progress(self.expert.world, before, last, state)
        met = "yes" if subgoal.text and same_subgoal(subgoal.text, named) else "no"
        return f"Met: {met}\nSummary: {summary}"


def play_labelled(
    env: gym.Env, model: LLM, agent_name: str, expert: StateExpert, seed: int = 0
) -> tuple[Any, list[LabelledCall]]:
    """Play one episode of `agent_name` with `model` on `env`; (its record, every call with its label)."""
    trail = StateTrail(env)
    llm = RelabelLLM(model, expert, trail)
    agent = make_agent(agent_name, llm)
    llm.agent = agent
    record = agent.run(trail, seed=seed)
    return record, llm.calls
