#!/usr/bin/env python3
"""Write each domain's fixed in-context example: pddl_domains/<domain>/example.pddl and example.json.

The problem is one the generator makes with a seed of its own (`--seed`, default 7), so it is in no split
(checked against every problem of every split); the first easy (then medium) problem whose breadth-first
plan cuts into at least three subgoals is taken. The transcript is that plan, played in the environment
in both observation modes, with the deliberate detours the agents must see once:

- subgoal 1 starts with an invalid action (a later plan step, not applicable yet) and its error, then
  `check valid actions`, then the listed first plan step and the rest of the first subgoal;
- subgoal 2 reaches for the last subgoal too early: one invalid action, met: no, and a summary that
  says why nothing changed;
- subgoal 3 starts with `retrieve(1)`; the rest of the plan follows, one subgoal per segment.

Usage::

    python scripts/make_examples.py                 # all shipped domains
    python scripts/make_examples.py --domains barman
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pddlworlds.agents.examples import EXAMPLE_FILE, MODES, problem_body
from pddlworlds.agents.segments import segment_plan
from pddlworlds.files import atomic_write
from pddlworlds.generators import GENERATORS, LEVELS, generate_problem
from pddlworlds.generators.ladders import draw_candidate, ladder_generators
from pddlworlds.registration import make_env
from pddlworlds.worlds.catalogue import Domain, domains
from pddlworlds.worlds.search import shortest_plan

EXAMPLE_PROBLEM = "example.pddl"
MIN_SUBGOALS = 3
MAX_PLAN = 24


def split_bodies(domain: Domain) -> dict[str, str]:
    """Body -> 'split/problem' for every problem of every split of `domain`."""
    out = {}
    for split in domain.splits():
        for problem in domain.problems(split):
            out[problem_body(domain.problem_file(problem, split).read_text())] = f"{split}/{problem}"
    return out


def candidates(domain: Domain, seed: int) -> Iterator[tuple[str, str]]:
    """(name, text) of the problems to try, easy first: the four public worlds' levelled generator (easy and
    medium), or a catalogue world's ladder generator (its bands' draws with this seed)."""
    ladder = ladder_generators()
    for level in LEVELS:  # the hard band only where the easier ones give no fitting problem (short plans)
        for index in range(1, 21):
            if domain.name in GENERATORS and level != LEVELS[-1]:
                generated = generate_problem(domain.name, level, index, seed=seed)
                yield generated.name, generated.text
            elif domain.name in ladder and domain.name not in GENERATORS:
                drawn = draw_candidate(ladder[domain.name], level, index, seed)
                yield f"{level}-candidate-{index}", drawn.text


def fitting_problems(domain: Domain, seed: int, folder: Path) -> Iterator[tuple[str, list[int], list[Any]]]:
    """(problem name, plan, segments) of each fitting generated problem outside every split, in turn; each is
    written to `folder`'s example.pddl before it is yielded."""
    taken = split_bodies(domain)
    for name, text in candidates(domain, seed):
        if problem_body(text) in taken:
            continue
        path = folder / EXAMPLE_PROBLEM
        atomic_write(path, f"; The in-context example's problem (scripts/make_examples.py --seed {seed}); in no split.\n"
                     + text)
        env = make_env(domain.domain_file, path, text_file=domain.text_file, max_episode_steps=None)
        env.reset()
        world = env.unwrapped.world
        plan = shortest_plan(world.task)
        if plan is None or len(plan) > MAX_PLAN:
            continue
        segments = segment_plan(world, plan)
        if len(segments) >= MIN_SUBGOALS:
            yield name, plan, segments


def failure_summary(action: str, observation: str) -> str:
    """'Cannot X: the reason.' -> 'Nothing changed: X failed because the reason.'"""
    head, sep, reason = observation.partition(": ")
    if sep and head.startswith("Cannot "):
        return f"Nothing changed: {action} failed because {reason.rstrip('.')}."
    return f"Nothing changed: {observation}"


def transcript(world: Any, plan: list[int], segments: list[Any]) -> list[dict[str, Any]]:
    """The subgoals with their action texts (observations are filled in by playing them)."""
    task = world.task
    texts = [world.action_text(a) for a in plan]
    first = segments[0]
    state = task.init
    for a in plan[: first.end]:
        state = task.apply(state, a)
    applicable_now = set(task.applicable(task.init))
    early = next(texts[i] for i, a in enumerate(plan) if a not in applicable_now)
    applicable_later = set(task.applicable(state))
    last = segments[-1]
    premature = next(texts[i] for i in range(last.start, len(plan)) if plan[i] not in applicable_later)
    subgoals = [
        {"subgoal": first.text, "met": True, "summary": first.summary,
         "steps": [early, "check valid actions", *texts[first.start : first.end]]},
        {"subgoal": last.text, "met": False, "summary": None, "steps": [premature]},
    ]
    for number, seg in enumerate(segments[1:]):
        steps: list[Any] = [{"action": "retrieve(1)", "retrieved": 1}] if number == 0 else []
        subgoals.append({"subgoal": seg.text, "met": True, "summary": seg.summary,
                         "steps": steps + texts[seg.start : seg.end]})
    return subgoals


def play(domain: Domain, path: Path, subgoals: list[dict[str, Any]]) -> dict[str, Any]:
    """Play the transcript in the environment in every observation mode; the example file's content."""
    first: dict[str, str] = {}
    played = [dict(sub, steps=[]) for sub in subgoals]
    for mode in MODES:
        env = make_env(domain.domain_file, path, text_file=domain.text_file, observation_mode=mode,
                       max_episode_steps=None)
        observation, info = env.reset()
        first[mode], goal = observation, info["goal"]
        for sub, out in zip(subgoals, played):
            for j, step in enumerate(sub["steps"]):
                if isinstance(step, dict):  # a retrieval: no environment step
                    if mode == MODES[0]:
                        out["steps"].append(step)
                    continue
                observation, _, _, _, info = env.step(step)
                if mode == MODES[0]:
                    out["steps"].append({"action": info["action"] or step, "observation": {}})
                out["steps"][j]["observation"][mode] = observation
                if sub["summary"] is None and mode == MODES[0]:
                    out["summary"] = failure_summary(step, observation)
        if not info["success"]:
            raise SystemExit(f"{domain.name}: the example does not reach the goal in mode {mode}")
    if first["full"] != first["changes"]:
        raise SystemExit(f"{domain.name}: the first observation differs between modes")
    return {"goal": goal, "observation": first["full"], "subgoals": played}


def build(domain: Domain, seed: int, out: Path) -> str:
    for name, plan, segments in fitting_problems(domain, seed, out):
        env = make_env(domain.domain_file, out / EXAMPLE_PROBLEM, text_file=domain.text_file, max_episode_steps=None)
        env.reset()
        try:
            subgoals = transcript(env.unwrapped.world, plan, segments)
        except StopIteration:  # no plan step is inapplicable early enough to show a detour: the next problem
            continue
        break
    else:
        raise SystemExit(f"{domain.name}: no generated problem with seed {seed} fits (>= {MIN_SUBGOALS} subgoals "
                         "and a step to try too early)")
    body = play(domain, out / EXAMPLE_PROBLEM, subgoals)
    data = {
        "source": f"{domain.name} generated {name} seed {seed} (example.pddl; in no split)",
        "problem_file": EXAMPLE_PROBLEM,
        "made_by": "scripts/make_examples.py",
        **body,
    }
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domains", default="all", help="comma-separated domain names (default: all)")
    parser.add_argument("--seed", type=int, default=7, help="generator seed of the example problems")
    args = parser.parse_args(argv)
    known = domains()
    names = list(known) if args.domains == "all" else [d.strip() for d in args.domains.split(",")]
    for name in names:
        if name not in known:
            parser.error(f"unknown domain {name!r}; domains: {', '.join(known)}")
        domain = known[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            text = build(domain, args.seed, domain.folder)
        atomic_write(domain.folder / EXAMPLE_FILE, text)
        data = json.loads(text)
        steps = sum(len(s["steps"]) for s in data["subgoals"])
        print(f"{name}: {data['source']}: {len(data['subgoals'])} subgoals, {steps} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
