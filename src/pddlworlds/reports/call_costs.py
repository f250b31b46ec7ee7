"""Where a model's time goes, per agent and domain: calls per step, seconds per step split into prompt
evaluation and generation, and the share of the action calls' prompt tokens the backend took from its
cache. This is where a memory's price shows (HiAgent's summary and retrieval calls, the prompt re-evaluated
after a fold) and whether prompt caching pays; the report prints it whenever the backend timed its calls.

Figures are pooled over a group's episodes (total seconds over total steps, cached tokens over prompt
tokens), so long episodes weigh by their length, as they cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..records import HEAD_PURPOSE
from ..scoring.metrics import Recordish, as_record
from .paper import agent_label
from .report_tables import cell, domain_label, md_table

__all__ = ["ACTION_PURPOSES", "CallCosts", "call_costs", "call_costs_section"]

#: The calls that write the agent's next move (a retrieval is HiAgent's action call answered in memory);
#: the cached share is theirs, as summary calls start from another prompt.
ACTION_PURPOSES = ("action", "retrieve")


@dataclass
class CallCosts:
    """Totals of one group of episodes; the per-step figures are properties. A timing is None when any call
    of the group lacks it (a backend that does not split its latency), never a partial sum."""

    episodes: int = 0
    steps: int = 0
    calls: int = 0
    summary_calls: int = 0
    run_time_s: float = 0.0
    prompt_eval_s: float | None = 0.0
    generation_s: float | None = 0.0
    action_prompt_tokens: int = 0
    action_cached_tokens: int | None = 0
    #: tokens the model evaluated over every call: each prompt whole plus what it wrote or scored (the
    #: paper's condition, no cache), and with the cached part of each prompt left out (None: a call of the
    #: group does not say what its backend took from the cache). A scored pick that continues its step's
    #: head (HiAgent in a choosing setting: the subgoal line written, then the action scored after it) is the
    #: rest of one call, as the paper's HiAgent writes subgoal and action in one reply: without a cache only
    #: what its prompt adds to the head's prompt and reply counts
    evaluated_tokens: int = 0
    evaluated_with_cache: int | None = 0

    def add(self, record: Recordish) -> None:
        r = as_record(record)
        self.episodes += 1
        self.steps += len(r.trajectory)
        self.run_time_s += float(r.run_time_s)
        for step in r.trajectory:
            head = None
            for call in step.calls:
                self.calls += 1
                self.summary_calls += call.purpose == "summary"
                self.prompt_eval_s = _plus(self.prompt_eval_s, call.prompt_eval_s)
                self.generation_s = _plus(self.generation_s, call.generation_s)
                written = call.prompt_tokens + call.completion_tokens
                continues = head.prompt_tokens + head.completion_tokens if head is not None else 0
                self.evaluated_tokens += written - min(continues, call.prompt_tokens)
                head = call if call.purpose == HEAD_PURPOSE else None
                cached = None if call.cached_tokens is None else written - call.cached_tokens
                self.evaluated_with_cache = _plus(self.evaluated_with_cache, cached)
                if call.purpose in ACTION_PURPOSES:
                    self.action_prompt_tokens += call.prompt_tokens
                    self.action_cached_tokens = _plus(self.action_cached_tokens, call.cached_tokens)

    def per_step(self, total: float | None) -> float | None:
        return None if total is None or not self.steps else total / self.steps

    @property
    def cached_share(self) -> float | None:
        if self.action_cached_tokens is None or not self.action_prompt_tokens:
            return None
        return self.action_cached_tokens / self.action_prompt_tokens

    @property
    def timed(self) -> bool:
        return self.calls > 0 and self.prompt_eval_s is not None

    @property
    def counted(self) -> bool:
        """Whether the group's calls say what the cache saved (so evaluated tokens with it are known)."""
        return self.calls > 0 and self.evaluated_with_cache is not None


def _plus(total: Any, value: Any) -> Any:
    return None if total is None or value is None else total + value


def call_costs(records: Iterable[Recordish]) -> dict[tuple[str, str], CallCosts]:
    """(domain, agent) -> its episodes' costs, and ("all", agent) over every domain."""
    out: dict[tuple[str, str], CallCosts] = {}
    for record in records:
        r = as_record(record)
        for key in ((r.domain, r.agent), ("all", r.agent)):
            out.setdefault(key, CallCosts()).add(r)
    return out


def call_costs_section(records: Sequence[Recordish], agents: Sequence[str], domains: Sequence[str]) -> list[str]:
    """The report's markdown section; empty when no call carries the backend's timings or cache counts."""
    costs = call_costs(records)
    if not any(c.timed or c.counted for c in costs.values()):
        return []
    header = ["Domain", "Agent", "episodes", "calls/step", "summary calls/episode", "s/step",
              "prompt eval s/step", "generation s/step", "action prompt tokens from cache %",
              "tokens evaluated/step, no cache", "tokens evaluated/step, with cache"]
    rows = []
    for domain in [*domains, "all"]:
        for agent in agents:
            c = costs.get((domain, agent))
            if c is None:
                continue
            rows.append([
                "**overall**" if domain == "all" else domain_label(domain), agent_label(agent), str(c.episodes),
                cell(c.per_step(c.calls), 2), cell(c.summary_calls / c.episodes, 2), cell(c.per_step(c.run_time_s), 2),
                cell(c.per_step(c.prompt_eval_s), 2), cell(c.per_step(c.generation_s), 2),
                cell(c.cached_share, 1, 100), cell(c.per_step(c.evaluated_tokens), 0),
                cell(c.per_step(c.evaluated_with_cache), 0),
            ])
    note = (
        "Every model call of a step counted (action, retrieval, summary); seconds per step are the episode's "
        "wall time over its steps, and the model's own time split into prompt evaluation (up to the first "
        "generated token) and generation, pooled over the group's episodes. Cache: the share of the action "
        "and retrieval calls' prompt tokens the backend reused from an earlier prompt (– when it does not "
        "say). Tokens evaluated: every call's prompt and what it wrote or scored, per step; without a cache "
        "each prompt is evaluated whole (the condition of HiAgent's paper; a pick scored after HiAgent's "
        "subgoal line counts as the rest of that call, the paper's one reply), with one the part the backend "
        "kept from the call before is not. Times depend on the machine's load and on --workers."
    )
    return ["## Model calls: where the time goes", "", note, "", md_table(header, rows), ""]
