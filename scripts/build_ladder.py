#!/usr/bin/env python3
"""Build catalogue worlds' ladders: problems drawn by each world's generator, proven optimal, three bands.

    nice -n 10 python scripts/build_ladder.py logistics            # 10 public + 5 held-out per band
    python scripts/build_ladder.py logistics --dry-run             # draw and prove, write nothing

Writes `pddl_domains/<world>/problems/{ladder,ladder-heldout}/`, the plans under `planners/<world>/` and
their index rows (`pddlworlds.generators.ladder_build`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from pddlworlds.generators.ladder_build import build_ladder
from pddlworlds.processes import signals_interrupt
from pddlworlds.training.problems import HELD_OUT_SETS, held_out_problems
from pddlworlds.worlds.pddl import ignore_normalisation_warnings


def held_out_files(world: str, folder: Path) -> list[Path]:
    """The training held-out sets' problems of `world` (the four public worlds have them): adapters are
    validated on them, and the sets are redrawn by a rule that skips shipped problems, so a ladder that
    held one would change them."""
    files: list[Path] = []
    for name in HELD_OUT_SETS:
        if world in HELD_OUT_SETS.get(name).problems:
            files += [p.path for p in held_out_problems(folder / name, [world], name)]
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("worlds", nargs="+", help="world names (folders under pddl_domains/)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-band", type=int, default=10, help="public problems per band (default 10)")
    parser.add_argument("--heldout-per-band", type=int, default=5, help="held-out problems per band (default 5)")
    parser.add_argument("--timeout", type=float, default=120, help="CPU seconds per search (default 120)")
    parser.add_argument("--max-candidates", type=int, default=400, help="draws per band before giving up")
    parser.add_argument("--jobs", type=int, default=2, help="proofs at a time (default 2)")
    parser.add_argument("--nice", type=int, default=10, help="the planner processes' niceness")
    parser.add_argument("--dry-run", action="store_true", help="draw and prove, write nothing")
    args = parser.parse_args(argv)
    ignore_normalisation_warnings()
    status = 0
    for world in args.worlds:
        start = time.perf_counter()
        scratch = tempfile.TemporaryDirectory(prefix="pddlworlds-ladder-avoid-")
        avoid = held_out_files(world, Path(scratch.name))
        try:
            # SIGTERM as Ctrl-C: the planner under way is killed with its process group, not left running
            with signals_interrupt("build_ladder"):
                report = build_ladder(world, seed=args.seed, per_band=args.per_band,
                                      heldout_per_band=args.heldout_per_band, timeout=args.timeout,
                                      max_candidates=args.max_candidates, jobs=args.jobs, nice=args.nice,
                                      write=not args.dry_run, avoid=avoid)
        except KeyboardInterrupt:
            print(f"{world}: stopped; nothing written for it", file=sys.stderr)
            return 130
        except (RuntimeError, ValueError) as exc:
            print(f"{world}: {exc}", file=sys.stderr)
            status = 1
            continue
        optima = {}
        for kept in report.kept:
            optima.setdefault(kept.split, []).append(kept.proof.optimum)
        print(f"{world}: {len(report.kept)} problems in {time.perf_counter() - start:.0f} s; optima "
              + "; ".join(f"{split} {sorted(v)}" for split, v in optima.items()))
        for line in report.timeouts:
            print(f"{world}: timed out: {line}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
