#!/usr/bin/env python3
"""Time a planner configuration (default: the optimal one, fd-opt) on the public problems.

Prints one line per problem (status, plan length, the stored length and whether it is proven optimal,
wall-clock seconds of the whole call including the planner process start-up, and the seconds the engine
itself took) and totals per domain and overall.

    python scripts/bench_planner.py --timeout 60 --domains blocksworld gripper
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict

from pddlworlds.artefacts.plans import read_index
from pddlworlds.planning import PLANNERS, solve
from pddlworlds.worlds.catalogue import DEFAULT_SPLIT, domains
from pddlworlds.worlds.pddl import ignore_normalisation_warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=60.0, help="wall-clock seconds per problem (default 60)")
    parser.add_argument("--domains", nargs="*", help="only these domains (default: all)")
    parser.add_argument("--planner", default="fd-opt", choices=sorted(PLANNERS), help="configuration (default fd-opt)")
    parser.add_argument("--split", default=DEFAULT_SPLIT, help=f"problem split (default {DEFAULT_SPLIT})")
    parser.add_argument("--problems", nargs="*", help="only these problem names")
    parser.add_argument("--nice", type=int, default=10, help="niceness of the planner processes (default 10)")
    args = parser.parse_args(argv)
    ignore_normalisation_warnings()

    index = {(r["domain"], r["split"], r["problem"]): r for r in read_index()}
    # problems, solved, optimal, wall time, mismatches, engine time
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0.0, 0, 0.0])
    print(f"{'domain':12} {'problem':10} {'status':19} {'length':>6} {'stored':>7} {'time_s':>8} {'engine_s':>8}  note")
    start = time.perf_counter()
    for name, domain in domains().items():
        if args.domains and name not in args.domains:
            continue
        if args.split not in domain.splits():
            continue
        for problem in domain.problems(args.split):
            if args.problems and problem not in args.problems:
                continue
            plan = solve(name, problem, args.planner, timeout=args.timeout, split=args.split, nice=args.nice)
            row = index.get((name, args.split, problem), {})
            stored = row.get("length", "") + ("*" if row.get("optimal") == "true" else "")
            note = "" if plan.solved else plan.message[:60]
            if plan.optimal and row.get("optimal") == "true" and str(plan.length) != row.get("length"):
                note = f"MISMATCH with the stored optimum {row['length']}"
                totals[name][4] += 1
            length = "" if plan.length is None else str(plan.length)
            engine = plan.details.get("engine_time_s")
            engine_text = "" if engine is None else f"{engine:8.2f}"
            print(f"{name:12} {problem:10} {plan.status.value:19} {length:>6} {stored:>7} {plan.time_s:8.2f} "
                  f"{engine_text:>8}  {note}", flush=True)
            t = totals[name]
            t[0] += 1
            t[1] += plan.solved
            t[2] += plan.optimal
            t[3] += plan.time_s
            t[5] += engine or 0.0
    print()
    print(f"{'domain':12} {'problems':>8} {'solved':>7} {'optimal':>8} {'time_s':>9} {'mean_s':>7} {'engine_s':>9}")
    grand = [0, 0, 0, 0.0, 0, 0.0]
    for name, t in [*totals.items(), ("total", None)]:
        if t is None:
            t = grand
        else:
            grand = [a + b for a, b in zip(grand, t)]
        print(f"{name:12} {t[0]:8d} {t[1]:7d} {t[2]:8d} {t[3]:9.1f} {t[3] / max(t[0], 1):7.2f} {t[5]:9.1f}")
    print(f"({args.planner}, timeout {args.timeout:g}s, wall clock {time.perf_counter() - start:.0f}s; "
          "stored lengths marked * are proven optimal)")
    if grand[4]:
        print(f"{grand[4]} optimal lengths disagree with the index", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
