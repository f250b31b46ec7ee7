#!/usr/bin/env python3
"""Measure the public AgentBoard problems (and, beside them, a held-out set or a generator family): sizes,
initial arrangements, goal forms and optimal plan lengths, per domain.

Every property comes from the parsed problem (`pddlworlds.generators.profiles`); public optimal lengths
come from `planners/index.csv`, a held-out set's from the lengths it pins (`--solve` computes them with
A*+LM-cut instead, as the pinned ones were).

    python scripts/measure_public_problems.py                        # the 60 public problems
    python scripts/measure_public_problems.py --set public-like      # and the public-like held-out set
    python scripts/measure_public_problems.py --set public-like --solve --timeout 120
    python scripts/measure_public_problems.py --family public-like --draws 200 --no-public  # training draws
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

#: The properties summarised per domain (besides the optimal length).
SUMMARY = {
    "blocksworld": ("blocks", "init_towers", "goal_towers", "goal_atoms", "goal_predicates", "goal_true_at_start"),
    "gripper": ("balls", "robby", "balls_in_rooma", "to_carry", "goal_true_at_start"),
    "tyreworld": ("hubs", "hubs_with_goal", "full_hubs", "goal", "patterns", "start"),
    "barman": ("cocktails", "shots", "goal_kind", "first_shots", "distinct_recipes", "standard_start"),
}


def _distribution(values: list[Any]) -> str:
    counts = Counter(values)
    return ", ".join(f"{v}: {counts[v]}" for v in sorted(counts, key=lambda v: (str(type(v)), v)))


def _lengths(values: list[int | None]) -> str:
    known = [v for v in values if v is not None]
    if not known:
        return "none known"
    within = sum(v <= 30 for v in known)
    return (f"{sorted(known)}; median {statistics.median(known):g}, mean {statistics.mean(known):.1f}, "
            f"<= 30 steps: {within} of {len(known)}" + (f" ({len(values) - len(known)} unknown)" if len(known) < len(values) else ""))


def _report(title: str, domain: str, rows: list[tuple[str, dict[str, Any], int | None]]) -> None:
    print(f"\n## {domain}: {title} ({len(rows)} problems)")
    keys = SUMMARY[domain]
    print("| problem | " + " | ".join(keys) + " | optimal |")
    print("|---|" + "---|" * (len(keys) + 1))
    for name, profile, length in rows:
        print(f"| {name} | " + " | ".join(str(profile[k]) for k in keys) + f" | {'?' if length is None else length} |")
    for key in keys:
        print(f"- {key}: {_distribution([p[key] for _, p, _ in rows])}")
    print(f"- optimal length: {_lengths([length for _, _, length in rows])}")


def _solve(domain: str, path: Path, timeout: float) -> int | None:
    from pddlworlds.planning import solve
    from pddlworlds.worlds.catalogue import domains

    plan = solve(domains()[domain].domain_file, path, "fd-opt", timeout=timeout)
    return len(plan.actions) if plan.status.name == "SOLVED_OPTIMALLY" else None


def _family_draws(domain: str, family: str, draws: int) -> None:
    """What training draws of `family` give: problem 1 of seeds 1..draws per level, those equal (up to
    renaming) to a shipped, held-out or earlier draw dropped as `train data` drops them."""
    from pddlworlds.generators import LEVELS
    from pddlworlds.generators.profiles import profile_file
    from pddlworlds.training.problems import exclude_shipped, generate_training_problems

    with tempfile.TemporaryDirectory() as tmp:
        drawn = generate_training_problems(tmp, seeds=range(1, draws + 1), per_level=1, domain_names=[domain],
                                           family=family)
        kept, dropped = exclude_shipped(drawn)
        print(f"\n## {domain}: training draws of family {family!r} ({draws} a level, {len(drawn)} in all)")
        for level in LEVELS:
            mine = [p for p in kept if p.level == level]
            # what a dropped draw equals: a public (agentboard) or other shipped split, a held-out set, or a
            # draw kept before it in this run (train)
            equal = Counter(v.split("/")[1] for k, v in dropped.items() if f"-{level}-" in k)
            print(f"- {level}: {len(mine)} new and distinct; dropped as equal to a problem of: "
                  f"{_distribution(list(equal.elements())) or 'none'}")
        rows = [(p.name, profile_file(domain, p.path), None) for p in kept]
    for key in SUMMARY[domain]:
        print(f"- kept, {key}: {_distribution([p[key] for _, p, _ in rows])}")


def main(argv: list[str] | None = None) -> int:
    from pddlworlds.generators import DOMAINS, FAMILIES
    from pddlworlds.generators.profiles import profile_file, public_profiles
    from pddlworlds.planning.store import optimal_length
    from pddlworlds.training.problems import HELD_OUT_SETS, held_out_problems

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default="all")
    parser.add_argument("--set", dest="held_out_set", default=None, choices=list(HELD_OUT_SETS),
                        help="also measure this held-out set, with its pinned optimal lengths")
    parser.add_argument("--solve", action="store_true", help="compute the held-out set's lengths with A*+LM-cut")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per planner call with --solve")
    parser.add_argument("--family", default=None, choices=list(FAMILIES),
                        help="also measure training draws of this family (problem 1 of seeds 1, 2, ... a level; "
                             "no planning): how many are new and distinct, and what the others equal")
    parser.add_argument("--draws", type=int, default=100, help="draws per level with --family")
    parser.add_argument("--no-public", action="store_true", help="leave the public problems' tables out")
    args = parser.parse_args(argv)
    domain_names = list(DOMAINS) if args.domains == "all" else args.domains.split(",")
    unknown = [d for d in domain_names if d not in DOMAINS]
    if unknown:
        parser.error(f"--domains: unknown {', '.join(unknown)}; domains: all, {', '.join(DOMAINS)}")
    warnings.simplefilter("ignore")
    print(f"# Public problems, measured ({time.strftime('%Y-%m-%d')})")
    for domain in domain_names:
        if not args.no_public:
            public = [(n, p, optimal_length(domain, n, "agentboard")) for n, p in public_profiles(domain).items()]
            _report("public (agentboard)", domain, public)
        if args.held_out_set:
            spec = HELD_OUT_SETS.get(args.held_out_set)
            pinned = spec.lengths.get(domain, ())
            with tempfile.TemporaryDirectory() as tmp:
                problems = held_out_problems(tmp, [domain], args.held_out_set)
                rows = []
                for i, p in enumerate(problems):
                    length = _solve(domain, p.path, args.timeout) if args.solve else (
                        pinned[i] if i < len(pinned) else None)
                    rows.append((p.name, profile_file(domain, p.path), length))
            _report(f"held-out set {args.held_out_set!r}" + (" (lengths solved now)" if args.solve else ""), domain, rows)
        if args.family:
            _family_draws(domain, args.family, args.draws)
    return 0


if __name__ == "__main__":
    sys.exit(main())
