"""Scores of the `impossible` action, as pure functions over episode records (the report's section is
`reports.impossible`).

An episode is a positive when its problem is unsolvable (`EpisodeRecord.solvable is False`) and a
prediction of positive when the agent claimed `impossible`. Per agent, per domain and overall this gives
precision, recall and F1 of the claims (Plancraft's score for its unsolvable tasks), the success rate on
the solvable problems (a false claim ends a solvable episode unsolved), and what the unsolvable episodes
cost before the claim or the end of the budget (steps, and prompt plus completion tokens).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..records import EpisodeRecord

__all__ = [
    "OVERALL",
    "ClaimScores",
    "claim_scores",
    "has_impossible",
    "records_from_lines",
    "score_claims",
    "success_with_and_without",
]

OVERALL = "overall"


@dataclass(frozen=True)
class ClaimScores:
    """Counts and scores of one group of episodes; a score is None where its denominator is 0."""

    true_positives: int  # unsolvable, claimed
    false_positives: int  # solvable, claimed
    false_negatives: int  # unsolvable, not claimed
    true_negatives: int  # solvable, not claimed
    precision: float | None
    recall: float | None
    f1: float | None
    solvable: int  # episodes on solvable problems
    solvable_successes: int  # of which solved
    unsolvable: int
    unsolvable_steps: float | None  # mean steps spent on an unsolvable problem (to the claim or the budget)
    unsolvable_tokens: float | None  # mean prompt + completion tokens spent there

    @property
    def solvable_success_rate(self) -> float | None:
        return self.solvable_successes / self.solvable if self.solvable else None


def _tokens(record: EpisodeRecord) -> int:
    """Prompt plus completion tokens of every model call of the episode (summaries included)."""
    total = 0
    for step in record.trajectory:
        completion = sum(c.completion_tokens for c in step.calls) if step.calls else step.completion_tokens
        total += step.total_prompt_tokens + completion
    return total


def score_claims(records: Iterable[EpisodeRecord]) -> ClaimScores:
    """Precision, recall and F1 of `impossible` claims over `records` (problems of unknown solvability
    count as solvable: only a stored proof makes a problem unsolvable)."""
    tp = fp = fn = tn = solved = n_solvable = 0
    steps: list[int] = []
    tokens: list[int] = []
    for r in records:
        unsolvable = r.solvable is False
        if unsolvable:
            steps.append(r.steps)
            tokens.append(_tokens(r))
            if r.claimed_impossible:
                tp += 1
            else:
                fn += 1
        else:
            n_solvable += 1
            solved += bool(r.success)
            if r.claimed_impossible:
                fp += 1
            else:
                tn += 1
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
    return ClaimScores(tp, fp, fn, tn, precision, recall, f1, n_solvable, solved, len(steps),
                       sum(steps) / len(steps) if steps else None, sum(tokens) / len(tokens) if tokens else None)


def claim_scores(records: Sequence[EpisodeRecord]) -> dict[tuple[str, str], ClaimScores]:
    """(agent, domain) -> scores, with (agent, "overall") over all of an agent's domains."""
    groups: dict[tuple[str, str], list[EpisodeRecord]] = {}
    for r in records:
        groups.setdefault((r.agent, r.domain), []).append(r)
        groups.setdefault((r.agent, OVERALL), []).append(r)
    return {key: score_claims(group) for key, group in groups.items()}


def success_with_and_without(
    offered: Sequence[EpisodeRecord], not_offered: Sequence[EpisodeRecord]
) -> dict[tuple[str, str], tuple[float | None, float | None]]:
    """(agent, domain) -> (SR on solvable problems with the option offered, SR without it), e.g. a run on
    `agentboard-mixed` against one on `agentboard`."""
    a, b = claim_scores(offered), claim_scores(not_offered)
    return {
        key: (a[key].solvable_success_rate if key in a else None, b[key].solvable_success_rate if key in b else None)
        for key in sorted(set(a) | set(b))
    }


def records_from_lines(lines: Iterable[dict[str, Any]]) -> list[EpisodeRecord]:
    """Stored run lines (records plus run metadata) as `EpisodeRecord`s."""
    return [EpisodeRecord.from_stored(line) for line in lines]


def has_impossible(records: Sequence[EpisodeRecord]) -> bool:
    """Whether a run has anything for these scores: an unsolvable problem or a claim."""
    return any(r.solvable is False or r.claimed_impossible for r in records)
