#!/usr/bin/env python3
"""Write the seeded `generated` split: pddl_domains/<domain>/problems/generated/<level>-<nn>.pddl.

A thin wrapper around `pddlworlds.generators.generate_split`; see that module for the sizes per level.
The same seed always writes byte-identical files, and tests/generators/test_generators.py checks that the shipped
files equal a fresh generation with the default seed, so rerun this after changing the generators.

Examples::

    python scripts/generate_problems.py                      # the shipped split (seed 0, 5 per level)
    python scripts/generate_problems.py --seed 7 --out /tmp/pddl --per-level 20
    python scripts/generate_problems.py --domains barman --levels hard
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pddlworlds.generators import DEFAULT_SEED, DOMAINS, LEVELS, PER_LEVEL, SPLIT, generate_split

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "pddl_domains",
                        help="folder laid out like pddl_domains (default: the repository's)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"default {DEFAULT_SEED}")
    parser.add_argument("--per-level", type=int, default=PER_LEVEL,
                        help=f"problems per level and domain (default {PER_LEVEL})")
    parser.add_argument("--domains", nargs="+", choices=DOMAINS, default=list(DOMAINS))
    parser.add_argument("--levels", nargs="+", choices=LEVELS, default=list(LEVELS))
    parser.add_argument("--split", default=SPLIT, help=f"split folder name (default {SPLIT!r})")
    args = parser.parse_args(argv)
    if args.per_level < 1:
        parser.error("--per-level must be at least 1")
    paths = generate_split(
        args.out, args.seed, domains=args.domains, levels=args.levels, per_level=args.per_level,
        split=args.split,
    )
    for domain in args.domains:
        print(f"{domain}: {sum(p.parts[-4] == domain for p in paths)} problems in "
              f"{args.out / domain / 'problems' / args.split}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
