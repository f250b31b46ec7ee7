"""Wilcoxon signed-rank tests between two agents over paired episodes (same domain, split, problem, seed)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from ..worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS
from .metrics import OVERALL, Recordish, as_record, budget_steps, mean

__all__ = ["MIN_NONZERO_FOR_SIGNIFICANCE", "paired_values", "wilcoxon_all_pairs", "wilcoxon_paired"]


def paired_values(
    records: Iterable[Recordish],
    agent_a: str,
    agent_b: str,
    metric: str = "progress",
    max_steps: int = DEFAULT_MAX_EPISODE_STEPS,
    domain: str | None = None,
) -> list[tuple[tuple[str, str, str, int | None], float, float]]:
    """Episodes of both agents on the same (domain, split, problem, seed): (pair key, value a, value b).

    `metric` is "progress" (PR) or "steps" (budget steps); pairs come sorted by key.
    """
    if metric not in ("progress", "steps"):
        raise ValueError(f"metric must be 'progress' or 'steps', not {metric!r}")
    by_agent: dict[str, dict[tuple, float]] = {agent_a: {}, agent_b: {}}
    for item in records:
        r = as_record(item)
        if r.agent not in by_agent or (domain is not None and r.domain != domain):
            continue
        value = float(r.progress) if metric == "progress" else float(budget_steps(r, max_steps))
        by_agent[r.agent][(r.domain, r.split, r.problem, r.seed)] = value
    a, b = by_agent[agent_a], by_agent[agent_b]
    common = sorted(set(a) & set(b), key=lambda k: tuple("" if x is None else str(x) for x in k))
    return [(k, a[k], b[k]) for k in common]


#: Below this many non-zero differences a two-sided signed-rank p-value cannot reach 0.05 (2/2^5 = 0.0625).
MIN_NONZERO_FOR_SIGNIFICANCE = 6


def wilcoxon_paired(
    records: Iterable[Recordish],
    agent_a: str,
    agent_b: str,
    metric: str = "progress",
    max_steps: int = DEFAULT_MAX_EPISODE_STEPS,
    domain: str | None = None,
) -> dict[str, Any]:
    """Wilcoxon signed-rank test (scipy.stats.wilcoxon, two-sided, zeros dropped) of a against b.

    Always answers: with no pairs, or when every difference is zero, `statistic` and `p_value` are None and
    `note` says why; with fewer than 6 non-zero differences the p-value is given with a note that it
    cannot fall below 0.05.
    """
    pairs = paired_values(records, agent_a, agent_b, metric, max_steps, domain)
    xs = [p[1] for p in pairs]
    ys = [p[2] for p in pairs]
    diffs = [x - y for x, y in zip(xs, ys)]
    nonzero = sum(1 for d in diffs if d != 0)
    result: dict[str, Any] = {
        "agent_a": agent_a,
        "agent_b": agent_b,
        "metric": metric,
        "domain": domain or OVERALL,
        "n_pairs": len(pairs),
        "n_nonzero": nonzero,
        "mean_a": mean(xs),
        "mean_b": mean(ys),
        "mean_diff": mean(diffs),
        "statistic": None,
        "p_value": None,
        "note": "",
    }
    if not pairs:
        result["note"] = "no paired episodes"
        return result
    if nonzero == 0:
        result["note"] = "all paired differences are zero: no evidence of a difference (test undefined)"
        return result
    from scipy.stats import wilcoxon

    test = wilcoxon(xs, ys)
    statistic, p_value = float(test.statistic), float(test.pvalue)
    result["statistic"] = None if math.isnan(statistic) else statistic
    result["p_value"] = None if math.isnan(p_value) else p_value
    if nonzero < MIN_NONZERO_FOR_SIGNIFICANCE:
        result["note"] = f"only {nonzero} non-zero difference(s): p cannot fall below 0.05"
    return result


def wilcoxon_all_pairs(
    records: Iterable[Recordish],
    agents: Sequence[str],
    max_steps: int = DEFAULT_MAX_EPISODE_STEPS,
    domains: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """`wilcoxon_paired` for every pair of `agents`, for PR and steps, overall and per domain in `domains`."""
    records = [as_record(r) for r in records]
    scopes: list[str | None] = [None, *(domains or [])]
    results = []
    for i, a in enumerate(agents):
        for b in agents[i + 1 :]:
            for scope in scopes:
                for metric in ("progress", "steps"):
                    results.append(wilcoxon_paired(records, a, b, metric, max_steps, scope))
    return results
