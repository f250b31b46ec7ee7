"""HiAgent's working memory as plain data: subgoals, each holding its action/observation pairs.

How the memory reads in the prompt is decided in `prompts.py` (`render_subgoals`); this module only keeps
the facts: which env steps belong to which subgoal, its summary and whether the summariser judged it met.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Pair", "Subgoal", "WorkingMemory"]


@dataclass
class Pair:
    """One line pair of the working memory.

    `kind` is "env" for an environment step (`step` is its 1-based index) and "retrieval" for a
    `retrieve(k)` (no environment step; `step` is None): its observation is the note the model read,
    and `retrieved` is k when subgoal k's pairs were brought back to their place.
    """

    action: str
    observation: str
    step: int | None = None
    kind: str = "env"
    retrieved: int | None = None  # the subgoal index a successful retrieval brought back
    change: str | None = None  # what the step made true, where the agent reads changes (state-choice)


@dataclass
class Subgoal:
    index: int  # 1-based
    text: str  # "" when the model acted without stating a subgoal
    pairs: list[Pair] = field(default_factory=list)
    finished: bool = False
    summary: str | None = None
    met: bool | None = None  # the summariser's verdict: yes, no, or None for unknown (or not asked)
    retrieved_now: bool = False  # brought back by `retrieve` during the current subgoal: shown in full
    start_facts: str | None = None  # the state it was opened in, as facts (the compact form's diffs variant)
    start_state: int | None = None  # the state it was opened in (where the world judges and summarises it)
    atoms: int = 0  # the goal conditions it names, as a state mask (a chosen subgoal; 0: not known)

    def holds_in(self, state: int) -> bool:
        """Whether the goal conditions it names (`atoms`) all hold in `state`; never for an unknown set."""
        return bool(self.atoms) and state & self.atoms == self.atoms

    @property
    def env_pairs(self) -> list[Pair]:
        return [p for p in self.pairs if p.kind == "env"]

    @property
    def last_observation(self) -> str | None:
        pairs = self.env_pairs
        return pairs[-1].observation if pairs else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "subgoal": self.text,
            "summary": self.summary,
            "met": self.met,
            "steps": [p.step for p in self.env_pairs],
            "retrieved": [p.retrieved for p in self.pairs if p.kind == "retrieval" and p.retrieved is not None],
            "finished": self.finished,
        }


class WorkingMemory:
    """The subgoals of one episode, the last one open."""

    def __init__(self) -> None:
        self.subgoals: list[Subgoal] = []

    @property
    def current(self) -> Subgoal | None:
        if self.subgoals and not self.subgoals[-1].finished:
            return self.subgoals[-1]
        return None

    def finished(self) -> list[Subgoal]:
        return [s for s in self.subgoals if s.finished]

    def open(self, text: str) -> Subgoal:
        """Start a new subgoal (the caller finishes the current one first)."""
        if self.current is not None:
            raise RuntimeError("finish the current subgoal before opening a new one")
        subgoal = Subgoal(len(self.subgoals) + 1, text)
        self.subgoals.append(subgoal)
        return subgoal

    def ensure_current(self) -> Subgoal:
        """The open subgoal; an unnamed one is opened when the model acts without having stated any."""
        return self.current or self.open("")

    def get(self, index: int) -> Subgoal | None:
        return self.subgoals[index - 1] if 1 <= index <= len(self.subgoals) else None

    def to_list(self) -> list[dict[str, Any]]:
        return [s.to_dict() for s in self.subgoals]
