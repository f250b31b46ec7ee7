#!/usr/bin/env python3
"""Compare llama.cpp builds on the embedded model, in one run, as ratios to a reference build.

Each build is a Python interpreter (usually a venv's) that has its own llama-cpp-python wheel, the
model package and numpy; ``scripts/bench_llm.py`` runs inside it (it falls back to loading
the ``pddlworlds/llm`` package alone when the rest of the package is not installed there). Builds are run
in turn, ``--rounds`` times, in a rotated order, so that load on a shared machine falls on all of
them alike; the table shows each build's median over the rounds and its ratio to the first build.

    python scripts/bench_llm_builds.py \\
        --build sse3=/work/wheels/venv-noavx/bin/python \\
        --build portable=/work/wheels/venv-portable/bin/python \\
        --build explicit=/work/wheels/venv-avx2/bin/python --rounds 3 --json builds.json

``scripts/build_llama_variants.sh`` builds such venvs with the CMAKE_ARGS we compared.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().with_name("bench_llm.py")

# Figure, how to read it (higher or lower is better).
METRICS = {
    "prompt_tok_s_median": "prompt tokens/s (cold prompt)",
    "gen_tok_s_median": "generated tokens/s",
    "episode_reuse_s_per_call": "s per agent-like call (prefix reuse)",
    "episode_reuse_total_s": "s per agent-like episode",
}


def parse_build(text: str) -> tuple[str, Path]:
    name, sep, python = text.partition("=")
    if not sep or not name or not python:
        raise argparse.ArgumentTypeError(f"--build wants NAME=PYTHON, got {text!r}")
    path = Path(python).expanduser()
    if not path.exists():
        raise argparse.ArgumentTypeError(f"--build {name}: no interpreter at {path}")
    return name, path


def run_once(python: Path, bench_args: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        done = subprocess.run(
            [str(python), str(BENCH), *bench_args, "--json", str(out)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"{python} {BENCH.name} failed (exit {done.returncode}):\n{done.stderr[-3000:]}"
            )
        return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--build",
        type=parse_build,
        action="append",
        required=True,
        help="NAME=PYTHON; first is the reference",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--calls", type=int, default=15, help="calls in the agent-like episode")
    parser.add_argument("--json", type=Path, help="also write every round's results here")
    args = parser.parse_args(argv)
    names = [name for name, _ in args.build]
    if len(set(names)) != len(names):
        parser.error(f"build names must differ: {names}")
    bench_args = [  # the base model: builds are compared on llama.cpp alone, and bare venvs lack models/
        "--lora",
        "none",
        "--sections",
        "backend,episode",
        "--threads",
        str(args.threads),
        "--calls",
        str(args.calls),
        "--repeat",
        "3",
    ]

    runs: dict[str, list[dict]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        order = args.build[round_ % len(args.build) :] + args.build[: round_ % len(args.build)]
        for name, python in order:
            print(f"round {round_ + 1}/{args.rounds}: {name}", file=sys.stderr, flush=True)
            runs[name].append(run_once(python, bench_args))

    medians = {name: {m: statistics.median(r[m] for r in runs[name]) for m in METRICS} for name in names}
    reference = names[0]
    print(
        f"\n{args.rounds} rounds, {args.threads} threads; ratios are to '{reference}' (speed-up: >1 is faster)"
    )
    print(f"{'build':12s} {'cpu features':60s}")
    for name in names:
        features = runs[name][0].get("system_info", "").replace("CPU : ", "").replace(" = 1", "")
        print(f"{name:12s} {features[:60]}")
    print()
    header = f"{'figure':40s}" + "".join(f"{n:>16s}" for n in names)
    print(header)
    for metric, label in METRICS.items():
        values = "".join(f"{medians[n][metric]:16.2f}" for n in names)
        print(f"{label:40s}{values}")
        ratios = []
        for n in names:
            ref, own = medians[reference][metric], medians[n][metric]
            speed_up = own / ref if metric.endswith("tok_s_median") else ref / own
            ratios.append(f"{speed_up:15.2f}x")
        print(f"{'  speed-up':40s}" + "".join(ratios))
    results = {"rounds": args.rounds, "threads": args.threads, "medians": medians, "runs": runs}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
