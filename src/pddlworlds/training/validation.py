"""An adapter measured on the held-out problems: how rounds and checkpoints are chosen.

The held-out problems (`problems.HELD_OUT`) are generated, never trained on, and never a shipped one, so
the public problems stay for the shipped version only. Each agent plays each problem once (30 steps,
free decoding unless a setting is given, the adapter's prompt profile); per episode: success, progress (best so far), executability
(valid steps over steps), loops (steps that return the world to a state it was already in) and seconds
per step. The episodes are played by `pddlworlds.evaluation` on the set laid out as domain folders
(`held_out_domains`) and read back from its run folder as rows of those figures (`held_out_rows`, which
replays each episode for its loops). `summarize` aggregates per agent and domain, and per agent over all
domains; `compare` sets two
adapters' episodes side by side, problem by problem, with the tests that say whether a difference on so few
problems is more than chance.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from statistics import mean
from typing import Any

from ..files import atomic_write
from ..worlds.catalogue import domains
from .onpolicy import StateTrail
from .problems import held_out_problems

__all__ = [
    "compare",
    "count_returns",
    "episode_level",
    "held_out_domains",
    "held_out_rows",
    "replay_states",
    "scored_candidates",
    "summarize",
]


def count_returns(states: Sequence[int]) -> int:
    """Steps whose state differs from the one before and was already visited (`states[0]`: the start)."""
    seen = {states[0]} if states else set()
    returns = 0
    for before, after in pairwise(states):
        if after != before and after in seen:
            returns += 1
        seen.add(after)
    return returns


def held_out_domains(
    root: str | Path, domain_names: Iterable[str], set_name: str = "standard"
) -> tuple[str, dict[str, list[str]]]:
    """Lay the held-out set `set_name` out under `root` as a folder of domain folders (each shipped domain's
    own files, its problems as split `held-out-<set>`), so that `pddlworlds.evaluation` plays them by name
    (`RunPlan.domains_root`) and a resume finds the same files; (split, domain -> problem names in the
    set's order). Writing it again writes the same bytes."""
    split = f"held-out-{set_name}"
    root = Path(root)
    names: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        problems = held_out_problems(tmp, domain_names, set_name)
        for problem in problems:
            folder = root / problem.domain
            if problem.domain not in names:
                shipped = domains()[problem.domain].folder
                folder.mkdir(parents=True, exist_ok=True)
                for item in sorted(shipped.iterdir()):  # the domain, its texts and example; not its problems
                    if item.is_file():
                        atomic_write(folder / item.name, item.read_bytes())
                names[problem.domain] = []
            atomic_write(folder / "problems" / split / f"{problem.name}.pddl", problem.path.read_bytes())
            names[problem.domain].append(problem.name)
    return split, names


def replay_states(env: Any, line: Mapping[str, Any]) -> list[int]:
    """The states an episode of a run folder went through (`[0]`: the start), its actions replayed in `env`
    (one made by `registration.make_domain_env` for its domain); ValueError when the replay disagrees with
    the record (an action the record calls valid and the environment refuses, or the reverse)."""
    trail = StateTrail(env)
    trail.reset(seed=line.get("seed"), options={"problem": line["problem"]})
    for number, step in enumerate(line.get("trajectory") or [], start=1):
        *_, info = trail.step(step["action"])
        if bool(info.get("action_valid")) != bool(step.get("valid")):
            raise ValueError(f"{line['agent']} {line['domain']}/{line['problem']}: replaying its actions, step "
                             f"{number} is {'' if info.get('action_valid') else 'in'}valid, the record says otherwise")
    return trail.states


def held_out_rows(lines: Iterable[Mapping[str, Any]], domains_root: str | Path | None) -> list[dict[str, Any]]:
    """The episodes of a run folder (`pddlworlds.evaluation`'s lines, those stopped by a fault left out) as
    held-out rows, the figures `summarize` and `compare` read: success, progress, steps, valid steps, loops
    (counted on the states that replaying the actions gives, `replay_states`: lines store no states) and
    seconds; `candidates` where a step's choice scored them (`scored_candidates`)."""
    from ..artefacts.runs import is_errored
    from ..records import EpisodeRecord
    from ..registration import make_domain_env
    from ..worlds.pddl import normalisation_warnings_ignored

    envs: dict[tuple[str, str, int], Any] = {}
    rows = []
    try:
        for line in lines:
            if is_errored(line):
                continue
            record = EpisodeRecord.from_stored(line)
            meta = line.get("meta")
            budget = meta.get("max_steps") if isinstance(meta, Mapping) else None
            key = (record.domain, record.split, budget if isinstance(budget, int) else len(record.trajectory))
            if key not in envs:  # the episode's own budget: the replay ends where the episode did
                with normalisation_warnings_ignored():
                    envs[key] = make_domain_env(record.domain, domains_root, split=record.split,
                                                step_budget=max(1, key[2]))
            with normalisation_warnings_ignored():
                states = replay_states(envs[key], line)
            candidates = [scored_candidates(s) for s in record.trajectory]
            rows.append({
                "domain": record.domain,
                "level": episode_level({"problem": record.problem}),
                "problem": record.problem,
                "agent": str(line["agent"]),
                "success": bool(record.success),
                "progress": float(record.progress),
                "steps": len(record.trajectory),
                "valid_steps": sum(1 for s in record.trajectory if s.valid),
                "loops": count_returns(states),
                "seconds": round(record.run_time_s, 2),
                "flags": record.flags,
                "actions": [s.action for s in record.trajectory],
                # a setting that chooses: every step's candidates as [action, summed log-probability, tokens],
                # so another ranking rule can be replayed on the same states (`scripts/choice_agreement.py`)
                **({"candidates": candidates} if any(candidates) else {}),
            })
    finally:
        for env in envs.values():
            env.close()
    return rows


def scored_candidates(step: Any) -> list[list[Any]]:
    """A step's candidates as its choice scored them: [action, summed log-probability, tokens] each ([] for a
    step whose action was written, not chosen, or whose choice stopped once its pick was decided: some of its
    log-probabilities are bounds, on which no other rule can be replayed; `eval --score-all-candidates`)."""
    scored = next((c.candidate_scores for c in reversed(step.calls) if c.candidate_scores), None) or []
    if any(c.get("exact") is False for c in scored):
        return []
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
