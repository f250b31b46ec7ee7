"""Measure the size guards: how fast, and with how little memory, oversized input is refused.

    PYTHONPATH=src python scripts/bench_guards.py [--objects 50 200] [--file-mb 0.5 20] [--at-limit]

Prints, per case, the wall time of the refusal, the Python heap peak during it (tracemalloc) and the
growth of the process's peak RSS (in MiB; Linux reports ru_maxrss in KiB). `--at-limit` also grounds a task whose reachable part is just under the
default action limit, to show what the default still lets through costs.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from pddlworlds.worlds.grounding import MAX_ATOMS, MAX_GROUND_ACTIONS, ground
from pddlworlds.worlds.pddl import MAX_PDDL_BYTES, SizeLimitError, read_task

WIDE_DOMAIN = """\
(define (domain wide)
  (:requirements :strips)
  (:predicates (p ?a ?b) (q ?c ?d))
  (:action a4
    :parameters (?a ?b ?c ?d)
    :precondition (p ?a ?b)
    :effect (q ?c ?d)))
"""


def problem_text(n: int, padding: int = 0) -> str:
    objects = " ".join(f"o{i}" for i in range(n))
    pad = ("; " + "x" * 998 + "\n") * (padding // 1000)
    return f"(define (problem wide{n}) (:domain wide)\n  (:objects {objects})\n  (:init (p o0 o1))\n  (:goal (q o0 o1)))\n{pad}"


def measured(label: str, call, trace: bool = True) -> None:
    """Time `call`; with `trace`, also its Python heap peak (tracemalloc slows the call several times)."""
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if trace:
        tracemalloc.start()
    start = time.perf_counter()
    try:
        call()
        outcome = "accepted"
    except SizeLimitError as exc:
        outcome = "refused: " + str(exc).split(": ", 1)[-1][:110]
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] if trace else float("nan")
    tracemalloc.stop()
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    print(f"{label:<38} {elapsed * 1000:9.1f} ms  heap peak {peak / 2**20:7.2f} MiB  "
          f"RSS peak +{grown / 1024:7.1f} MiB  {outcome}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, nargs="*", default=[50, 200])
    parser.add_argument("--file-mb", type=float, nargs="*", default=[0.5, 20.0])
    parser.add_argument("--at-limit", action="store_true")
    args = parser.parse_args()
    print(f"defaults: max_ground_actions={MAX_GROUND_ACTIONS:,} max_atoms={MAX_ATOMS:,} "
          f"max_file_bytes={MAX_PDDL_BYTES:,}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        domain = folder / "domain.pddl"
        domain.write_text(WIDE_DOMAIN)
        for n in args.objects:
            problem = folder / f"p{n}.pddl"
            problem.write_text(problem_text(n))
            task = read_task(domain, problem)
            measured(f"ground: 4 parameters over {n} objects", lambda task=task: ground(task))
            every = folder / f"every{n}.pddl"  # every (p a b) true: all n**4 actions reachable
            init = " ".join(f"(p o{a} o{b})" for a in range(n) for b in range(n))
            every.write_text(problem_text(n).replace("(:init (p o0 o1))", f"(:init {init})"))
            task = read_task(domain, every)
            measured(f"ground: all {n}**4 actions reachable", lambda task=task: ground(task), trace=False)
        for mb in args.file_mb:
            big = folder / f"big{mb}.pddl"
            big.write_text(problem_text(5, int(mb * 2**20)))
            measured(f"read: {big.stat().st_size / 2**20:.1f} MiB problem file", lambda big=big: read_task(domain, big))
    if args.at_limit:
        n = int(MAX_ATOMS ** 0.5) - 1  # (a4 o0 o1 ?c ?d): n**2 reachable actions and (q ?c ?d) atoms, under max_atoms
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "domain.pddl").write_text(WIDE_DOMAIN)
            (Path(tmp) / "p.pddl").write_text(problem_text(n))
            task = read_task(Path(tmp) / "domain.pddl", Path(tmp) / "p.pddl")
            measured(f"ground: {n * n:,} reachable of {n}**4", lambda: ground(task), trace=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
