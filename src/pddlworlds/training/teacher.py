"""The teacher: a scripted stand-in for the model that makes the real agents play the expert's plan.

`TeacherLLM` implements the `LLM` protocol. The real STANDARD and HiAgent agents talk to it exactly as
they talk to a model, so every prompt it records is byte for byte what the agent sends, whatever shape
the prompts take; its replies are the expert's next action, written as the agent expects it. A script
(`EpisodeScript`) fixes the replies beforehand, seeded: the expert plan with a few deliberate detours (an
inapplicable action, whose error the environment reports, then the right one; `check valid actions`,
then a listed action), and for HiAgent the subgoal lines, the summariser's `Met:`/`Summary:` replies and
now and then a `retrieve(k)` of the finished subgoal whose actions share most objects with the next one.

Subgoals are cut as the agents' in-context examples are cut (`agents.segments.segment_plan`, pieces of at
most `MAX_SUBGOAL_STEPS` steps), and consecutive pieces that HiAgent would read as one subgoal
(`hiagent.same_subgoal`) are merged.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..agents import prompts
from ..agents.segments import PlanSegment
from ..llm import Completion, Message
from ..worlds.world import World

__all__ = [
    "MAX_SUBGOAL_STEPS",
    "Detours",
    "EpisodeScript",
    "Move",
    "RecordedCall",
    "ScriptError",
    "TeacherLLM",
    "expert_moves",
    "hiagent_replies",
    "standard_replies",
]

MAX_SUBGOAL_STEPS = 4
CHECK_VALID = "check valid actions"


class ScriptError(RuntimeError):
    """The agent asked for something the script does not have (its prompts or parsing changed)."""


@dataclass(frozen=True)
class Detours:
    """Chances per expert step of a detour before it (seeded); `retrieve` is per subgoal (from the third)."""

    invalid: float = 0.08
    check: float = 0.05
    retrieve: float = 0.25


@dataclass(frozen=True)
class Move:
    """One environment step of the script: `kind` is "expert", "invalid" or "check"."""

    action: str
    kind: str
    plan_step: int  # index of the expert step this move precedes or is


@dataclass
class EpisodeScript:
    """Everything the teacher will say in one episode, in order of calls per purpose."""

    actions: list[str]  # replies to action calls
    summaries: list[str] = field(default_factory=list)  # replies to summary calls


@dataclass(frozen=True)
class RecordedCall:
    messages: tuple[Message, ...]
    reply: str
    purpose: str  # "action" or "summary"
    stop: tuple[str, ...]
    max_tokens: int


def expert_moves(world: World, plan: Sequence[str], rng: random.Random, detours: Detours) -> list[Move]:
    """The plan's steps with seeded detours before some of them."""
    task = world.task
    state = world.initial_state
    moves: list[Move] = []
    for i, text in enumerate(plan):
        roll = rng.random()
        if roll < detours.invalid:
            applicable = set(task.applicable(state))
            blocked = [a for a in range(len(task.actions)) if a not in applicable]
            if blocked:
                moves.append(Move(world.action_text(rng.choice(blocked)), "invalid", i))
        elif roll < detours.invalid + detours.check:
            moves.append(Move(CHECK_VALID, "check", i))
        moves.append(Move(text, "expert", i))
        outcome = world.step(state, text, "full")
        if not outcome.valid:
            raise ScriptError(f"expert step {i + 1} {text!r} is not applicable: {outcome.observation}")
        state = outcome.state
    return moves


def standard_replies(moves: Sequence[Move]) -> EpisodeScript:
    """STANDARD's cue ends on "Action:", so a reply is the action after a space."""
    return EpisodeScript([f" {m.action}" for m in moves])


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9_\-]+", text.lower()))


def hiagent_replies(
    moves: Sequence[Move], segments: Sequence[PlanSegment], plan: Sequence[str], rng: random.Random, detours: Detours
) -> EpisodeScript:
    """HiAgent: `Subgoal: ...` with the first reply of each subgoal, `Action: ...` otherwise; a summary
    for every subgoal that a next one finishes; sometimes a `retrieve(k)` as a subgoal starts."""
    script = EpisodeScript([])
    for number, seg in enumerate(segments, start=1):
        seg_moves = [m for m in moves if seg.start <= m.plan_step < seg.end]
        first = True
        if number >= 3 and rng.random() < detours.retrieve:
            nxt = _words(plan[seg.start])
            scores = [
                (len(nxt & _words(" ".join(plan[s.start : s.end]))), k)
                for k, s in enumerate(segments[: number - 1], start=1)
            ]
            k = max(scores)[1]
            script.actions.append(f"Subgoal: {seg.text}\nAction: retrieve({k})")
            first = False
        for m in seg_moves:
            prefix = f"Subgoal: {seg.text}\n" if first else ""
            script.actions.append(f"{prefix}Action: {m.action}")
            first = False
        if number < len(segments):
            script.summaries.append(f"Met: yes\nSummary: {seg.summary}")
    return script


class TeacherLLM:
    """An `LLM` that replies from an `EpisodeScript` and records every call.

    Action calls are told apart from summary calls by their stop sequences (`prompts.ACTION_STOP`).
    """

    def __init__(self, script: EpisodeScript, model_id: str = "teacher") -> None:
        self.script = script
        self._model_id = model_id
        self._actions = list(script.actions)
        self._summaries = list(script.summaries)
        self.calls: list[RecordedCall] = []

    @property
    def model_id(self) -> str:
        return self._model_id

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    @property
    def finished(self) -> bool:
        """True when every scripted reply was given."""
        return not self._actions and not self._summaries

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 128,
        stop: Sequence[str] = (),
        temperature: float = 0.0,
    ) -> Completion:
        purpose = "action" if tuple(stop) == tuple(prompts.ACTION_STOP) else "summary"
        queue = self._actions if purpose == "action" else self._summaries
        if not queue:
            raise ScriptError(f"the agent made an unscripted {purpose} call (call {len(self.calls) + 1})")
        reply = queue.pop(0)
        self.calls.append(RecordedCall(tuple(messages), reply, purpose, tuple(stop), int(max_tokens)))
        prompt_tokens = sum(self.count_tokens(m.content) for m in messages)
        return Completion(reply, prompt_tokens, self.count_tokens(reply), 0.0)
