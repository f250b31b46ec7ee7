"""The settings that choose (`admissible`, `state-choice`; `settings.py`) on the agents' side: which replies
a turn may choose among, and the pick.

In these settings (never those of a comparison with published numbers) the model does not write its
action: every action valid in the current state, and every meta-action the prompt offers (`check valid
actions` and `look around` where the setting offers them, `retrieve(k)` for HiAgent's finished subgoals,
`impossible` where the environment offers it), becomes one candidate reply, and the model's own
log-probability of each reply ranks them (`CandidateScorer.choose`). Whole replies, not a token
mask: a mask commits to the first tokens the model likes (`check ...`) and cannot back out of them.

A candidate is ` <action>` and a line end: the line end makes the score that of the complete action, so
`stack b1 on b2` is not credited with the probability of a longer action it starts. What the agent's
format puts before the action (the reply's start) is part of the prompt the candidates are scored after:
nothing for STANDARD (its cue ends on `Action:`), and for HiAgent `Action:`, after the subgoal line when
the model starts a new subgoal. That subgoal is free text the agent cannot enumerate, so HiAgent lets the
model write it first (`free_head`): the model decodes freely up to its `Action:` label, and the subgoal
it wrote (if any) is kept as `Subgoal: <text>` on its own line.

How candidates are ranked is a rule of the setting (`CHOICE_SCORES`): the summed log-probability of the
candidate's tokens (`sum`), which favours short candidates, or that sum divided by the candidate's tokens
(`token-mean`) or words (`word-mean`, TWOSOME's default), which does not.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..llm import EMPTY_COMPLETION, Choice, Message, candidate_scorer
from ..records import HEAD_PURPOSE, LLMCall
from ..registry import Registry
from ..unsolvable.claim import IMPOSSIBLE_ACTION
from . import prompts
from .parsing import parse_reply

__all__ = [
    "CHECK_ACTIONS",
    "CHOICE_SCORES",
    "LOOK_AROUND",
    "SUBGOAL_HEAD",
    "Pick",
    "candidate_actions",
    "choice_scores",
    "choose_action",
    "free_head",
]

CHECK_ACTIONS = "check valid actions"
LOOK_AROUND = "look around"
#: Stop sequences of HiAgent's free head: its action label, or an invented observation.
HEAD_STOP = ("Action:", *prompts.ACTION_STOP)
#: The reply's start a chosen subgoal's candidates are scored after (`Setting.subgoals == "chosen"`).
SUBGOAL_HEAD = "Subgoal:"


def _word_count(text: str) -> int:
    return max(1, len(text.split()))


#: How candidates are ranked, by name: (summed log-probability, tokens, the candidate's text) -> score.
CHOICE_SCORES: Registry[Callable[[float, int, str], float]] = Registry("choice score", {
    "sum": lambda logprob, tokens, text: logprob,
    "token-mean": lambda logprob, tokens, text: logprob / max(1, tokens),
    "word-mean": lambda logprob, tokens, text: logprob / _word_count(text),
})


def choice_scores(choice: Choice, candidates: Sequence[str], rule: str) -> list[float]:
    """Each candidate's score under `rule` (a `CHOICE_SCORES` name), from the backend's sums and lengths."""
    score = CHOICE_SCORES[rule]
    lengths = choice.lengths or (1,) * len(candidates)
    return [score(lp, n, text) for lp, n, text in zip(choice.logprobs, lengths, candidates)]


@dataclass(frozen=True)
class Pick:
    """The chosen action, the reply it was chosen as (what the agent parses), and the call's record."""

    action: str
    reply: str
    call: LLMCall


def candidate_actions(
    env: Any, *, look_around: bool, retrievable: Sequence[int] = (), describe: bool = True
) -> list[str]:
    """Every reply a turn may choose among, in a fixed order: the valid actions of the current state (with
    `impossible` where offered), then the meta-actions the prompt offers (`check valid actions` and `look
    around` only when `describe`)."""
    base = getattr(env, "unwrapped", env)
    actions = list(base.valid_actions())
    describing = [CHECK_ACTIONS, *([LOOK_AROUND] if look_around else [])] if describe else []
    meta = [*describing, *(f"retrieve({k})" for k in retrievable)]
    if IMPOSSIBLE_ACTION in actions:  # keep the claim with the other meta-actions, after the world's actions
        actions.remove(IMPOSSIBLE_ACTION)
        meta.append(IMPOSSIBLE_ACTION)
    return list(dict.fromkeys(actions + meta))


def free_head(llm: Any, messages: list[Message], max_tokens: int) -> tuple[str, LLMCall]:
    """HiAgent's head: the model writes freely up to its `Action:` label; returns `Action:`, after a
    `Subgoal: <text>` line when what it wrote states a subgoal, and the record of that call."""
    completion = llm.chat(messages, max_tokens=max_tokens, stop=HEAD_STOP, temperature=0.0)
    if completion.error == EMPTY_COMPLETION and completion.finish_reason == "stop":
        # the model wrote `Action:` at once: no new subgoal this step, a head's ordinary answer
        completion = dataclasses.replace(completion, error=None)
    subgoal = None if completion.error else parse_reply(completion.text).subgoal
    head = f"Subgoal: {subgoal}\nAction:" if subgoal else "Action:"
    call = LLMCall(
        purpose=HEAD_PURPOSE,
        prompt_tokens=int(completion.prompt_tokens),
        completion_tokens=int(completion.completion_tokens),
        latency_s=float(completion.latency_s),
        raw_output=completion.text if completion.error is None else (completion.raw or ""),
        error=completion.error,
        cached_tokens=completion.cached_tokens,
        prompt_eval_s=completion.prompt_eval_s,
        generation_s=completion.generation_s,
    )
    return head, call


def choose_action(
    llm: Any, messages: list[Message], actions: Sequence[str], head: str = "", rule: str = "sum",
    score_all: bool = False,
) -> Pick:
    """The action whose candidate ` <action>\\n`, after the reply's start `head`, ranks first under `rule`
    (ties: the first in order). The backend is given the rule, so it scores only what decides the pick (the
    others' log-probabilities are recorded as bounds, `"exact": false`); `score_all` scores every candidate
    whole (to replay other rules on the record). A call the backend cannot score (a prompt over its context)
    comes back as an error pick with no action. The call's record keeps every candidate's log-probability
    and tokens."""
    scorer = candidate_scorer(llm)
    candidates = [f" {action}\n" for action in actions]
    start = time.perf_counter()
    try:
        choice = scorer.choose(messages, candidates, prefix=head, rank=None if score_all else CHOICE_SCORES[rule])
    except ValueError as exc:
        call = LLMCall("action", 0, 0, time.perf_counter() - start, "", error=str(exc), candidates=len(actions))
        return Pick("", "", call)
    if score_all:  # the backend ranked by the sum: rank the whole scores by `rule` here
        scores = choice_scores(choice, candidates, rule)
        best = max(range(len(actions)), key=lambda i: (scores[i], -i))
    else:  # ranked by `rule` already; the pruned candidates' figures are bounds, not scores to re-rank
        best = choice.index
    reply = f"{head} {actions[best]}"
    exact = choice.exact or (True,) * len(actions)
    call = LLMCall(
        purpose="action",
        prompt_tokens=choice.prompt_tokens,
        completion_tokens=choice.scored_tokens,
        latency_s=choice.latency_s,
        raw_output=reply,
        cached_tokens=choice.cached_tokens,
        candidates=len(actions),
        logprob=round(choice.logprobs[best], 4),
        candidate_scores=[
            {"action": action, "logprob": round(lp, 4), "tokens": n, **({} if whole else {"exact": False})}
            for action, lp, n, whole in zip(actions, choice.logprobs, choice.lengths or (), exact)
        ] or None,
    )
    return Pick(actions[best], reply, call)
