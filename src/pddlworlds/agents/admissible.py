"""The admissible-action setting on the agents' side: which replies a turn may choose among, and the pick.

In this setting (`--decoding admissible`, never the setting of a comparison with published numbers) the
model does not write its action: every action valid in the current state, and every meta-action the
prompt offers (`check valid actions`, `look around` where offered, `retrieve(k)` for HiAgent's finished
subgoals, `impossible` where the environment offers it), becomes one candidate reply, and the model's own
log-probability of each whole reply picks one (`CandidateScorer.choose`). Whole replies, not a token
mask: a mask commits to the first tokens the model likes (`check ...`) and cannot back out of them.

A candidate reply is `<head> <action>` and a line end: the line end makes the score that of the complete
action, so `stack b1 on b2` is not credited with the probability of a longer action it starts. The head
is the text the agent's format puts before the action: nothing for STANDARD (its cue ends on `Action:`),
and for HiAgent `Action:`, after the subgoal line when the model starts a new subgoal. That subgoal is
free text the agent cannot enumerate, so HiAgent lets the model write it first (`free_head`): the model
decodes freely up to its `Action:` label, the subgoal it wrote (if any) is kept as
`Subgoal: <text>` on its own line, and the actions are scored after it. The head is the same in every
candidate, so it shifts all scores alike and never changes the pick.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..llm import Message, candidate_scorer
from ..records import LLMCall
from ..unsolvable.claim import IMPOSSIBLE_ACTION
from . import prompts
from .parsing import parse_reply

__all__ = ["CHECK_ACTIONS", "LOOK_AROUND", "Pick", "candidate_actions", "choose_action", "free_head"]

CHECK_ACTIONS = "check valid actions"
LOOK_AROUND = "look around"
#: Stop sequences of HiAgent's free head: its action label, or an invented observation.
HEAD_STOP = ("Action:", *prompts.ACTION_STOP)


@dataclass(frozen=True)
class Pick:
    """The chosen action, the reply it was chosen as (what the agent parses), and the call's record."""

    action: str
    reply: str
    call: LLMCall


def candidate_actions(env: Any, *, look_around: bool, retrievable: Sequence[int] = ()) -> list[str]:
    """Every reply a turn may choose among, in a fixed order: the valid actions of the current state (with
    `impossible` where offered), then the meta-actions the prompt offers."""
    base = getattr(env, "unwrapped", env)
    actions = list(base.valid_actions())
    meta = [CHECK_ACTIONS, *([LOOK_AROUND] if look_around else []), *(f"retrieve({k})" for k in retrievable)]
    if IMPOSSIBLE_ACTION in actions:  # keep the claim with the other meta-actions, after the world's actions
        actions.remove(IMPOSSIBLE_ACTION)
        meta.append(IMPOSSIBLE_ACTION)
    return list(dict.fromkeys(actions + meta))


def free_head(llm: Any, messages: list[Message], max_tokens: int) -> tuple[str, LLMCall]:
    """HiAgent's head: the model writes freely up to its `Action:` label; returns `Action:`, after a
    `Subgoal: <text>` line when what it wrote states a subgoal, and the record of that call."""
    completion = llm.chat(messages, max_tokens=max_tokens, stop=HEAD_STOP, temperature=0.0)
    subgoal = None if completion.error else parse_reply(completion.text).subgoal
    head = f"Subgoal: {subgoal}\nAction:" if subgoal else "Action:"
    call = LLMCall(
        purpose="head",
        prompt_tokens=int(completion.prompt_tokens),
        completion_tokens=int(completion.completion_tokens),
        latency_s=float(completion.latency_s),
        raw_output=completion.text if completion.error is None else (completion.raw or ""),
        error=completion.error,
    )
    return head, call


def choose_action(llm: Any, messages: list[Message], actions: Sequence[str], head: str = "") -> Pick:
    """The action whose reply `<head> <action>\\n` the model finds most probable. A call the backend
    cannot score (a prompt over its context) comes back as an error pick with no action."""
    scorer = candidate_scorer(llm)
    replies = [f"{head} {action}" for action in actions]
    start = time.perf_counter()
    try:
        choice = scorer.choose(messages, [reply + "\n" for reply in replies])
    except ValueError as exc:
        call = LLMCall("action", 0, 0, time.perf_counter() - start, "", error=str(exc), candidates=len(actions))
        return Pick("", "", call)
    reply = replies[choice.index]
    call = LLMCall(
        purpose="action",
        prompt_tokens=choice.prompt_tokens,
        completion_tokens=choice.scored_tokens,
        latency_s=choice.latency_s,
        raw_output=reply,
        candidates=len(actions),
        logprob=round(choice.logprobs[choice.index], 4),
    )
    return Pick(actions[choice.index], reply, call)
