#!/usr/bin/env python
"""The engine against independent readers on random small domains (`pddlworlds.testing.differential`).

Each seed's domain (typing with an implied parent and `either`, negative preconditions, equality,
`or`/`imply`/`exists`/`forall`, derived predicates, recursive ones too, conditional and quantified effects,
action costs) is walked step by step on our engine and on pymimir (applicable actions, successor states,
costs, the goal), and every `--fast-downward-every`-th is planned by Fast Downward's lama-first, whose plan
must replay on our task at the cost it reports (or whose "no plan" our breadth-first search must confirm).
One line per disagreement, then the counts; `--json OUT` keeps every verdict. Exit 1 on a disagreement.

    python scripts/differential_check.py --domains 3000 --fast-downward-every 3
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time

from pddlworlds.testing.differential import check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", type=int, default=1000, help="how many seeds (default: 1000)")
    parser.add_argument("--start", type=int, default=0, help="the first seed (default: 0)")
    parser.add_argument("--walks", type=int, default=3, help="random walks per domain (default: 3)")
    parser.add_argument("--steps", type=int, default=15, help="steps per walk (default: 15)")
    parser.add_argument("--fast-downward-every", type=int, default=3, metavar="K",
                        help="plan every K-th domain with Fast Downward too (0: none; default: 3)")
    parser.add_argument("--json", default=None, help="write every verdict here")
    args = parser.parse_args(argv)
    start, verdicts = time.perf_counter(), []
    features: collections.Counter[str] = collections.Counter()
    planner: collections.Counter[str] = collections.Counter()
    disagreements = 0
    for seed in range(args.start, args.start + args.domains):
        every = args.fast_downward_every
        verdict = check(seed, walks=args.walks, steps=args.steps, fast_downward=bool(every) and seed % every == 0)
        features.update(verdict.features)
        planner[verdict.fast_downward] += 1
        if verdict.disagreement:
            disagreements += 1
            print(f"seed {seed}: {verdict.disagreement}", flush=True)
        verdicts.append({"seed": seed, "features": sorted(verdict.features), "steps": verdict.steps,
                         "disagreement": verdict.disagreement, "fast_downward": verdict.fast_downward})
    elapsed = time.perf_counter() - start
    steps = sum(v["steps"] for v in verdicts)
    print(f"{args.domains} domains (seeds {args.start}-{args.start + args.domains - 1}), {steps:,} steps compared "
          f"with pymimir, {disagreements} disagreements, {elapsed:.0f} s")
    print("Fast Downward: " + ", ".join(f"{k} {v}" for k, v in sorted(planner.items())))
    print("features: " + ", ".join(f"{k} {v}" for k, v in features.most_common()))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(verdicts, handle, indent=1)
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
