#!/usr/bin/env python
"""How long reading and grounding take: each shipped domain's largest public problem (by ground actions),
read (`load_task`), grounded (`grounding.ground`, the engine alone) and made a world (`World`: grounding
and the text tables), the minimum and median of `--repeats` runs in this process.

Run it under two checkouts back to back (`PYTHONPATH=OTHER/src python scripts/bench_grounding.py`) to
compare engines on one machine; a figure alone says little on a shared machine.

    python scripts/bench_grounding.py [--repeats 5] [--split agentboard]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from pddlworlds.worlds.catalogue import domains, load_task
from pddlworlds.worlds.grounding import ground
from pddlworlds.worlds.text import load_templates
from pddlworlds.worlds.world import World


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--split", default="agentboard")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'domain':12} {'problem':10} {'actions':>8} {'atoms':>6} {'read ms':>9} {'ground ms':>10} "
          f"{'world ms':>10}  (min / median of {args.repeats})")
    for name, domain in domains().items():
        files = [(p, domain.problem_file(p, args.split)) for p in domain.problems(args.split)]
        sizes = {p: len(World(load_task(domain.domain_file, f), load_templates(load_task(domain.domain_file, f))).task.actions)
                 for p, f in files}
        problem = max(sizes, key=sizes.__getitem__)
        path = domain.problem_file(problem, args.split)
        reads, grounds, worlds = [], [], []
        for _ in range(args.repeats):
            start = time.perf_counter()
            task = load_task(domain.domain_file, path)
            reads.append(time.perf_counter() - start)
            start = time.perf_counter()
            ground(task)
            grounds.append(time.perf_counter() - start)
            templates = load_templates(task, domain.text_file if domain.text_file.is_file() else None)
            start = time.perf_counter()
            world = World(task, templates, problem)
            worlds.append(time.perf_counter() - start)
        print(f"{name:12} {problem:10} {len(world.task.actions):>8} {len(world.task.atoms):>6} "
              + "".join(f"{min(times) * 1e3:>5.0f} / {statistics.median(times) * 1e3:<4.0f}"
                        for times in (reads, grounds, worlds)))


if __name__ == "__main__":
    main()
