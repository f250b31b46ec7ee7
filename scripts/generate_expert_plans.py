#!/usr/bin/env python3
"""Build the expert plan files and index rows for every shipped problem (or the splits/domains asked for).

For each problem without a row in ``planners/index.csv``: solve with ``fd-opt`` (A* + LM-cut) under a
timeout; if that fails, fall back to ``fd-sat`` (lama-first) and record ``optimal=false``. Every plan is
validated (replay on the grounded task and unified-planning's PlanValidator, inside
``pddlworlds.planning.solve``) before it is written to ``planners/<domain>/<problem>.plan`` (IPC format)
and its row to the index.

Resumable: a plan file this script wrote carries its index row and a hash of the domain and problem
files in a comment. A problem is planned again only when it has no row and no such file, or when its PDDL
changed since (the hash differs); a row lost from the index (another writer rewrote the index from an
older copy) is restored from the file without planning (``--reindex-only`` does only that). Rows of
other writers (``scripts/prove_optimal.py``) are left alone. Index writes hold an exclusive
``fcntl.flock`` on ``planners/index.csv.lock`` and replace the file atomically.

The public (``agentboard``) split's optimality proofs are made by ``scripts/prove_optimal.py``; run this
one on other splits, e.g.::

    python scripts/generate_expert_plans.py --splits generated --timeout 300 --nice 10
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

from tqdm import tqdm

from pddlworlds.planning import (
    get_planner,
    parse_plan,
    plan_file,
    planner_version,
    read_index,
    replay,
    resolve_target,
    solve,
    update_index,
    world_of,
    write_plan_file,
)
from pddlworlds.worlds.catalogue import domains, get_domain
from pddlworlds.worlds.grounding import natural_key
from pddlworlds.worlds.pddl import ignore_normalisation_warnings

ROW_TAG = "pddlworlds-index-row: "
PROOF = "A* with admissible heuristic LM-cut finished; plan validated (replay and unified-planning)"


def tasks(split_names: list[str] | None, domain_names: list[str] | None) -> list[tuple[str, str, str]]:
    out = []
    for name, domain in domains().items():
        if domain_names and name not in domain_names:
            continue
        for split in domain.splits():
            if split_names and split not in split_names:
                continue
            out.extend((name, split, problem) for problem in domain.problems(split))
    return out


def pddl_hash(domain: str, split: str, problem: str) -> str:
    """sha256 of the domain and problem files, as the plan was made for them."""
    d = get_domain(domain)
    digest = hashlib.sha256(d.domain_file.read_bytes() + b"\0" + d.problem_file(problem, split).read_bytes())
    return digest.hexdigest()


def our_plan_file(domain: str, split: str, problem: str) -> tuple[dict[str, str], str] | None:
    """(index row, PDDL hash) from a plan file this script wrote for this problem, or None."""
    path = plan_file(domain, problem)
    if not path.is_file():
        return None
    for line in path.read_text().splitlines():
        if line.startswith("; " + ROW_TAG):
            meta = json.loads(line[len("; " + ROW_TAG):])
            row = meta.get("row", meta)  # the first version of this script stored the bare row, no hash
            if (row.get("domain"), row.get("split"), row.get("problem")) == (domain, split, problem):
                return row, meta.get("pddl_sha256", "")
    return None


def row_from_plan_file(domain: str, split: str, problem: str) -> dict[str, str] | None:
    """The index row a plan file of ours carries, if made for the current PDDL and still reaching the goal."""
    found = our_plan_file(domain, split, problem)
    if found is None or found[1] != pddl_hash(domain, split, problem):
        return None
    row = found[0]
    world = world_of(resolve_target(domain, problem, split))
    played = replay(world, parse_plan(plan_file(domain, problem).read_text()), world.initial_state)
    if not played.goal or str(len(played.indices or ())) != row.get("length"):
        return None
    return row


def index_row(domain: str, split: str, problem: str, plan, config, optimal: bool, notes: str) -> dict[str, str]:
    """The index row of one planner outcome, in `INDEX_COLUMNS` order (plan files carry it as JSON)."""
    return {"domain": domain, "split": split, "problem": problem,
            "length": str(plan.length) if plan.solved else "", "optimal": str(optimal).lower(),
            "planner": planner_version(config), "method": config.label, "solve_time_s": f"{plan.time_s:.1f}",
            "notes": notes}


def plan_one(domain: str, split: str, problem: str, timeout: float, sat_timeout: float, nice: int,
             memory_mb: int | None) -> dict[str, str]:
    """fd-opt, else fd-sat; the plan file is written only for a solved problem."""
    config, optimal = get_planner("fd-opt"), True
    plan = solve(domain, problem, config, timeout=timeout, split=split, nice=nice, memory_mb=memory_mb)
    if plan.solved:
        notes = [f"{PROOF}; fd-opt in {plan.time_s:.1f}s"]
    else:
        notes = [f"fd-opt: {plan.status.value} after {plan.time_s:.0f}s (limit {timeout:.0f}s)"]
        if plan.status.value == "unsolvable":
            return index_row(domain, split, problem, plan, config, False, notes[0] + ": " + plan.message)
        config, optimal = get_planner("fd-sat"), False
        plan = solve(domain, problem, config, timeout=sat_timeout, split=split, nice=nice, memory_mb=memory_mb)
        if not plan.solved:
            notes.append(f"fd-sat: {plan.status.value} after {plan.time_s:.0f}s: {plan.message}")
            return index_row(domain, split, problem, plan, config, False, "; ".join(notes))
        notes.append("length is an upper bound from fd-sat (lama-first); plan validated")
    row = index_row(domain, split, problem, plan, config, optimal, "; ".join(notes))
    tag = "optimal" if optimal else "not proven optimal"
    meta = {"row": row, "pddl_sha256": pddl_hash(domain, split, problem)}
    write_plan_file(domain, problem, plan.actions, [f"{tag}; fast downward {config.label}", ROW_TAG + json.dumps(meta)])
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", nargs="*", help="only these splits (default: every split)")
    parser.add_argument("--domains", nargs="*", help="only these domains (default: every domain)")
    parser.add_argument("--timeout", type=float, default=300.0, help="fd-opt wall-clock seconds per problem")
    parser.add_argument("--sat-timeout", type=float, default=300.0, help="fd-sat fallback seconds per problem")
    parser.add_argument("--nice", type=int, default=10, help="niceness of the planner processes")
    parser.add_argument("--memory-mb", type=int, default=8000, help="address-space limit of the planner processes")
    parser.add_argument("--reindex-only", action="store_true",
                        help="only restore missing index rows from this script's plan files; plan nothing")
    args = parser.parse_args(argv)
    ignore_normalisation_warnings()

    index = {(r["domain"], r["split"], r["problem"]): r for r in read_index()}
    todo, restored, have = [], [], 0
    for t in sorted(tasks(args.splits, args.domains), key=lambda t: (t[1], t[0], natural_key(t[2]))):
        row = row_from_plan_file(*t)
        if row is not None:  # our plan, for the current PDDL
            if {k: index.get(t, {}).get(k, "") for k in row} != row:
                restored.append(row)
            else:
                have += 1
        elif t in index and our_plan_file(*t) is None and (index[t].get("length") or index[t].get("notes")):
            have += 1  # another writer's row (e.g. the optimality prover's)
        else:
            todo.append(t)  # nothing yet, or our plan was made for PDDL that has changed since
    if restored:
        update_index(restored)
        print(f"restored {len(restored)} index rows from plan files", file=sys.stderr)
    if args.reindex_only:
        print(f"{len(todo)} problems need planning (no row, or the PDDL changed)", file=sys.stderr)
        return 0

    start = time.perf_counter()
    solved = optimal = 0
    bar = tqdm(todo, unit="problem")
    for domain, split, problem in bar:
        bar.set_description(f"{domain}/{split}/{problem}")
        row = plan_one(domain, split, problem, args.timeout, args.sat_timeout, args.nice, args.memory_mb)
        update_index([row])
        solved += bool(row["length"])
        optimal += row["optimal"] == "true"
        if row["optimal"] != "true":
            tqdm.write(f"{domain}/{split}/{problem}: {row['notes']}")
    print(f"{len(todo)} planned ({solved} solved, {optimal} optimal) in {time.perf_counter() - start:.0f}s; "
          f"{len(restored)} restored; {have} already indexed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
