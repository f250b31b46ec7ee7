#!/usr/bin/env python
"""The engine choice, measured: our bit-mask stepping over Fast Downward's grounding against pymimir (C++,
lifted successor generation) on each shipped domain's largest public problem.

Per engine: the time to load the problem (parse and ground; pymimir grounds lazily) and, along one seeded
random walk of `--steps` steps, the time per step to list the applicable actions and apply one of them
(what an environment step with a listing costs without the text). The two walks take the same actions
(by name), so they visit the same states. Install weight is the size of each package as installed.

    python scripts/bench_engines.py [--steps 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import time
import warnings
from pathlib import Path

from pddlworlds.worlds.catalogue import domains, load_task
from pddlworlds.worlds.grounding import ground


def package_mb(name: str) -> float:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return float("nan")
    root = Path(spec.origin).parent
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) / 2**20


def largest(domain) -> Path:
    files = [domain.problem_file(p) for p in domain.problems()]
    return max(files, key=lambda f: len(ground(load_task(domain.domain_file, f)).actions))


def ours(domain_file: Path, problem_file: Path, steps: int, seed: int) -> tuple[float, float, list[str]]:
    start = time.perf_counter()
    task = ground(load_task(domain_file, problem_file))
    loaded = time.perf_counter() - start
    rng, state, names = random.Random(seed), task.init, []
    pddl = [a.pddl for a in task.actions]
    start = time.perf_counter()
    for _ in range(steps):
        applicable = task.applicable(state)
        if not applicable:
            break
        index = applicable[rng.randrange(len(applicable))]
        names.append(pddl[index])
        state = task.apply(state, index)
    return loaded, (time.perf_counter() - start) / max(1, len(names)), names


def mimir(domain_file: Path, problem_file: Path, names: list[str]) -> tuple[float, float]:
    import pymimir

    start = time.perf_counter()
    problem = pymimir.Problem(pymimir.Domain(str(domain_file)), str(problem_file))
    state = problem.get_initial_state()
    loaded = time.perf_counter() - start
    start = time.perf_counter()
    for name in names:
        actions = {"(" + " ".join(str(a).lower().strip("()").split()) + ")": a
                   for a in state.generate_applicable_actions()}
        state = actions[name].apply(state)
    return loaded, (time.perf_counter() - start) / max(1, len(names))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'domain':12} {'problem':9} {'ours load ms':>13} {'ours us/step':>13} {'pymimir load ms':>16} "
          f"{'pymimir us/step':>16}")
    for name, domain in domains().items():
        problem = largest(domain)
        loaded, per_step, names = ours(domain.domain_file, problem, args.steps, args.seed)
        try:
            mloaded, mper_step = mimir(domain.domain_file, problem, names)
            theirs = f"{mloaded * 1e3:>16.0f} {mper_step * 1e6:>16.0f}"
        except ImportError:
            theirs = f"{'(not installed)':>33}"
        except RuntimeError as exc:  # pymimir refuses some legal files (a constant declared again as an object)
            theirs = f"{'(cannot load: ' + str(exc).splitlines()[0][:40] + ')':>33}"
        print(f"{name:12} {problem.stem:9} {loaded * 1e3:>13.0f} {per_step * 1e6:>13.0f} {theirs}")
    print(f"\ninstalled: fast-downward-translate {package_mb('fast_downward.translate'):.1f} MB, "
          f"pymimir {package_mb('pymimir'):.1f} MB, unified-planning {package_mb('unified_planning'):.1f} MB")


if __name__ == "__main__":
    main()
