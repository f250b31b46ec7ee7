"""`pddlworlds` command line: a thin layer over the library.

    pddlworlds list                      domains, splits and problems with their sizes
    pddlworlds play tyreworld [--problem p01]   play a problem in the terminal
    pddlworlds text-template D.pddl P.pddl      a starter text.toml for a domain of your own
    pddlworlds plan / expert             the classical planner (see `pddlworlds plan -h`)
    pddlworlds eval / report             evaluate agents and report (see `pddlworlds eval -h`)
    pddlworlds compare RUN_A RUN_B       two runs paired episode by episode, with significance tests
    pddlworlds view RUN_DIR [...]        browse runs in one self-contained HTML page
    pddlworlds serve [--port 8000]       the embedded model behind an OpenAI-compatible server
    pddlworlds env-server [--port 8001]  pddlworlds episodes as an OpenEnv environment server
    pddlworlds export --out F.jsonl      the expert's episodes as a dataset (JSON Lines, Parquet)
"""

from __future__ import annotations

import argparse
import sys

from .evaluation.cli import add_eval_parsers
from .frameworks.cli import add_parsers as add_framework_parsers
from .llm.cli import add_parsers as add_serve_parsers
from .planning.cli import add_plan_parsers
from .tables import add_format_option
from .training.cli import add_parsers as add_train_parsers
from .viewer.cli import add_parsers as add_view_parsers
from .worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS, DEFAULT_SPLIT, get_domain
from .worlds.pddl import PDDLError, ignore_normalisation_warnings


def cmd_list(args: argparse.Namespace) -> int:
    from .listing import file_rows, problem_rows, world_rows
    from .tables import Column, print_rows

    # no selection: a row per world; a user's --domains-root alone lists its problems (its folders have no card
    # or ladder to sum up)
    if args.worlds or not (args.domain or args.split or args.domain_file or args.problem_files or args.problems
                           or args.domains_root):
        columns = [Column(key, header) for key, header in (
            ("world", "world"), ("title", "title"), ("kinds", "kinds"), ("origin", "origin"),
            ("features", "features"))]
        columns += [Column(key, header, "right") for key, header in (
            ("public", "public"), ("ladder", "ladder e/m/h"), ("heldout", "held out e/m/h"), ("optima", "optima"))]
        print_rows(world_rows(args.domains_root), columns, args.format, title="pddlworlds worlds")
        return 0

    if args.problem_files and not args.domain_file:
        raise ValueError("--problem-files needs --domain-file (the domain those problems are of)")
    if args.domain_file:
        if not args.problem_files:
            raise ValueError("--domain-file needs --problem-files (one or more problem .pddl files)")
        if args.domains_root or args.domain or args.split:
            raise ValueError("--domain-file lists those files only; leave out --domains-root, --domain and --split")
        rows = file_rows(args.domain_file, args.problem_files, ground_problems=args.ground)
    else:
        rows = problem_rows(args.domain, args.split, ground_problems=args.ground, domains_root=args.domains_root)
    columns = [Column("domain", "domain"), Column("split", "split"), Column("problem", "problem")]
    columns += [
        Column(key, header, "right")
        for key, header in (("objects", "objects"), ("atoms", "atoms"), ("ground_actions", "ground actions"),
                            ("goal", "goal"), ("optimal", "optimal"))
    ]
    columns.append(Column("solvable", "solvable"))  # "no" for problems with a stored proof
    print_rows(rows, columns, args.format, title="pddlworlds problems")
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from .registration import make_domain_env

    domain = get_domain(args.domain, args.domains_root)
    env = make_domain_env(domain.name, args.domains_root, split=args.split, step_budget=args.max_steps)
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


def cmd_text_template(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .worlds.pddl import read_task
    from .worlds.text import load_templates, starter_text

    task = read_task(args.domain_file, args.problem_file)
    text = starter_text(task)
    if args.out is None:
        print(text, end="")
        return 0
    out = Path(args.out)
    if out.exists() and not args.force:
        raise ValueError(f"{out} exists; pass --force to replace it")
    out.write_text(text)
    load_templates(task, out)  # what it wrote reads back
    print(f"wrote {out}: {len(task.predicates)} predicates, {len(task.schemas)} actions", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pddlworlds", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list the worlds (a row each), or their problems with their sizes")
    p.add_argument("--domain", action="append", help="only this domain (repeatable)")
    p.add_argument("--split", help="only this split")
    p.add_argument("--ground", action="store_true", help="also ground each problem to count atoms and actions")
    p.add_argument("--domains-root", default=None, metavar="DIR",
                   help="list the domain folders of DIR (laid out as pddl_domains/) instead of the shipped ones")
    p.add_argument("--domain-file", default=None, metavar="FILE", help="list PDDL files of your own: this domain")
    p.add_argument("--problem-files", nargs="+", default=None, metavar="FILE",
                   help="with --domain-file: these problem files")
    p.add_argument("--worlds", action="store_true",
                   help="one row a world: id, card, problems per band (what plain `list` shows, also of a --domains-root)")
    p.add_argument("--problems", action="store_true", help="every problem of every world (with no other filter)")
    add_format_option(p, "the problems")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("play", help="play a problem in the terminal")
    p.add_argument("domain")
    p.add_argument("--problem", help="problem name (default: picked by --seed)")
    p.add_argument("--split", default=DEFAULT_SPLIT)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=None,
                   help=f"step budget (default: the problem's own, {DEFAULT_MAX_EPISODE_STEPS} or a ladder band's)")
    p.add_argument("--domains-root", default=None, metavar="DIR",
                   help="DOMAIN is a folder of DIR (laid out as pddl_domains/), not a shipped domain")
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("text-template", help="write a starter text.toml for a domain of your own")
    p.add_argument("domain_file")
    p.add_argument("problem_file", help="any problem of the domain (its objects are not written)")
    p.add_argument("--out", help="the file to write (default: standard output)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.set_defaults(func=cmd_text_template)

    add_plan_parsers(sub)
    add_eval_parsers(sub)
    add_view_parsers(sub)
    add_train_parsers(sub)
    add_serve_parsers(sub)
    add_framework_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    ignore_normalisation_warnings()  # the shipped files' known quirks; the library still warns
    try:
        return int(args.func(args) or 0)
    except (ValueError, PDDLError) as exc:
        print(f"pddlworlds {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
