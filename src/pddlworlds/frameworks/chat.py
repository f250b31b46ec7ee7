"""An episode as a chat: the messages a model reads and writes, shared by the verifiers environment and the
expert's dataset (`pddlworlds export`), so a model fine-tuned on the one plays the other in the words it
was trained on.

The words are STANDARD's (`agents.prompts`): the system message is its instruction and the world's
actions, without the in-context example (a trained model does not need it and it doubles the prompt),
plus the rule offering `impossible` where the episode offers it; the first user message is the problem
(goal and first observation). Each reply is one line `Action: <action>`, read as our agents' replies are
read (`agents.parsing.parse_reply`, which tolerates what models write around it), and each observation
comes back as a user message `Observation: ...`.
"""

from __future__ import annotations

from typing import Any

from ..agents import prompts
from ..agents.parsing import parse_reply
from ..agents.unsolvable_rule import with_impossible_rule
from ..env import StepInfo

__all__ = [
    "CHAT_VERSION", "REPLY_STOP", "action_of", "first_message", "observation_message", "reply_message", "system_message",
]

#: Changes whenever the chat's words change (with `agents.prompts.PROMPTS_VERSION`, which they are made of).
CHAT_VERSION = f"pw-chat-1/{prompts.PROMPTS_VERSION}"
#: Where a reply is cut: before the model goes on to write the observation itself (STANDARD's stop too).
REPLY_STOP: tuple[str, ...] = prompts.ACTION_STOP


def system_message(env: Any) -> str:
    """The instruction for the episode `env` plays (after its reset): STANDARD's, without the example.
    `look around` is offered where the observations show only what changed, as our agents offer it."""
    base = env.unwrapped
    look_around = base.observation_mode == "changes"
    return with_impossible_rule(prompts.standard_system(base.world, None, look_around=look_around), env)


def first_message(observation: str, info: StepInfo) -> str:
    """The problem: the goal and what the reset showed."""
    return prompts.problem_text(info["goal"], observation)


def observation_message(observation: str) -> str:
    """What a step showed, as the user's next message."""
    return f"Observation: {observation}"


def reply_message(action: str) -> str:
    """The reply that takes `action` (the expert's, in the dataset)."""
    return f"Action: {action}"


def action_of(reply: str) -> str:
    """The action a model's reply takes, read as our agents read theirs ("" when it names none: the
    environment refuses it and the step counts, as it does for our agents)."""
    return parse_reply(reply).action
