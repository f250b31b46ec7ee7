#!/usr/bin/env python3
"""Check catalogue worlds against their IPC originals: the competition's problems load against our domain
file, a plan found on the original files replays on ours at equal cost, and the two worlds agree along
random walks (the same applicable actions, the same successor states).

The originals come from a checkout of AI-Planning/classical-domains (its `classical/<origin>/api.py` lists
each folder's (domain, problem) pairs); the world's card names its origin folder.

    python scripts/check_origin.py --ipc /path/to/classical-domains/classical logistics sokoban
    python scripts/check_origin.py --ipc ... --all --problems 5 --json origin.json

One line per problem, then a summary; exit 1 when any problem disagrees.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys
import time
from pathlib import Path

from pddlworlds.planning import solve
from pddlworlds.worlds.catalogue import domains, get_domain
from pddlworlds.worlds.pddl import PDDLError, ignore_normalisation_warnings
from pddlworlds.worlds.text import load_templates
from pddlworlds.worlds.world import World


def origin_pairs(folder: Path) -> list[tuple[Path, Path]]:
    """The (domain, problem) files of an IPC folder, as its `api.py` lists them, smallest problem first."""
    api = folder / "api.py"
    text = api.read_text()
    listing = ast.literal_eval(text[text.index("["):])
    pairs = []
    for entry in listing:
        for domain_file, problem_file in entry["problems"]:
            d, p = folder.parent / domain_file, folder.parent / problem_file
            if d.is_file() and p.is_file():
                pairs.append((d, p))
    return sorted(pairs, key=lambda pair: (pair[1].stat().st_size, pair[1].name))


def compare_walks(theirs: World, ours: World, walks: int, steps: int, seed: int) -> str:
    """'' when both worlds list the same applicable actions and reach the same states along seeded random
    walks, else the first difference."""
    rng = random.Random(seed)
    declared = {name for name, _ in ours.lifted.predicates}

    def atoms(world: World, state: int) -> set:
        return {a for a in world.task.true_atoms(state) if a[0] in declared}

    for walk in range(walks):
        s_theirs, s_ours = theirs.initial_state, ours.initial_state
        for step in range(steps):
            a_theirs = {(theirs.task.actions[i].schema, theirs.task.actions[i].args) for i in theirs.task.applicable(s_theirs)}
            a_ours = {(ours.task.actions[i].schema, ours.task.actions[i].args) for i in ours.task.applicable(s_ours)}
            if a_theirs != a_ours:
                return (f"walk {walk} step {step}: applicable actions differ (only theirs: "
                        f"{sorted(a_theirs - a_ours)[:3]}, only ours: {sorted(a_ours - a_theirs)[:3]})")
            t_atoms, o_atoms = atoms(theirs, s_theirs), atoms(ours, s_ours)
            if t_atoms != o_atoms:
                return f"walk {walk} step {step}: states differ ({sorted(t_atoms ^ o_atoms)[:3]})"
            if not a_ours:
                break
            schema, args = rng.choice(sorted(a_ours))
            s_theirs = theirs.task.apply(s_theirs, theirs.task.action_index[(schema, args)])
            s_ours = ours.task.apply(s_ours, ours.task.action_index[(schema, args)])
    return ""


def check_problem(world: str, domain_file: Path, problem_file: Path, args) -> dict:
    record = {"world": world, "problem": problem_file.name, "ok": False}
    start = time.perf_counter()
    try:
        ours = World.load(get_domain(world).domain_file, problem_file, text_file=None)
        theirs = World.load(domain_file, problem_file, text_file=None)
    except PDDLError as exc:
        record["error"] = f"load: {exc}"
        return record
    # our text must read every fact and action of the original problem
    load_templates(ours.lifted, get_domain(world).text_file)
    difference = compare_walks(theirs, ours, args.walks, args.steps, args.seed)
    if difference:
        record["error"] = difference
        return record
    plan = solve(domain_file, problem_file, args.planner, args.plan_timeout, nice=args.nice)
    if not plan.solved:
        record["note"] = f"no plan on the original files within {args.plan_timeout:g} s ({plan.status.value})"
    else:
        state = ours.initial_state
        cost = 0
        for schema, action_args in plan.actions:
            index = ours.action_of(schema, action_args)
            if index is None or not ours.task.is_applicable(state, index):
                record["error"] = f"the original's plan step ({schema} {' '.join(action_args)}) does not apply on ours"
                return record
            cost += ours.task.actions[index].cost
            state = ours.task.apply(state, index)
        if not ours.task.is_goal(state):
            record["error"] = "the original's plan does not reach our goal"
            return record
        if cost != plan.cost:
            record["error"] = f"the original's plan costs {plan.cost} there and {cost} here"
            return record
        record.update(plan_length=plan.length, plan_cost=cost)
    record["ok"] = True
    record["seconds"] = round(time.perf_counter() - start, 2)
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("worlds", nargs="*", help="catalogue worlds (folders with a card.toml)")
    parser.add_argument("--all", action="store_true", help="every world with a card")
    parser.add_argument("--ipc", required=True, type=Path, help="classical-domains' classical/ folder")
    parser.add_argument("--problems", type=int, default=5, help="smallest N problems of each origin (0: all)")
    parser.add_argument("--walks", type=int, default=5)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--planner", default="fd-sat", help="planner on the original files (default fd-sat)")
    parser.add_argument("--plan-timeout", type=float, default=60)
    parser.add_argument("--nice", type=int, default=10)
    parser.add_argument("--json", type=Path, help="write every record here")
    args = parser.parse_args(argv)
    ignore_normalisation_warnings()
    names = [n for n, d in domains().items() if d.card is not None] if args.all else args.worlds
    records, failed = [], 0
    for world in names:
        card = get_domain(world).card
        if card is None:
            print(f"{world}: no card.toml, so no origin to check against", file=sys.stderr)
            failed += 1
            continue
        pairs = origin_pairs(args.ipc / card.origin)
        for domain_file, problem_file in pairs[: args.problems or None]:
            record = check_problem(world, domain_file, problem_file, args)
            records.append(record)
            failed += not record["ok"]
            what = record.get("error") or record.get("note") or (
                f"plan of {record['plan_length']} steps, cost {record['plan_cost']}, replays")
            print(f"{world:14} {card.origin:24} {problem_file.name:34} {'ok ' if record['ok'] else 'BAD'} {what}")
    print(f"{len(records)} problems, {failed} disagreements")
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
