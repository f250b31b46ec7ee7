"""Plain records that cross module boundaries: one agent step, one episode.

They are what evaluation stores (one JSON line per episode) and what metrics are computed from, so every
field is JSON-serialisable and nothing here depends on an agent's or backend's internals.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

__all__ = ["LLMCall", "StepRecord", "EpisodeRecord"]


@dataclass
class LLMCall:
    """One model call made during a step (the action call, a summary call, ...)."""

    purpose: str  # "action" | "summary" | "retrieve" ...
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    raw_output: str
    error: str | None = None
    raw_output_length: int | None = None  # the reply's length when the stored raw_output was cut
    # the admissible-action setting only: how many actions the model chose among, and the summed token
    # log-probability of the reply it chose
    candidates: int | None = None
    logprob: float | None = None


@dataclass
class StepRecord:
    """One environment step (one agent turn); retrievals and summaries that preceded it are in `calls`."""

    index: int  # 1-based environment step
    action: str  # the text sent to the environment
    observation: str
    valid: bool  # info["action_valid"]
    action_kind: str  # info["action_kind"]
    progress: float  # best progress after this step
    prompt_tokens: int = 0  # of the call that produced the action (context size)
    context_tokens: int | None = None  # of the in-trial context (goal, observations, memory) of that call
    completion_tokens: int = 0
    latency_s: float = 0.0
    raw_output: str | None = None
    raw_output_length: int | None = None  # the reply's length when the stored raw_output was cut
    subgoal_index: int | None = None
    subgoal: str | None = None
    memory_view: str | None = None  # the working memory as it was sent to the model
    calls: list[LLMCall] = field(default_factory=list)

    @property
    def total_prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls) if self.calls else self.prompt_tokens


@dataclass
class EpisodeRecord:
    agent: str
    domain: str
    split: str
    problem: str
    seed: int | None
    success: bool
    progress: float
    steps: int
    optimal_length: int | None
    run_time_s: float
    goal: str
    initial_observation: str
    flags: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    trajectory: list[StepRecord] = field(default_factory=list)
    memory: list[dict[str, Any]] = field(default_factory=list)  # e.g. HiAgent's subgoals and summaries
    error: str | dict[str, Any] | None = None  # a failure outside the agent's control: {kind, message, count}
    solvable: bool | None = None  # False: a stored proof says no plan exists; None: unknown (older records)
    claimed_impossible: bool = False  # the episode ended on the agent's `impossible`

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeRecord:
        data = dict(data)
        data["trajectory"] = [
            StepRecord(**{**s, "calls": [LLMCall(**c) for c in s.get("calls", [])]}) for s in data.get("trajectory", [])
        ]
        return cls(**data)

    @classmethod
    def from_stored(cls, line: dict[str, Any]) -> EpisodeRecord:
        """A record from a stored run line: the record's fields plus the run's own keys (`meta`: split,
        step budget...), which are left out. `from_dict` stays strict, so a misspelt field still fails."""
        names = {f.name for f in fields(cls)}
        return cls.from_dict({k: v for k, v in line.items() if k in names})
