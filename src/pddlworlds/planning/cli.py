"""Command-line front ends of the planner: `pddlworlds plan` and `pddlworlds expert`.

    pddlworlds plan gripper prob01 --planner fd-opt --timeout 60
    pddlworlds plan path/to/domain.pddl path/to/problem.pddl --format json
    pddlworlds plan --domains-root my_domains logistics p01
    pddlworlds expert --domain blocksworld --split agentboard --out expert.jsonl

`add_plan_parsers(subparsers)` adds both commands to an argparse sub-parser set; each sets `func`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..worlds.catalogue import DEFAULT_SPLIT, get_domain
from .configs import PLANNERS
from .expert import expert_trajectory
from .results import PlanStatus
from .solving import solve
from .store import format_plan, optimal_length

__all__ = ["add_plan_parsers", "cmd_expert", "cmd_plan"]


def add_plan_parsers(subparsers) -> None:
    p = subparsers.add_parser(
        "plan",
        help="solve a problem with a classical planner",
        description="Solve a shipped problem (DOMAIN PROBLEM), a problem of a domain folder of your own "
        "(--domains-root DIR DOMAIN PROBLEM) or PDDL files (DOMAIN_FILE PROBLEM_FILE) and print the validated "
        "plan. Exit status: 0 solved, 1 unsolvable or timed out, 2 error.",
    )
    p.add_argument("domain", help="shipped domain name (or one of --domains-root's), or a domain.pddl path")
    p.add_argument("problem", help="problem name in the split, or a problem .pddl path")
    p.add_argument("--domains-root", default=None, metavar="DIR",
                   help="DOMAIN is a folder of DIR (laid out as pddl_domains/), not a shipped domain")
    p.add_argument("--planner", default="fd-opt", choices=sorted(PLANNERS), help="planner configuration (default fd-opt)")
    p.add_argument("--timeout", type=float, default=60.0, help="wall-clock seconds (default 60)")
    p.add_argument("--split", default=DEFAULT_SPLIT, help=f"problem split (default {DEFAULT_SPLIT})")
    p.add_argument("--format", choices=("pddl", "text", "json"), default="pddl",
                   help="pddl: IPC plan; text: the environment's action texts; json: the whole result")
    p.set_defaults(func=cmd_plan)

    e = subparsers.add_parser(
        "expert",
        help="write expert trajectories (stored plans played in the environment) as JSON lines",
        description="One line per problem: domain, problem, split, optimal_length and the steps "
        "[{observation, action, next_observation, progress}].",
    )
    e.add_argument("--domain", required=True, help="shipped domain name")
    e.add_argument("--split", default=DEFAULT_SPLIT, help=f"problem split (default {DEFAULT_SPLIT})")
    e.add_argument("--problems", nargs="*", help="only these problems (default: all of the split)")
    e.add_argument("--out", default="-", help="output file (default: standard output)")
    e.add_argument("--timeout", type=float, default=120.0, help="planner timeout where no plan is stored")
    e.set_defaults(func=cmd_expert)


def cmd_plan(args: argparse.Namespace) -> int:
    plan = solve(args.domain, args.problem, planner=args.planner, timeout=args.timeout, split=args.split,
                 domains_root=args.domains_root)
    if args.format == "json":
        d = plan.to_dict()
        d["details"] = {k: v for k, v in d["details"].items() if k != "log_tail"}
        print(json.dumps(d, indent=2))
    else:
        header = (
            f"{plan.domain}/{plan.problem} {plan.planner}: {plan.status.value}"
            + (f", {plan.length} steps" if plan.length is not None else "")
            + (f", cost {plan.cost}" if plan.cost is not None and plan.cost != plan.length else "")
            + f", {plan.time_s:.1f} s"
            + (f" ({plan.message})" if plan.message else "")
        )
        print("; " + header)
        if plan.solved:
            if args.format == "text":
                print("\n".join(plan.text))
            else:
                costed = plan.details.get("action_costs", False)
                sys.stdout.write(format_plan(plan.actions, cost=plan.cost if costed else None))
    if plan.solved:
        return 0
    return 1 if plan.status in (PlanStatus.UNSOLVABLE, PlanStatus.TIMEOUT) else 2


def cmd_expert(args: argparse.Namespace) -> int:
    domain = get_domain(args.domain)
    problems = args.problems or domain.problems(args.split)
    out = sys.stdout if args.out in (None, "-") else open(Path(args.out), "w")  # noqa: SIM115
    try:
        for problem in problems:
            steps = expert_trajectory(domain.name, problem, args.split, timeout=args.timeout)
            line = {
                "domain": domain.name,
                "problem": problem,
                "split": args.split,
                "optimal_length": optimal_length(domain.name, problem, args.split),
                "steps": [s._asdict() for s in steps],
            }
            out.write(json.dumps(line) + "\n")
            out.flush()
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pddlworlds.planning")
    add_plan_parsers(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
