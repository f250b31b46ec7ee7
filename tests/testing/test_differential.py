"""The engine against pymimir and Fast Downward on random small domains (`testing.random_domains`,
`testing.differential`): a seeded few in every run, thousands under `-m heavy` (and
`scripts/differential_check.py`, whose last count docs/engine.md gives)."""

from __future__ import annotations

import collections

import pytest

from pddlworlds.testing.differential import check
from pddlworlds.testing.random_domains import random_task

pytest.importorskip("pymimir", reason="the differential check needs pymimir (the dev extra)")

#: Every feature the generator draws, each of which the quick run must reach.
FEATURES = {
    "negative precondition", "either", "conditional effect", "forall effect", "forall", "exists", "action costs",
    "equality", "derived predicate", "quantified goal", "or", "object of a parent-only type", "imply",
    "two cost effects", "cost by a function", "recursive derived predicate",
}


def test_a_seed_writes_the_same_task() -> None:
    assert random_task(7) == random_task(7) and random_task(7).domain != random_task(8).domain


def test_random_domains_agree_with_pymimir_and_fast_downward() -> None:
    seen: collections.Counter[str] = collections.Counter()
    planned: collections.Counter[str] = collections.Counter()
    for seed in range(40):
        verdict = check(seed, fast_downward=seed in (0, 1, 3, 4))
        assert verdict.disagreement is None, (seed, verdict.disagreement)
        seen.update(verdict.features)
        planned[verdict.fast_downward] += 1
    assert set(seen) == FEATURES
    assert planned["plan replayed"] >= 1 and planned["no plan: agreed"] >= 1


@pytest.mark.heavy
def test_two_thousand_random_domains_agree() -> None:
    for seed in range(1000, 3000):
        verdict = check(seed, fast_downward=seed % 20 == 0)
        assert verdict.disagreement is None, (seed, verdict.disagreement)
