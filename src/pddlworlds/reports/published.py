"""A run beside the models AgentBoard published (`pddlworlds.published`): pooled scores, problem by
problem, and progress by step, all over the problems the run played.

Pooling is AgentBoard's (`agentboard_scores`): means over episodes, every domain together. The published
models are pooled over the same problems as the run, so a run of a few problems is compared on those; a
run of all 60 reproduces the leaderboard's numbers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..published import (
    MODELS,
    PUBLISHED_SPLIT,
    PublishedEpisode,
    model_label,
    pooled,
    published_results,
)
from ..records import EpisodeRecord
from ..scoring import metrics as M
from ..scoring.agentboard_scores import agentboard_scores
from ..worlds.grounding import natural_key
from .paper import agent_label

__all__ = [
    "REFERENCE_MODEL",
    "Comparison",
    "ProblemRow",
    "ScoreRow",
    "compare_with_published",
    "label",
    "published_problems",
]

#: The published model each problem of the run is set against.
REFERENCE_MODEL = "gpt-4"


@dataclass(frozen=True)
class ScoreRow:
    """Pooled numbers of one agent of the run or one published model (fractions)."""

    name: str
    published: bool
    episodes: int
    success_rate: float
    progress_rate: float
    grounding_accuracy: float
    curve: list[float] | None  # mean progress after k = 1..max_steps steps; None: steps not recorded


@dataclass(frozen=True)
class ProblemRow:
    """One problem: the published episodes on it and each agent's episodes of the run."""

    domain: str
    problem: str
    optimal: int | None
    published: dict[str, PublishedEpisode]
    solved: dict[str, tuple[int, int]]  # agent -> (episodes solved, episodes)
    progress: dict[str, float]  # agent -> mean progress

    @property
    def published_solved(self) -> int:
        return sum(e.success for e in self.published.values())


@dataclass(frozen=True)
class Comparison:
    """Everything the report's section on the published models shows."""

    problems: list[tuple[str, str]]  # the run's problems that the published models played
    agents: list[str]
    rows: list[ScoreRow]  # the run's agents, then the published models
    problem_rows: list[ProblemRow]
    solved_not_reference: dict[str, list[tuple[str, str]]]  # agent -> solved here, not by GPT-4
    reference_not_solved: dict[str, list[tuple[str, str]]]  # agent -> solved by GPT-4, not here
    max_steps: int
    left_out: list[tuple[str, str]]  # problems of the run outside the published 60


def published_problems() -> set[tuple[str, str]]:
    """The (domain, problem) pairs the published models played."""
    return {(e.domain, e.problem) for e in published_results([REFERENCE_MODEL])[REFERENCE_MODEL]}


def _curve(values: Sequence[Sequence[float]]) -> list[float]:
    return [sum(v[k] for v in values) / len(values) for k in range(len(values[0]))]


def _record_curve(record: EpisodeRecord, max_steps: int) -> list[float]:
    return [M.progress_at(record, k) for k in range(1, max_steps + 1)]


def _published_curve(episodes: Sequence[PublishedEpisode], max_steps: int) -> list[float] | None:
    if any(e.rises is None for e in episodes):
        return None
    return _curve([[e.progress_at(k) or 0.0 for k in range(1, max_steps + 1)] for e in episodes])


def compare_with_published(
    lines: Sequence[dict[str, Any]], agents: Sequence[str], max_steps: int
) -> Comparison | None:
    """The run's episodes (`lines`, faults already left out) set against the published models on the
    problems both played; None when the run played none of them."""
    known = published_problems()
    records = [M.as_record(line) for line in lines if line.get("split", PUBLISHED_SPLIT) == PUBLISHED_SPLIT]
    played = sorted({(r.domain, r.problem) for r in records}, key=lambda p: (p[0], natural_key(p[1])))
    problems = [p for p in played if p in known]
    left_out = [p for p in played if p not in known]
    if not problems:
        return None
    keep = set(problems)
    records = [r for r in records if (r.domain, r.problem) in keep]
    by_agent: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for r in records:
        by_agent[r.agent].append(r)
    agents = [a for a in agents if by_agent.get(a)]
    rows = []
    for agent in agents:
        scores = agentboard_scores(by_agent[agent])
        rows.append(
            ScoreRow(
                agent,
                False,
                scores.episodes,
                scores.success_rate,
                scores.progress_rate,
                scores.grounding_accuracy,
                _curve([_record_curve(r, max_steps) for r in by_agent[agent]]),
            )
        )
    published = published_results(MODELS)
    for model, episodes in published.items():
        chosen = [e for e in episodes if (e.domain, e.problem) in keep]
        scores = pooled(chosen)
        rows.append(
            ScoreRow(
                model,
                True,
                scores.episodes,
                scores.success_rate,
                scores.progress_rate,
                scores.grounding_accuracy,
                _published_curve(chosen, max_steps),
            )
        )
    problem_rows = _problem_rows(problems, records, agents, published)
    ahead: dict[str, list[tuple[str, str]]] = {}
    behind: dict[str, list[tuple[str, str]]] = {}
    for agent in agents:
        ahead[agent] = [
            (p.domain, p.problem)
            for p in problem_rows
            if p.solved[agent][0] > 0 and not p.published[REFERENCE_MODEL].success
        ]
        behind[agent] = [
            (p.domain, p.problem)
            for p in problem_rows
            if p.solved[agent][0] == 0 and p.published[REFERENCE_MODEL].success
        ]
    return Comparison(problems, list(agents), rows, problem_rows, ahead, behind, max_steps, left_out)


def _problem_rows(
    problems: Sequence[tuple[str, str]],
    records: Sequence[EpisodeRecord],
    agents: Sequence[str],
    published: dict[str, list[PublishedEpisode]],
) -> list[ProblemRow]:
    grouped: dict[tuple[str, str, str], list[EpisodeRecord]] = defaultdict(list)
    optimal: dict[tuple[str, str], int | None] = {}
    for r in records:
        grouped[(r.domain, r.problem, r.agent)].append(r)
        if r.optimal_length is not None:
            optimal[(r.domain, r.problem)] = r.optimal_length
    by_problem = {
        model: {(e.domain, e.problem): e for e in episodes} for model, episodes in published.items()
    }
    rows = []
    for domain, problem in problems:
        solved, progress = {}, {}
        for agent in agents:
            mine = grouped.get((domain, problem, agent), [])
            solved[agent] = (sum(r.success for r in mine), len(mine))
            progress[agent] = sum(r.progress for r in mine) / len(mine) if mine else 0.0
        rows.append(
            ProblemRow(
                domain,
                problem,
                optimal.get((domain, problem)),
                {model: by_problem[model][(domain, problem)] for model in published},
                solved,
                progress,
            )
        )
    return rows


def label(row: ScoreRow) -> str:
    """How a row is named in tables and plots."""
    return model_label(row.name) if row.published else agent_label(row.name)
