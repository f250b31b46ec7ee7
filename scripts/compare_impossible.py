#!/usr/bin/env python3
"""Success rate on solvable problems with the `impossible` action offered and without: two runs, one table.

A claim on a solvable problem ends it unsolved, so offering the action can cost success; this prints
that cost per agent and domain from a run that offered it (e.g. on `agentboard-mixed`) and one that did
not (e.g. on `agentboard`). Only problems solvable in both count, and only agents in both runs.

    python scripts/compare_impossible.py docs/results/impossible-agentboard-mixed docs/results/baselines-40
"""

from __future__ import annotations

import argparse
import sys

from pddlworlds.artefacts.runs import read_run
from pddlworlds.scoring.unsolvable import records_from_lines, success_with_and_without


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("offered", help="run folder of a run that offered the action")
    parser.add_argument("not_offered", help="run folder of a run that did not")
    args = parser.parse_args(argv)
    runs = []
    for folder in (args.offered, args.not_offered):
        run = read_run(folder)
        runs.append((run.config, records_from_lines(run.lines)))
    if not runs[0][0].get("allow_impossible") or runs[1][0].get("allow_impossible"):
        print("note: the first run should offer the action and the second not (see their config.json)", file=sys.stderr)
    shared = {(r.agent, r.domain, r.problem) for r in runs[1][1]}
    offered = [r for r in runs[0][1] if (r.agent, r.domain, r.problem) in shared and r.solvable is not False]
    keys = {(r.agent, r.domain, r.problem) for r in offered}
    not_offered = [r for r in runs[1][1] if (r.agent, r.domain, r.problem) in keys]
    print("| Domain | Agent | episodes | SR solvable %, offered | SR solvable %, not offered |")
    print("|---|---|---|---|---|")
    table = success_with_and_without(offered, not_offered)
    for (agent, domain), (with_, without) in sorted(table.items(), key=lambda kv: (kv[0][1] == "overall", kv[0][1], kv[0][0])):
        n = sum(1 for r in offered if r.agent == agent and (domain == "overall" or r.domain == domain))
        show = lambda v: "–" if v is None else f"{100 * v:.1f}"
        print(f"| {domain.capitalize()} | {agent} | {n} | {show(with_)} | {show(without)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
