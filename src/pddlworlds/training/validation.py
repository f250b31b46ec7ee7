"""An adapter measured on the held-out problems: how rounds and checkpoints are chosen.

The held-out problems (`problems.HELD_OUT`) are generated, never trained on, and never a shipped one, so
the public problems stay for the shipped version only. Each agent plays each problem once (30 steps,
free decoding unless a setting is given, the adapter's prompt profile); per episode: success, progress (best so far), executability
(valid steps over steps), loops (steps that return the world to a state it was already in) and seconds
per step. `summarize` aggregates per agent and domain, and per agent over all domains; `compare` sets two
adapters' episodes side by side, problem by problem, with the tests that say whether a difference on so few
problems is more than chance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from statistics import mean
from typing import Any

from ..agents import get_setting, make_agent
from ..llm import LLM
from ..registration import make_env
from ..worlds.catalogue import domains
from .onpolicy import StateTrail
from .problems import TrainingProblem

__all__ = ["compare", "count_returns", "episode_level", "play_held_out", "summarize"]


def count_returns(states: Sequence[int]) -> int:
    """Steps whose state differs from the one before and was already visited (`states[0]`: the start)."""
    seen = {states[0]} if states else set()
    returns = 0
    for before, after in zip(states, states[1:]):
        if after != before and after in seen:
            returns += 1
        seen.add(after)
    return returns


def play_held_out(
    problem: TrainingProblem,
    agent_name: str,
    llm: LLM,
    max_steps: int = 30,
    *,
    setting: str = "free",
    choice_score: str | None = None,
) -> dict[str, Any]:
    """One episode of `agent_name` on a held-out problem in `setting` (`agents.SETTINGS`); its figures."""
    d = domains()[problem.domain]
    mode = get_setting(setting).observation_mode
    env = StateTrail(make_env(d.domain_file, problem.path, text_file=d.text_file, max_episode_steps=max_steps,
                              **({"observation_mode": mode} if mode else {})))
    options = {"setting": setting} if setting != "free" else {}
    if choice_score is not None:
        options["choice_score"] = choice_score
    agent = make_agent(agent_name, llm, **options)
    record = agent.run(env, seed=0)
    env.close()
    steps = len(record.trajectory)
    return {
        "domain": problem.domain,
        "level": problem.level,
        "problem": problem.name,
        "agent": agent_name,
        "success": bool(record.success),
        "progress": float(record.progress),
        "steps": steps,
        "valid_steps": sum(1 for s in record.trajectory if s.valid),
        "loops": count_returns(env.states),
        "seconds": round(record.run_time_s, 2),
        "flags": record.flags,
        "actions": [s.action for s in record.trajectory],
        # a setting that chooses: every step's candidates as [action, summed log-probability, tokens], so
        # another ranking rule can be replayed on the same states (`scripts/choice_agreement.py`)
        **({"candidates": [scored_candidates(s) for s in record.trajectory]} if get_setting(setting).chooses else {}),
    }


def scored_candidates(step: Any) -> list[list[Any]]:
    """A step's candidates as its choice scored them: [action, summed log-probability, tokens] each ([] for a
    step whose action was written, not chosen)."""
    scored = next((c.candidate_scores for c in reversed(step.calls) if c.candidate_scores), None) or []
    return [[c["action"], c["logprob"], c["tokens"]] for c in scored]


def _figures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    steps = sum(r["steps"] for r in rows)
    return {
        "episodes": len(rows),
        "sr": round(100.0 * mean(r["success"] for r in rows), 1),
        "pr": round(100.0 * mean(r["progress"] for r in rows), 1),
        "executability": round(100 * sum(r["valid_steps"] for r in rows) / steps, 1) if steps else None,
        "loops_per_episode": round(float(mean(r["loops"] for r in rows)), 2),
        "seconds_per_step": round(sum(r["seconds"] for r in rows) / steps, 2) if steps else None,
    }


_LEVEL_IN_NAME = re.compile(r"-(easy|medium|hard)-")


def episode_level(row: dict[str, Any]) -> str | None:
    """The generator level of a held-out episode's problem (`level`, or from its name `h<seed>-<level>-NN`
    for episodes recorded before the field existed); None when neither says."""
    if row.get("level"):
        return str(row["level"])
    match = _LEVEL_IN_NAME.search(str(row.get("problem", "")))
    return match.group(1) if match else None


def _group_keys(row: dict[str, Any]) -> list[str]:
    """The figure rows an episode counts in: its agent and domain, its agent and level (when known), and its
    agent over all domains."""
    level = episode_level(row)
    keys = [f"{row['agent']}/{row['domain']}", f"{row['agent']}/all"]
    return keys if level is None else [*keys, f"{row['agent']}/level:{level}"]


def summarize(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """`agent/domain`, `agent/level:<level>` and `agent/all` -> figures (SR and PR in %, executability in %,
    loops per episode). The level rows matter because the easy problems are smaller than any public one in
    some domains (2-ball Gripper), so an SR carried by them says little about the public set."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        for key in _group_keys(r):
            groups.setdefault(key, []).append(r)
    return {key: _figures(group) for key, group in sorted(groups.items())}


def _paired(pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    from scipy.stats import binomtest, wilcoxon

    only_a = sum(1 for a, b in pairs if a["success"] and not b["success"])
    only_b = sum(1 for a, b in pairs if b["success"] and not a["success"])
    pa, pb = [a["progress"] for a, _ in pairs], [b["progress"] for _, b in pairs]
    nonzero = sum(1 for x, y in zip(pa, pb) if x != y)
    return {
        "pairs": len(pairs),
        "sr_a": round(100.0 * mean(a["success"] for a, _ in pairs), 1),
        "sr_b": round(100.0 * mean(b["success"] for _, b in pairs), 1),
        "solved_only_a": only_a,
        "solved_only_b": only_b,
        # McNemar's exact test: the discordant problems are a fair coin when the adapters are equally good
        "sr_p": round(binomtest(only_a, only_a + only_b, 0.5).pvalue, 3) if only_a + only_b else None,
        "pr_a": round(100.0 * mean(pa), 1),
        "pr_b": round(100.0 * mean(pb), 1),
        "pr_differing": nonzero,
        "pr_p": round(float(wilcoxon(pa, pb).pvalue), 3) if nonzero else None,
    }


def compare(rows_a: Iterable[dict[str, Any]], rows_b: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Two adapters' held-out episodes paired by (agent, domain, problem): per `agent/domain`,
    `agent/level:<level>`, `agent/all` and `all/all`, SR and PR of each, the problems only one of them
    solves with McNemar's exact p-value, and the Wilcoxon signed-rank p-value of progress (None when no
    pair differs). Unpaired episodes are left out; ValueError when no episode pairs."""
    index = {(r["agent"], r["domain"], r["problem"]): r for r in rows_b}
    pairs = [(r, index[key]) for r in rows_a if (key := (r["agent"], r["domain"], r["problem"])) in index]
    if not pairs:
        raise ValueError("the two sets of held-out episodes have no (agent, domain, problem) in common")
    groups: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for a, b in pairs:
        for key in [*_group_keys(a), "all/all"]:
            groups.setdefault(key, []).append((a, b))
    return {key: _paired(group) for key, group in sorted(groups.items())}
