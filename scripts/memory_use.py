#!/usr/bin/env python3
"""How much HiAgent's working memory works in a run: subgoals finished (summarised and folded) an episode,
how its subgoals agree with the planner's, and what the memory costs against STANDARD in the same run.

For each HiAgent episode of a run folder (`pddlworlds eval --out RUN`):
- finished subgoals an episode, over every problem and over those whose optimal plan has `--min-optimal`
  steps or more (8 by default: the problems long enough for a subgoal to finish before the goal), with the
  share the summary judged met, and the head and summary calls an episode;
- subgoal agreement: the episode is replayed on its problem and, at every state it acted in, the planner's
  next segment from there (`training.expert.StateExpert`, cut by `agents.segments.goal_segment`: the goal
  conditions the plan's next stretch makes true) is set against the subgoal the agent acted under; they
  agree when each condition the agent's subgoal names is one the segment makes true. States with no plan (a
  dead end) are left out. A subgoal written in sentences (the full prompt form) is compared as the teacher
  compares lines (`agents.sameness.same_subgoal`);
- with STANDARD in the same run: HiAgent's in-trial context per step and wall time per episode as shares of
  STANDARD's (as the report's Context % and Time %), over the problems both played, and each agent's median
  over episodes of seconds per step (an episode's wall time over its steps).

    python scripts/memory_use.py runs/heldout10-subgoals [--json OUT.json] [--no-agreement] [--standard RUN] [--first N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any


def _agrees(agent_text: str, planner_text: str, facts: bool) -> bool:
    from pddlworlds.agents.compact import conditions_of
    from pddlworlds.agents.sameness import same_subgoal

    if facts:
        named = conditions_of(agent_text)
        return bool(named) and named <= conditions_of(planner_text)
    return same_subgoal(agent_text, planner_text)


def _planner_subgoal(world: Any, expert: Any, state: int, facts: bool) -> str | None:
    """The planner's next subgoal from `state`, named as the teacher names it (None: no plan)."""
    from pddlworlds.agents.segments import goal_segment, goal_segment_facts

    plan = expert.plan_from(state)
    if not plan:
        return None
    return goal_segment_facts(world, plan, state) if facts else goal_segment(world, plan, state).text


def analyse(
    folder: Path, *, min_optimal: int = 8, agreement: bool = True, timeout: float = 60, standard: Path | None = None,
    first: int | None = None,
) -> dict[str, Any]:
    """The figures above, per `agent/domain` and `agent/all` (HiAgent rows only for the memory's); `standard`:
    another run whose STANDARD episodes are the reference (one played alone, in a setting where STANDARD plays
    the same; its times are another sitting's); `first`: only each domain's first problems of its split, in
    the order `eval --limit` takes them."""
    from pddlworlds.agents import get_setting
    from pddlworlds.artefacts.runs import is_errored, read_run
    from pddlworlds.records import HEAD_PURPOSE, EpisodeRecord
    from pddlworlds.registration import make_env
    from pddlworlds.scoring.metrics import context_tokens_per_step
    from pddlworlds.training.expert import StateExpert
    from pddlworlds.worlds.catalogue import get_domain

    run = read_run(folder)
    setting = get_setting(run.config.get("setting") or "free")
    facts = setting.prompt_form == "compact"
    records = [EpisodeRecord.from_stored(line, source=folder) for line in run.lines if not is_errored(line)]
    if not records:
        raise ValueError(f"{folder}: no finished episode")
    if first is not None:
        roots = run.config.get("domains_root")
        records = [r for r in records if r.problem in get_domain(r.domain, roots).problems(r.split)[:first]]
    references = []
    if standard is not None:
        records = [r for r in records if r.agent != "standard"]
        other = read_run(standard)
        references = [r for r in (EpisodeRecord.from_stored(line, source=standard) for line in other.lines
                                  if not is_errored(line)) if r.agent == "standard"]
        references = [r for r in references if any(
            (r.domain, r.problem) == (h.domain, h.problem) for h in records)]
        if not references:
            raise ValueError(f"{standard}: no finished STANDARD episode")
    rows: dict[str, dict[str, Any]] = defaultdict(lambda: defaultdict(float))
    per_step: dict[tuple[str, str, str], tuple[float | None, float]] = {}
    seconds: dict[str, list[float]] = defaultdict(list)
    for record in references:
        per_step[(record.agent, record.domain, record.problem)] = (context_tokens_per_step(record), record.run_time_s)
        seconds[record.agent].append(record.run_time_s / max(1, record.steps))
    for record in records:
        steps = max(1, record.steps)
        per_step[(record.agent, record.domain, record.problem)] = (context_tokens_per_step(record), record.run_time_s)
        seconds[record.agent].append(record.run_time_s / steps)
        if not record.memory:
            continue
        finished = [m for m in record.memory if m.get("finished")]
        calls = [c for s in record.trajectory for c in s.calls]
        long = (record.optimal_length or 0) >= min_optimal
        for key in (f"{record.agent}/{record.domain}", f"{record.agent}/all"):
            row = rows[key]
            row["episodes"] += 1
            row["finished"] += len(finished)
            row["met"] += sum(1 for m in finished if m.get("met"))
            row["head_calls"] += sum(1 for c in calls if c.purpose == HEAD_PURPOSE)
            row["summary_calls"] += sum(1 for c in calls if c.purpose == "summary")
            if long:
                row["long_episodes"] += 1
                row["long_finished"] += len(finished)
        if not agreement:
            continue
        domain = get_domain(record.domain, run.config.get("domains_root"))
        path = domain.problem_file(record.problem, record.split)
        env = make_env(domain.domain_file, path, text_file=domain.text_file, max_episode_steps=None,
                       observation_mode="fluents")
        env.reset()
        world = env.unwrapped.world
        expert = StateExpert(world, Path(domain.domain_file), path, domain.text_file, timeout=timeout)
        for step in record.trajectory:
            state = int(env.unwrapped.state)
            wanted = _planner_subgoal(world, expert, state, facts) if step.subgoal else None
            if wanted is not None:
                same = _agrees(step.subgoal or "", wanted, facts)
                for key in (f"{record.agent}/{record.domain}", f"{record.agent}/all"):
                    rows[key]["judged"] += 1
                    rows[key]["agree"] += same
            env.step(step.action)
    out: dict[str, Any] = {}
    for key, row in sorted(rows.items()):
        n = row["episodes"]
        out[key] = {
            "episodes": int(n),
            "finished_per_episode": round(row["finished"] / n, 3),
            "met_share": round(row["met"] / row["finished"], 3) if row["finished"] else None,
            "long_episodes": int(row["long_episodes"]),
            "finished_per_long_episode": round(row["long_finished"] / row["long_episodes"], 3)
            if row["long_episodes"] else None,
            "head_calls_per_episode": round(row["head_calls"] / n, 3),
            "summary_calls_per_episode": round(row["summary_calls"] / n, 3),
            **({"states_judged": int(row["judged"]),
                "subgoal_agreement": round(row["agree"] / row["judged"], 4) if row["judged"] else None}
               if agreement else {}),
        }
    hiagents = sorted({a for a, _, _ in per_step if a != "standard"})
    for agent in hiagents:
        pairs = [(per_step[k], per_step[("standard", k[1], k[2])]) for k in per_step
                 if k[0] == agent and ("standard", k[1], k[2]) in per_step]
        if not pairs:
            continue
        ctx = [(a[0], b[0]) for a, b in pairs if a[0] is not None and b[0] is not None]
        out[f"{agent}/against-standard"] = {
            "problems": len(pairs),
            "context_share": round(sum(a for a, _ in ctx) / sum(b for _, b in ctx), 4) if ctx else None,
            "time_share": round(sum(a[1] for a, _ in pairs) / sum(b[1] for _, b in pairs), 4),
            "median_step_s": round(statistics.median(seconds[agent]), 3) if seconds[agent] else None,
            "standard_median_step_s": round(statistics.median(seconds["standard"]), 3) if seconds["standard"] else None,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="a run folder of `pddlworlds eval`")
    parser.add_argument("--min-optimal", type=int, default=8, help="the long problems' least optimal length")
    parser.add_argument("--no-agreement", action="store_true", help="skip the planner's replay")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--standard", type=Path, default=None,
                        help="a run whose STANDARD episodes are the reference (RUN's own are then left out)")
    parser.add_argument("--first", type=int, default=None, help="only each domain's first N problems")
    args = parser.parse_args(argv)
    try:
        figures = analyse(args.run, min_optimal=args.min_optimal, agreement=not args.no_agreement,
                          standard=args.standard, first=args.first)
    except (OSError, ValueError) as exc:
        print(f"memory_use.py: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
