#!/usr/bin/env python3
"""Measure an adapter on the held-out problems: SR, PR, executability, loops and seconds per step.

The held-out problems (`pddlworlds.training.problems.HELD_OUT_SETS`: generated, fixed seeds, never
trained on and never a shipped one; `--set standard`, 6 a domain over the three levels, `--set wide`,
the public sizes only, medium and hard, 48 problems, or `--set public-like`, 60 problems drawn like the
public ones, as many a domain as the public set has) are played by STANDARD and HiAgent, 30 steps, free
decoding, with the embedded model and the given adapter. Episodes are appended to `<out>.episodes.jsonl`
as they finish, so an interrupted run resumes where it stopped; the figures (per agent and domain, per
agent and generator level, and per agent over all) are printed as a table and written to `<out>` as JSON,
the row format of the table of rounds in docs/training.md.

    python scripts/validate_adapter.py --lora models/gemma-3-270m-pddlworlds-lora-v1.gguf --out /tmp/v1.json
    python scripts/validate_adapter.py --lora /work/train/round0/adapter.gguf --out /tmp/r0.json --workers 2
    python scripts/validate_adapter.py --out /tmp/r0.json --report-only --compare /tmp/v1.json
    python scripts/validate_adapter.py --lora /work/train/round0/adapter.gguf --set wide --out /tmp/r0-wide.json
    python scripts/validate_adapter.py --set public-like --out /tmp/v1-public-like.json --workers 2

`--compare B.json` pairs these episodes with B's (same agent, domain and problem) and prints, per agent
and domain, which problems only one adapter solves with McNemar's exact p-value and the Wilcoxon p-value
of progress: on 6 problems a domain a one-problem difference is not evidence, and this says so.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

_LLM: Any = None
#: What a run that plays records about how it played; `--report-only` keeps these from OUT.
_HOW_PLAYED = ("max_steps", "workers", "threads", "wall_seconds_this_run", "load_average_at_end", "cpus")


def _init_worker(lora: str | None, threads: int) -> None:
    global _LLM
    from pddlworlds.llm import EmbeddedLLM
    from pddlworlds.processes import tie_to_parent

    tie_to_parent()  # a stopped (or killed) validation leaves no worker playing on

    _LLM = EmbeddedLLM(lora_path=lora, n_threads=threads)


def _play(job: tuple[Any, str, int, str, str | None]) -> dict[str, Any]:
    from pddlworlds.training.validation import play_held_out

    problem, agent, max_steps, setting, choice_score = job
    return play_held_out(problem, agent, _LLM, max_steps, setting=setting, choice_score=choice_score)


def _table(figures: dict[str, dict[str, Any]]) -> str:
    lines = ["| agent/domain | n | SR % | PR % | executability % | loops/episode | s/step |", "|---|---:|---:|---:|---:|---:|---:|"]
    for key, f in figures.items():
        lines.append(f"| {key} | {f['episodes']} | {f['sr']} | {f['pr']} | {f['executability']} | "
                     f"{f['loops_per_episode']} | {f['seconds_per_step']} |")
    return "\n".join(lines)


def _comparison_table(comparison: dict[str, dict[str, Any]]) -> str:
    header = ("| agent/domain | pairs | SR % this | SR % other | solved only here | solved only there | p (SR) | "
              "PR % this | PR % other | p (PR) |")
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key, c in comparison.items():
        lines.append(f"| {key} | {c['pairs']} | {c['sr_a']} | {c['sr_b']} | {c['solved_only_a']} | {c['solved_only_b']} | "
                     f"{'–' if c['sr_p'] is None else c['sr_p']} | {c['pr_a']} | {c['pr_b']} | "
                     f"{'–' if c['pr_p'] is None else c['pr_p']} |")
    return "\n".join(lines)


def _refuse(message: str) -> SystemExit:
    """Bad input: one line on stderr, exit 2 (raise what this returns)."""
    print(f"validate_adapter.py: error: {message}", file=sys.stderr)
    return SystemExit(2)


#: The numbers (booleans included) every episode line of this script has.
_EPISODE_NUMBERS = ("success", "progress", "steps", "valid_steps", "loops", "seconds")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)  # NaN is no figure


def _read_episodes(path: Path) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(path.read_bytes().split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise _refuse(f"{path}:{n}: not a JSON line ({exc}); remove it to start again") from None
        names = isinstance(row, dict) and all(isinstance(row.get(k), str) for k in ("agent", "domain", "problem"))
        if not names or not all(_is_number(row.get(k)) for k in _EPISODE_NUMBERS):
            raise _refuse(f"{path}:{n}: not an episode of this script (agent, domain, problem and "
                             f"{', '.join(_EPISODE_NUMBERS)}); remove it to start again")
        rows.append(row)
    return rows


def _read_previous(path: Path) -> dict[str, Any]:
    """The figures OUT holds from an earlier run ({} when there is no file); one line and exit 2 when OUT
    is not such a file (another program's JSON, a truncated copy)."""
    if not path.is_file():
        return {}
    try:
        previous = json.loads(path.read_bytes())
    except (ValueError, RecursionError) as exc:
        raise _refuse(f"--out {path}: not valid JSON ({exc}); give the figures file this script wrote") from None
    if not isinstance(previous, dict):
        raise _refuse(f"--out {path}: not a figures file of this script (not a JSON object); give the file it wrote")
    if not isinstance(previous.get("held_out_set", "standard"), str):
        raise _refuse(f"--out {path}: held_out_set is not a set's name")
    return previous


def _play_all(jobs: list[Any], args: argparse.Namespace, lora: str | None, episodes_path: Path,
              done: list[dict[str, Any]]) -> bool:
    """Play `jobs` in worker processes, appending each episode as it ends; False when stopped (SIGTERM,
    Ctrl-C): the episodes under way are dropped, the workers ended, the file resumable."""
    from concurrent.futures.process import BrokenProcessPool

    from pddlworlds.files import open_no_follow
    from pddlworlds.processes import end_processes, pool_processes, signals_interrupt

    pool = ProcessPoolExecutor(args.workers, initializer=_init_worker, initargs=(lora, args.threads))
    finished = False
    try:
        with signals_interrupt("validate_adapter"):
            for row in pool.map(_play, jobs) if jobs else ():
                done.append(row)
                fd = open_no_follow(episodes_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, keep_content=True)
                with os.fdopen(fd, "a") as handle:
                    handle.write(json.dumps(row) + "\n")
                print(f"{row['agent']:9} {row['domain']}/{row['problem']}: success={row['success']} "
                      f"progress={row['progress']:.2f} valid={row['valid_steps']}/{row['steps']} "
                      f"loops={row['loops']} {row['seconds']}s", file=sys.stderr)
            finished = True
    except KeyboardInterrupt:
        print(f"interrupted: {len(done)} episodes are in {episodes_path}; run the same command to resume",
              file=sys.stderr)
    except BrokenProcessPool as exc:
        raise SystemExit(f"a worker process died ({exc}); the finished episodes are in {episodes_path}") from None
    finally:
        workers = [] if finished else pool_processes(pool)
        pool.shutdown(wait=finished, cancel_futures=True)
        end_processes(workers)
    return finished


def main(argv: list[str] | None = None) -> int:
    from pddlworlds.training.problems import HELD_OUT_SETS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lora", default="shipped", help="GGUF adapter, 'shipped' (default) or 'none'")
    parser.add_argument("--out", type=Path, required=True, help="JSON figures; episodes go to OUT.episodes.jsonl")
    parser.add_argument("--agents", default="standard,hiagent")
    parser.add_argument("--domains", default="all")
    parser.add_argument("--set", dest="held_out_set", default=None, choices=list(HELD_OUT_SETS),
                        help="held-out set: standard (24 problems, all levels; the default), wide (48, medium and "
                             "hard only) or public-like (60, drawn like the public problems); with --report-only, "
                             "the set recorded in OUT")
    parser.add_argument("--max-steps", type=int, default=30)
    parser.add_argument("--limit", type=int, default=0, help="only the first N problems of each domain (default: all)")
    parser.add_argument("--setting", default="free", help="the agents' setting: free (default), admissible, state-choice")
    parser.add_argument("--choice-score", default=None,
                        help="a ranking rule other than the setting's (sum, token-mean, word-mean)")
    parser.add_argument("--workers", type=int, default=1, help="processes, each with its own model")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads per worker")
    parser.add_argument("--report-only", action="store_true",
                        help="play nothing: the figures of the episodes already in OUT.episodes.jsonl (the adapter "
                             "recorded in OUT, when it exists, is kept)")
    parser.add_argument("--compare", type=Path, default=None, metavar="OTHER.json",
                        help="pair the episodes with another adapter's (OTHER.json.episodes.jsonl) and test the differences")
    args = parser.parse_args(argv)

    from pddlworlds.files import atomic_write, file_sha256
    from pddlworlds.generators import DOMAINS
    from pddlworlds.training.problems import held_out_problems
    from pddlworlds.training.validation import compare, summarize

    previous = _read_previous(args.out) if args.report_only else {}
    if args.held_out_set is None:
        args.held_out_set = previous.get("held_out_set", "standard")
    if args.held_out_set not in HELD_OUT_SETS:
        raise _refuse(f"--out {args.out}: held-out set {args.held_out_set!r} is none of {', '.join(HELD_OUT_SETS)}")
    lora = None if args.lora == "none" else args.lora
    if lora not in (None, "shipped") and not Path(lora).is_file():
        parser.error(f"--lora: no such adapter file: {lora}")
    if lora not in (None, "shipped") and not args.report_only:  # a bad file would crash every worker
        from pddlworlds.llm import default_model_path
        from pddlworlds.llm.adapter_check import AdapterError, check_adapter

        try:
            check_adapter(lora, default_model_path())
        except AdapterError as exc:
            raise _refuse(f"--lora: {exc}") from None
    domain_names = list(DOMAINS) if args.domains == "all" else args.domains.split(",")
    agents = args.agents.split(",")
    episodes_path = args.out.with_name(args.out.name + ".episodes.jsonl")
    other_path = None if args.compare is None else args.compare.with_name(args.compare.name + ".episodes.jsonl")
    if other_path is not None and not other_path.is_file():
        parser.error(f"--compare: no episodes at {other_path}")
    done: list[dict[str, Any]] = _read_episodes(episodes_path) if episodes_path.is_file() else []
    finished = {(r["domain"], r["problem"], r["agent"]) for r in done}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        problems = held_out_problems(tmp, domain_names, args.held_out_set)
        # the i-th problem of every domain, both agents, before the (i+1)-th: a partial run covers all domains
        order = {id(p): i for d in domain_names for i, p in enumerate(q for q in problems if q.domain == d)}
        problems = sorted(problems, key=lambda p: order[id(p)])
        if args.limit:  # the first N of each domain, in the set's order
            problems = [p for p in problems if order[id(p)] < args.limit]
        jobs = [(p, a, args.max_steps, args.setting, args.choice_score)
                for p in problems for a in agents if (p.domain, p.name, a) not in finished]
        if args.report_only:
            jobs = []
        print(f"{len(jobs)} episodes to play ({len(finished)} already in {episodes_path})", file=sys.stderr)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        if not _play_all(jobs, args, lora, episodes_path, done):
            return 130
    names = {(p.domain, p.name) for p in problems}  # the set's episodes only, whatever else OUT holds
    mine = [r for r in done if r["agent"] in agents and (r["domain"], r["problem"]) in names]
    figures = summarize(mine)
    if previous:  # --report-only: the episodes' adapter is the one that played them, not --lora's
        adapter = {k: previous.get(k) for k in ("adapter", "adapter_sha256")}
    else:
        adapter_file = None if lora is None else (lora if lora != "shipped" else None)
        if lora == "shipped":
            from pddlworlds.llm import shipped_adapter_path

            adapter_file = str(shipped_adapter_path())
        adapter = {"adapter": adapter_file, "adapter_sha256": file_sha256(adapter_file) if adapter_file else None}
    result = {
        **adapter,
        "held_out_set": args.held_out_set,
        "agents": agents,
        "domains": domain_names,
        "max_steps": args.max_steps,
        "limit": previous.get("limit", args.limit) if previous else args.limit,
        "setting": previous.get("setting", args.setting) if previous else args.setting,
        "choice_score": previous.get("choice_score", args.choice_score) if previous else args.choice_score,
        "workers": args.workers,
        "threads": args.threads,
        "episodes_missing": len(problems) * len(agents) - sum(f["episodes"] for k, f in figures.items() if k.endswith("/all")),
        "wall_seconds_this_run": round(time.perf_counter() - start, 1),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "figures": figures,
    }
    if previous:  # --report-only played nothing: how the episodes were played stays as recorded
        result.update({k: previous[k] for k in _HOW_PLAYED if k in previous})
    comparison = None
    if other_path is not None:
        try:
            comparison = compare(mine, _read_episodes(other_path))
        except ValueError as exc:
            raise SystemExit(f"--compare {args.compare}: {exc}") from exc
        result["compared_with"] = {"episodes": str(other_path), "figures": comparison}
    atomic_write(args.out, json.dumps(result, indent=2) + "\n")
    print(_table(figures))
    if comparison is not None:
        print(f"\nthis adapter against {args.compare} (paired by agent, domain and problem):")
        print(_comparison_table(comparison))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
