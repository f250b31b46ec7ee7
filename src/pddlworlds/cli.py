"""`pddlworlds` command line: a thin layer over the library.

    pddlworlds list                      domains, splits and problems with their sizes
    pddlworlds play tyreworld [--problem p01]   play a problem in the terminal
    pddlworlds plan / expert             the classical planner (see `pddlworlds plan -h`)
    pddlworlds eval / report             evaluate agents and report (see `pddlworlds eval -h`)
    pddlworlds view RUN_DIR [...]        browse runs in one self-contained HTML page
"""

from __future__ import annotations

import argparse
import sys
import warnings

from .worlds.catalogue import DEFAULT_SPLIT, domains, get_domain
from .evaluation.cli import add_parsers as add_eval_parsers
from .insights.cli import add_parsers as add_insight_parsers
from .worlds.pddl import PDDLError, PDDLNormalisationWarning
from .planning.cli import add_plan_parsers
from .artefacts.proofs import solvable_text
from .training.cli import add_parsers as add_train_parsers
from .viewer.cli import add_parsers as add_view_parsers


def cmd_list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from .worlds.grounding import ground
    from .artefacts.plans import optimal_lengths

    table = Table(title="pddlworlds problems")
    for column in ("domain", "split", "problem", "objects", "atoms", "ground actions", "goal", "optimal"):
        table.add_column(column, justify="left" if column in ("domain", "split", "problem") else "right")
    table.add_column("solvable", justify="left")  # "no" for problems with a stored proof (planners/unsolvable.csv)
    wanted = [get_domain(d) for d in args.domain] if args.domain else list(domains().values())
    for domain in wanted:
        for split in [args.split] if args.split else domain.splits():
            lengths = optimal_lengths(domain.name, split)
            for problem in domain.problems(split):
                task = domain.load(problem, split)
                grounded = ground(task) if args.ground else None
                table.add_row(
                    domain.name,
                    split,
                    problem,
                    str(len(task.objects)),
                    str(len(grounded.atoms)) if grounded else "-",
                    str(len(grounded.actions)) if grounded else "-",
                    str(len(task.goal)),
                    str(lengths.get(problem, "-")),
                    solvable_text(domain.name, problem, lengths.get(problem)),
                )
    Console().print(table)
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    import gymnasium as gym

    from .registration import env_id

    domain = get_domain(args.domain)
    env = gym.make(env_id(domain.name), split=args.split, max_episode_steps=args.max_steps)
    observation, info = env.reset(seed=args.seed, options={"problem": args.problem} if args.problem else None)
    print(f"{domain.name} / {info['problem']}  (optimal length: {info['optimal_length'] or 'unknown'})")
    print(info["goal"])
    print(observation)
    print("Type an action, 'check valid actions', 'look around', or 'quit'.")
    while True:
        try:
            text = input(f"[{info['step']}] > ")
        except EOFError:
            print()
            return 0
        if text.strip().lower() in {"quit", "exit", "q"}:
            return 0
        observation, _, terminated, truncated, info = env.step(text)
        print(observation)
        if terminated or truncated:
            outcome = "Solved" if info["success"] else "Out of steps"
            print(f"{outcome} in {info['step']} steps; progress {info['progress']:.0%}.")
            return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pddlworlds", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list domains and problems with their sizes")
    p.add_argument("--domain", action="append", help="only this domain (repeatable)")
    p.add_argument("--split", help="only this split")
    p.add_argument("--ground", action="store_true", help="also ground each problem to count atoms and actions")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("play", help="play a problem in the terminal")
    p.add_argument("domain")
    p.add_argument("--problem", help="problem name (default: picked by --seed)")
    p.add_argument("--split", default=DEFAULT_SPLIT)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=30)
    p.set_defaults(func=cmd_play)

    add_plan_parsers(sub)
    add_eval_parsers(sub)
    add_view_parsers(sub)
    add_insight_parsers(sub)  # after eval: adds --insights and --insight-* to it
    add_train_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    warnings.simplefilter("ignore", PDDLNormalisationWarning)  # shipped quirks; the library still warns
    try:
        return int(args.func(args) or 0)
    except (ValueError, PDDLError) as exc:
        print(f"pddlworlds {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
