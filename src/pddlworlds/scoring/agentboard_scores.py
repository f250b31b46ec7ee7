"""AgentBoard's scores, as its PDDL task computes them (hkust-nlp/AgentBoard, agentboard/tasks/pddl.py).

Pure functions over `EpisodeRecord`s, for numbers that sit beside the published AgentBoard and HiAgent
tables. AgentBoard pools: its progress rate, success rate and grounding accuracy are means over every
problem of the run (the four domains together), not means of per-domain means. Per episode:

- progress rate: the environment's last progress value, which under `profile="agentboard"` starts at
  0 and rises only after an action that changed the state (the record's `progress`);
- grounding accuracy: steps whose action was valid over steps taken, where "check valid actions" and
  "look around" count as valid and a failed model call counts as a step.

Records played under our default profile can be scored too, but their progress credits goal conditions
already true at reset, so only records of the AgentBoard profile give AgentBoard's progress rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..records import EpisodeRecord

__all__ = [
    "AgentBoardScores",
    "agentboard_scores",
    "grounding_accuracy",
    "pooled_grounding_accuracy",
    "pooled_progress_rate",
    "pooled_success_rate",
]


@dataclass(frozen=True)
class AgentBoardScores:
    """AgentBoard's three pooled numbers over one set of episodes (fractions in [0, 1])."""

    episodes: int
    progress_rate: float
    success_rate: float
    grounding_accuracy: float


def grounding_accuracy(record: EpisodeRecord) -> float:
    """Valid steps over steps taken in one episode (0.0 for an episode without steps, as AgentBoard's
    count over its one attempted step gives when the model fails at once)."""
    steps = record.trajectory
    return sum(1 for s in steps if s.valid) / len(steps) if steps else 0.0


def _pooled(values: Iterable[float], what: str) -> float:
    kept = [float(v) for v in values]
    if not kept:
        raise ValueError(f"no episodes to compute AgentBoard's {what} from")
    return sum(kept) / len(kept)


def pooled_progress_rate(records: Sequence[EpisodeRecord]) -> float:
    """Mean progress over all episodes, every domain of the split pooled."""
    return _pooled((r.progress for r in records), "progress rate")


def pooled_success_rate(records: Sequence[EpisodeRecord]) -> float:
    """Fraction of all episodes that reached the goal, every domain pooled."""
    return _pooled((1.0 if r.success else 0.0 for r in records), "success rate")


def pooled_grounding_accuracy(records: Sequence[EpisodeRecord]) -> float:
    """Mean of the episodes' grounding accuracies, every domain pooled."""
    return _pooled((grounding_accuracy(r) for r in records), "grounding accuracy")


def agentboard_scores(records: Sequence[EpisodeRecord]) -> AgentBoardScores:
    """All three pooled scores of `records` (say, one agent's episodes over the whole split)."""
    return AgentBoardScores(
        episodes=len(records),
        progress_rate=pooled_progress_rate(records),
        success_rate=pooled_success_rate(records),
        grounding_accuracy=pooled_grounding_accuracy(records),
    )
