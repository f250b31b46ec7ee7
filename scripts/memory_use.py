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
  compares lines (`agents.sameness.same_subgoal`). Reported over every state acted in, and over the states
  where the agent decided (a head call, or a new subgoal), each also up to renaming: a subgoal in facts
  agrees up to renaming when a renaming of the objects that fixes the state, the goal and the actions maps it
  into the planner's segment (`worlds.symmetry.find_renaming`: the planner's plan renamed is as optimal, so
  its tie-break between interchangeable objects, which ball first, does not count against the agent), and on
  an optimal plan: some plan from the state as short as the planner's has the agent's subgoal as its first
  segment (a breadth-first search over the plans that start so, `worlds.search.first_segment_search`, up to
  `--search-cap` states; past it the renaming's verdict stands, and such states are counted as undecided);
  and the states where the planner's segment names no goal condition the world offered the agent there
  (`agents.compact.open_goal_conditions`, less those another open one comes before: 0 when the goal orders
  never leave out what an optimal plan makes true first);
- with STANDARD in the same run: HiAgent's in-trial context per step and wall time per episode as shares of
  STANDARD's (as the report's Context % and Time %), over the problems both played, and each agent's median
  over episodes of seconds per step (an episode's wall time over its steps).

    python scripts/memory_use.py runs/heldout10-subgoals [--json OUT.json] [--no-agreement] [--standard RUN] [--first N]
                                 [--search-cap STATES]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

#: Most states the search for an optimal plan that starts with the agent's subgoal visits, per state judged.
SEARCH_CAP = 100_000


def _agrees_up_to_renaming(world: Any, state: int, agent_text: str, planner_text: str) -> bool:
    """Whether a renaming of the objects that fixes the state, the goal and the actions
    (`worlds.symmetry.find_renaming`) maps each fact of the agent's subgoal onto one of the planner's: the
    agent's subgoal then starts an optimal plan as the planner's does (compact form only)."""
    from pddlworlds.agents.compact import atoms_text, conditions_of
    from pddlworlds.worlds.symmetry import find_renaming

    atoms = {atoms_text([atom]): atom for atom in world.task.atoms}
    named, planned = conditions_of(agent_text), conditions_of(planner_text)
    if not named or not named <= atoms.keys() or not planned <= atoms.keys():
        return False
    return find_renaming(world.task, state, [atoms[t] for t in named], [atoms[t] for t in planned]) is not None


def _on_an_optimal_plan(world: Any, state: int, agent_text: str, length: int, cap: int) -> bool | None:
    """Whether some plan from `state` no longer than `length` (the planner's) has the agent's subgoal as its
    first segment (`worlds.search.first_segment_search`); None when the search passed `cap` states, or the
    task has action costs (its lengths are not its costs)."""
    from dataclasses import replace

    from pddlworlds.agents.compact import atoms_text, conditions_of
    from pddlworlds.worlds.search import first_segment_search

    task = world.task
    if task.lifted.costs:
        return None
    index = {atoms_text([atom]): i for i, atom in enumerate(task.atoms)}
    named = conditions_of(agent_text)
    if not named or not named <= index.keys():
        return False
    found = first_segment_search(replace(task, init=state), sum(1 << index[t] for t in named), cap)
    if found.status == "capped":
        return None
    return found.plan_length is not None and found.plan_length <= length


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
    first: int | None = None, search_cap: int = SEARCH_CAP,
) -> dict[str, Any]:
    """The figures above, per `agent/domain` and `agent/all` (HiAgent rows only for the memory's); `standard`:
    another run whose STANDARD episodes are the reference (one played alone, in a setting where STANDARD plays
    the same; its times are another sitting's); `first`: only each domain's first problems of its split, in
    the order `eval --limit` takes them."""
    from pddlworlds.agents import get_setting
    from pddlworlds.agents.compact import conditions_of, open_goal_conditions
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
        previous = None
        for step in record.trajectory:
            state = int(env.unwrapped.state)
            wanted = _planner_subgoal(world, expert, state, facts) if step.subgoal else None
            decided = step.subgoal != previous or any(c.purpose == HEAD_PURPOSE for c in step.calls)
            previous = step.subgoal
            if wanted is not None:
                not_offered = facts and wanted != "the goal" and not (
                    conditions_of(wanted) & {text for text, _ in open_goal_conditions(world, state)})
                same = _agrees(step.subgoal or "", wanted, facts)
                renamed = same or (facts and _agrees_up_to_renaming(world, state, step.subgoal or "", wanted))
                searched = None if renamed or not facts else _on_an_optimal_plan(
                    world, state, step.subgoal or "", len(expert.plan_from(state) or ()), search_cap)
                optimal = renamed or bool(searched)
                for key in (f"{record.agent}/{record.domain}", f"{record.agent}/all"):
                    rows[key]["judged"] += 1
                    rows[key]["agree"] += same
                    rows[key]["agree_renamed"] += renamed
                    rows[key]["agree_optimal"] += optimal
                    rows[key]["undecided"] += facts and not renamed and searched is None
                    rows[key]["not_offered"] += facts and not_offered
                    if decided:
                        rows[key]["decisions"] += 1
                        rows[key]["decisions_agree"] += same
                        rows[key]["decisions_agree_renamed"] += renamed
                        rows[key]["decisions_agree_optimal"] += optimal
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
                "subgoal_agreement": _share(row["agree"], row["judged"]),
                "subgoal_agreement_up_to_renaming": _share(row["agree_renamed"], row["judged"]) if facts else None,
                "subgoal_agreement_on_an_optimal_plan": _share(row["agree_optimal"], row["judged"]) if facts else None,
                "states_search_undecided": int(row["undecided"]),
                "states_planner_not_offered": int(row["not_offered"]) if facts else None,
                "decisions_judged": int(row["decisions"]),
                "decision_agreement": _share(row["decisions_agree"], row["decisions"]),
                "decision_agreement_up_to_renaming": _share(row["decisions_agree_renamed"], row["decisions"])
                if facts else None,
                "decision_agreement_on_an_optimal_plan": _share(row["decisions_agree_optimal"], row["decisions"])
                if facts else None}
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


def _share(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="a run folder of `pddlworlds eval`")
    parser.add_argument("--min-optimal", type=int, default=8, help="the long problems' least optimal length")
    parser.add_argument("--no-agreement", action="store_true", help="skip the planner's replay")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--standard", type=Path, default=None,
                        help="a run whose STANDARD episodes are the reference (RUN's own are then left out)")
    parser.add_argument("--first", type=int, default=None, help="only each domain's first N problems")
    parser.add_argument("--search-cap", type=int, default=SEARCH_CAP,
                        help="most states the search for an optimal plan starting with the subgoal visits a state")
    args = parser.parse_args(argv)
    try:
        figures = analyse(args.run, min_optimal=args.min_optimal, agreement=not args.no_agreement,
                          standard=args.standard, first=args.first, search_cap=args.search_cap)
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
