#!/usr/bin/env python3
"""Measure an adapter on the held-out problems: SR, PR, executability, loops and seconds per step.

The held-out problems (`pddlworlds.training.problems.HELD_OUT_SETS`: generated, fixed seeds, never
trained on and never a shipped one; `--set standard`, 6 a domain over the three levels, `--set wide`,
the public sizes only, medium and hard, 48 problems, or `--set public-like`, 60 problems drawn like the
public ones, as many a domain as the public set has) are played by STANDARD and HiAgent, 30 steps, free
decoding, with the embedded model and the given adapter. They are played by `pddlworlds eval`'s runner
into the run folder `<out>.run/` (its `config.json`, the episodes as they finish; the set's problems
laid out as domain folders in `<out>.run/held-out-problems/`), so an interrupted run resumes where it
stopped when the same command is run again (other options are refused, naming what differs); the figures
(per agent and domain, per agent and generator level, and per agent over all; loops counted by replaying
each episode's actions) are printed as a table and written to `<out>` as JSON, the row format of the table
of rounds in docs/training.md. The `<out>.episodes.jsonl` of the older script (its rows) is still read by
`--report-only` and `--compare`, and never added to.

    python scripts/validate_adapter.py --lora models/gemma-3-270m-pddlworlds-lora-v1.gguf --out /tmp/v1.json
    python scripts/validate_adapter.py --lora /work/train/round0/adapter.gguf --out /tmp/r0.json --workers 2
    python scripts/validate_adapter.py --out /tmp/r0.json --report-only --compare /tmp/v1.json
    python scripts/validate_adapter.py --lora /work/train/round0/adapter.gguf --set wide --out /tmp/r0-wide.json
    python scripts/validate_adapter.py --set public-like --out /tmp/v1-public-like.json --workers 2

`--compare B.json` pairs these episodes with B's (in `B.json.run/`, or an older `B.json.episodes.jsonl`;
same agent, domain and problem) and prints, per agent
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
from pathlib import Path
from typing import Any

#: What a run that plays records about how it played; `--report-only` keeps these from OUT.
_HOW_PLAYED = ("max_steps", "workers", "threads", "wall_seconds_this_run", "load_average_at_end", "cpus")
#: Where the set's problems are laid out inside the run folder (`training.validation.held_out_domains`).
_PROBLEMS_FOLDER = "held-out-problems"


def run_folder(out: Path) -> Path:
    """The run folder of figures file `out`: `<out>.run/`."""
    return out.with_name(out.name + ".run")


def legacy_episodes(out: Path) -> Path:
    """The episode file the older script kept beside figures file `out` (rows, not run lines)."""
    return out.with_name(out.name + ".episodes.jsonl")


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


#: The numbers (booleans included) every row of the older script's episode file has.
_EPISODE_NUMBERS = ("success", "progress", "steps", "valid_steps", "loops", "seconds")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)  # NaN is no figure


def _read_legacy_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of an older `OUT.episodes.jsonl` (one held-out row a line); one line and exit 2 on a line
    that is not one."""
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


def _read_rows(out: Path, option: str) -> tuple[list[dict[str, Any]], Path] | None:
    """The held-out rows of figures file `out` and where they came from: its run folder `OUT.run/` (each
    episode replayed for its loops), else the older `OUT.episodes.jsonl`; None when it has neither."""
    from pddlworlds.artefacts.runs import RunFolderError, read_run
    from pddlworlds.records import RecordError
    from pddlworlds.training.validation import held_out_rows

    run, legacy = run_folder(out), legacy_episodes(out)
    if run.is_dir():
        try:
            folder = read_run(run)
            return held_out_rows(folder.lines, folder.config.get("domains_root")), run
        except (RunFolderError, RecordError, ValueError) as exc:
            raise _refuse(f"{option} {out}: {exc}") from None
    if legacy.is_file():
        return _read_legacy_rows(legacy), legacy
    return None


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


def _plan(args: argparse.Namespace, lora: str | None, root: Path, split: str,
          problems: dict[str, list[str]]) -> Any:
    """The evaluation's plan: the agents on the set's problems (in the set's order) with the embedded model
    and the adapter, one seed, checked as `pddlworlds eval` checks its options."""
    from pddlworlds.evaluation.options import build_plan

    options = argparse.Namespace(
        agents=",".join(args.agents), domains=",".join(problems), split=split, domains_root=str(root),
        problems=",".join(f"{d}:{name}" for d, names in problems.items() for name in names), limit=None,
        seeds="0", max_steps=args.max_steps, setting=args.setting, decoding=None, choice_score=args.choice_score,
        observation_mode=None, prompt_file=None, profile=None, allow_impossible=False, llm="embedded",
        base_url=None, api_key=None, lora="none" if lora is None else lora,
        score_all_candidates=args.score_all_candidates,
    )
    plan = build_plan(options)
    if args.workers == 1 and plan.backend.kind != "none":  # more workers share the cores (the runner's rule)
        import dataclasses

        plan = dataclasses.replace(plan, backend=dataclasses.replace(plan.backend, n_threads=args.threads))
    return plan


def _play(args: argparse.Namespace, lora: str | None, run: Path, names: dict[str, list[str]]) -> int | None:
    """Play the set's episodes not yet in run folder `run` (the evaluation's runner: resumable, each episode
    stored as it ends); an exit status when the run did not finish (None when it did)."""
    from pddlworlds.evaluation.errors import EvaluationError, RunStopped
    from pddlworlds.evaluation.runner import run_evaluation
    from pddlworlds.processes import signals_interrupt
    from pddlworlds.training.validation import held_out_domains

    def told(line: dict[str, Any]) -> None:
        trajectory = line.get("trajectory") or []
        print(f"{line['agent']:9} {line['domain']}/{line['problem']}: success={line['success']} "
              f"progress={line['progress']:.2f} valid={sum(1 for s in trajectory if s.get('valid'))}/"
              f"{len(trajectory)} {line.get('run_time_s', 0):.1f}s", file=sys.stderr)

    root = run / _PROBLEMS_FOLDER
    split, laid_out = held_out_domains(root, list(names), args.held_out_set)
    problems = {d: [n for n in laid_out[d] if n in names[d]] for d in names}
    try:
        plan = _plan(args, lora, root, split, problems)
        with signals_interrupt("validate_adapter"):
            try:
                result = run_evaluation(plan, run, workers=args.workers, progress=False, on_line=told)
            except KeyboardInterrupt:
                result = None
    except RunStopped as exc:  # stopped mid-run: what finished is stored
        print(f"validate_adapter.py: error: {exc}", file=sys.stderr)
        return 1
    except (EvaluationError, ValueError) as exc:  # refused before anything played
        raise _refuse(str(exc)) from None
    if result is None or result.interrupted:
        print(f"interrupted: the finished episodes are in {run}; run the same command to resume", file=sys.stderr)
        return 130
    if result.failures:
        print(f"{len(result.failures)} episodes raised (in {run}/errors.jsonl); run the same command to retry them",
              file=sys.stderr)
    return None


def main(argv: list[str] | None = None) -> int:
    from pddlworlds.training.problems import HELD_OUT_SETS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lora", default="shipped", help="GGUF adapter, 'shipped' (default) or 'none'")
    parser.add_argument("--out", type=Path, required=True,
                        help="JSON figures; the episodes go to the run folder OUT.run/")
    parser.add_argument("--agents", default="standard,hiagent",
                        help="agents, as `pddlworlds eval --agents` names them (default: standard,hiagent)")
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
    parser.add_argument("--score-all-candidates", action="store_true",
                        help="score every candidate whole (for scripts/choice_agreement.py), as eval's option")
    parser.add_argument("--workers", type=int, default=1, help="processes, each with its own model")
    parser.add_argument("--threads", type=int, default=1,
                        help="llama.cpp threads of the one worker (with more workers, each gets its share of the cores)")
    parser.add_argument("--report-only", action="store_true",
                        help="play nothing: the figures of the episodes already in OUT.run/ (or an older "
                             "OUT.episodes.jsonl; the adapter recorded in OUT, when it exists, is kept)")
    parser.add_argument("--compare", type=Path, default=None, metavar="OTHER.json",
                        help="pair the episodes with another adapter's (OTHER.json.run/, or an older "
                             "OTHER.json.episodes.jsonl) and test the differences")
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
    if lora not in (None, "shipped") and not args.report_only:  # refused in one line, before any model loads
        from pddlworlds.llm import default_model_path
        from pddlworlds.llm.adapter_check import AdapterError, check_adapter

        try:
            check_adapter(lora, default_model_path())
        except AdapterError as exc:
            raise _refuse(f"--lora: {exc}") from None
    if args.compare is not None and not (run_folder(args.compare).is_dir() or legacy_episodes(args.compare).is_file()):
        parser.error(f"--compare: no episodes at {run_folder(args.compare)} nor {legacy_episodes(args.compare)}")
    if not args.report_only and legacy_episodes(args.out).is_file():
        raise _refuse(f"--out {args.out}: {legacy_episodes(args.out)} holds episodes of the older script, which "
                      "this one does not add to: read them with --report-only, or play into another --out")
    domain_names = list(DOMAINS) if args.domains == "all" else args.domains.split(",")
    args.agents = args.agents.split(",")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            problems = held_out_problems(tmp, domain_names, args.held_out_set)
        except ValueError as exc:  # a domain the set does not have
            raise _refuse(f"--domains: {exc}") from None
    names = {d: [p.name for p in problems if p.domain == d] for d in domain_names}
    if args.limit:  # the first N of each domain, in the set's order
        names = {d: n[:args.limit] for d, n in names.items()}
    if not args.report_only:
        run_folder(args.out).parent.mkdir(parents=True, exist_ok=True)
        stopped = _play(args, lora, run_folder(args.out), names)
        if stopped is not None:
            return stopped
    found = _read_rows(args.out, "--out")
    done, source = found if found is not None else ([], run_folder(args.out))
    wanted = {(d, n) for d, ns in names.items() for n in ns}  # the set's episodes only, whatever else OUT holds
    mine = [r for r in done if r["agent"] in args.agents and (r["domain"], r["problem"]) in wanted]
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
        "agents": args.agents,
        "domains": domain_names,
        "max_steps": args.max_steps,
        "limit": previous.get("limit", args.limit) if previous else args.limit,
        "setting": previous.get("setting", args.setting) if previous else args.setting,
        "choice_score": previous.get("choice_score", args.choice_score) if previous else args.choice_score,
        "workers": args.workers,
        "threads": args.threads,
        "episodes": str(source),
        "episodes_missing": len(wanted) * len(args.agents) - sum(f["episodes"] for k, f in figures.items() if k.endswith("/all")),
        "wall_seconds_this_run": round(time.perf_counter() - start, 1),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "figures": figures,
    }
    if previous:  # --report-only played nothing: how the episodes were played stays as recorded
        result.update({k: previous[k] for k in _HOW_PLAYED if k in previous})
    comparison = None
    if args.compare is not None:
        other = _read_rows(args.compare, "--compare")
        assert other is not None  # checked above
        try:
            comparison = compare(mine, other[0])
        except ValueError as exc:
            raise SystemExit(f"--compare {args.compare}: {exc}") from exc
        result["compared_with"] = {"episodes": str(other[1]), "figures": comparison}
    atomic_write(args.out, json.dumps(result, indent=2) + "\n")
    print(_table(figures))
    if comparison is not None:
        print(f"\nthis adapter against {args.compare} (paired by agent, domain and problem):")
        print(_comparison_table(comparison))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
