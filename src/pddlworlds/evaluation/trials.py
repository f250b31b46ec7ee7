"""Trials: the problem set played N times, with an optional memory updated from each trial's episodes
before the next (such as the insight store, `pddlworlds.insights.InsightMemory`).

    out/trials.json      the trial count and the memory's identity (compared on resume; N may grow)
    out/memory/          the memory's own files (for insights: a store version per trial and update logs)
    out/trial-<t>/       trial t as an ordinary run folder; its config.json records what memory it read
    out/trials.md        SR/PR per trial and agent, and the memory's columns (e.g. rules per scale)

A run killed at any point resumes at the right trial: a trial whose memory update is done is skipped;
otherwise its run folder resumes as any run does, and the update is made again from its stored episodes.
This module never imports a memory: anything with the `TrialMemory` methods (`pddlworlds.agents.insights`)
will do. The run loop's part: each episode's spec carries the trial and what the memory hands out for it
(`memory.use(...)`, an `InsightSource`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents.insights import TrialMemory
from ..artefacts.runs import is_errored
from ..files import atomic_write, own_folder, refuse_folder_link
from ..planning.baselines import BASELINE_TIMEOUT, BASELINES_FILE, read_baselines, write_baselines
from ..printable import markdown_cell
from ..records import MAX_DEPTH, nesting_depth
from ..scoring.metrics import aggregate
from ..worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS
from .configuration import config_differences
from .episode import llm_for
from .errors import EvaluationError, RunStopped
from .runner import RunResult, run_evaluation
from .spec import RunPlan
from .store import RunStore

__all__ = [
    "MEMORY_DIR",
    "TRIALS_FILE",
    "TrialsResult",
    "cmd_trials",
    "run_trials",
    "trial_dir",
    "trial_rows",
    "write_trials_report",
]

TRIALS_FILE = "trials.json"
TRIALS_REPORT = "trials.md"
MEMORY_DIR = "memory"
TRIALS_FORMAT = 1


@dataclass
class TrialsResult:
    out: Path
    planned: int  # trials asked for
    done: int  # trials finished (and, with a memory, updated)
    results: list[RunResult] = field(default_factory=list)  # runs played by this call
    interrupted: bool = False

    @property
    def complete(self) -> bool:
        return self.done >= self.planned


def trial_dir(out: str | os.PathLike[str], trial: int) -> Path:
    return Path(out) / f"trial-{trial}"


def _lines(out: Path, trial: int) -> list[dict[str, Any]]:
    return RunStore(trial_dir(out, trial)).load_lines()


def _check_identity(out: Path, trials: int, plan: RunPlan, memory: TrialMemory | None) -> None:
    folder = out / MEMORY_DIR
    for trial in range(1, trials + 1):  # a link planted in a shared folder cannot lead writes elsewhere
        refuse_folder_link(trial_dir(out, trial))
    if memory is not None:
        own_folder(folder)
        memory.prepare(folder)
    identity = {
        "format": TRIALS_FORMAT,
        "agents": list(plan.agents),
        "memory": memory.identity(folder) if memory is not None else None,
    }
    path = out / TRIALS_FILE
    if path.is_file():
        try:
            stored = json.loads(path.read_bytes())
        except (ValueError, RecursionError) as exc:
            raise EvaluationError(f"{path}: not valid JSON ({exc}); move it away to start anew") from None
        if not isinstance(stored, dict) or nesting_depth(stored) > MAX_DEPTH:
            raise EvaluationError(f"{path}: not a trials file of this package; move it away to start anew")
        differences = config_differences({k: v for k, v in stored.items() if k != "trials"}, identity)
        if differences:
            raise EvaluationError(
                f"refusing to resume {out}: its trials were run with other options:\n  "
                + "\n  ".join(differences)
                + "\nRepeat the original options to resume, or choose another --out."
            )
    atomic_write(path, json.dumps({**identity, "trials": trials}, indent=2) + "\n", fsync=True)


def run_trials(
    plan: RunPlan,
    out: str | os.PathLike[str],
    trials: int,
    memory: TrialMemory | None = None,
    *,
    workers: int | None = 1,
    executor: str = "local",
    progress: bool = True,
    on_event: Callable[[str, int], None] | None = None,
    baseline_timeout: float | None = BASELINE_TIMEOUT,
) -> TrialsResult:
    """Play `plan` `trials` times in `out`, updating `memory` (if any) after each trial.

    `on_event(name, trial)` is called with "trial_played" (episodes stored, memory not yet updated) and
    "trial_done"; tests use it to kill the process there. A `--domains-root` domain's optimal plans are
    planned in the first trial (`baseline_timeout` s each, as `run_evaluation`) and carried to the others.
    """
    if trials < 1:
        raise EvaluationError("--trials must be at least 1")
    if memory is not None and not plan.needs_llm():
        raise EvaluationError(
            "a trial memory (--insights) needs an agent that uses a model (standard, hiagent, ...)"
        )
    if memory is not None and plan.prompt_file is not None:
        raise EvaluationError(
            "a trial memory (--insights) cannot be combined with --prompt-file: AgentBoard's STANDARD "
            "keeps AgentBoard's own prompt, with no place for insights"
        )
    with memory.hold() if memory is not None else contextlib.nullcontext():
        return _play_trials(plan, Path(out), trials, memory, workers, executor, progress, on_event, baseline_timeout)


def _play_trials(
    plan: RunPlan,
    out: Path,
    trials: int,
    memory: TrialMemory | None,
    workers: int | None,
    executor: str,
    progress: bool,
    on_event: Callable[[str, int], None] | None,
    baseline_timeout: float | None,
) -> TrialsResult:
    folder = out / MEMORY_DIR
    with RunStore(out).lock():
        _check_identity(out, trials, plan, memory)
    result = TrialsResult(out, trials, 0)
    llm = None
    for trial in range(1, trials + 1):
        if memory is not None and memory.done(folder, trial):
            result.done = trial
            continue
        trial_plan = dataclasses.replace(
            plan, insights=memory.use(folder, trial) if memory is not None else None, trial=trial
        )
        _carry_baselines(out, trial)
        run = run_evaluation(
            trial_plan, trial_dir(out, trial), workers=workers, executor=executor, progress=progress,
            baseline_timeout=baseline_timeout,
        )
        result.results.append(run)
        if run.interrupted or not run.complete:
            result.interrupted = run.interrupted
            return result
        if on_event is not None:
            on_event("trial_played", trial)
        if memory is not None:
            if llm is None:
                llm = llm_for(
                    plan.backend
                )  # the agents' backend (the run's model when it is in this process)
            with RunStore(out).lock():
                earlier = [_lines(out, t) for t in range(1, trial)]
                try:
                    memory.update(folder, trial, run.lines, earlier, llm)
                except (OSError, RuntimeError) as exc:  # e.g. the model server gone (LLMServiceError)
                    raise RunStopped(
                        f"the memory update after trial {trial} failed ({type(exc).__name__}: {exc}); the trial's "
                        "episodes are stored. Run the same command again to make the update."
                    ) from exc
        result.done = trial
        if on_event is not None:
            on_event("trial_done", trial)
    write_trials_report(out, memory)
    return result


def _carry_baselines(out: Path, trial: int) -> None:
    """Start a later trial's optimal plans from the first trial's, so no problem is planned twice."""
    first = trial_dir(out, 1) / BASELINES_FILE
    here = trial_dir(out, trial) / BASELINES_FILE
    if trial > 1 and first.is_file():
        known = read_baselines(first)
        known.update(read_baselines(here))
        here.parent.mkdir(parents=True, exist_ok=True)
        write_baselines(here, known)


def trial_rows(out: str | os.PathLike[str], memory: TrialMemory | None = None) -> list[dict[str, Any]]:
    """One row per (trial, agent) with episodes on file: trial, agent, n, sr and pr (fractions, faulted
    episodes left out), plus the memory's columns after the trial."""
    out = Path(out)
    rows = []
    trial = 1
    while trial_dir(out, trial).is_dir():
        lines = [line for line in _lines(out, trial) if not is_errored(line)]
        extra = memory.columns(out / MEMORY_DIR, trial) if memory is not None else {}
        for agent in dict.fromkeys(line["agent"] for line in lines):
            mine = [line for line in lines if line["agent"] == agent]
            summary = aggregate(mine, int(mine[0].get("meta", {}).get("max_steps", DEFAULT_MAX_EPISODE_STEPS)))
            rows.append(
                {
                    "trial": trial,
                    "agent": agent,
                    "n": summary["n"],
                    "sr": summary["sr"],
                    "pr": summary["pr"],
                    **extra,
                }
            )
        trial += 1
    return rows


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def write_trials_report(out: str | os.PathLike[str], memory: TrialMemory | None = None) -> Path:
    """`<out>/trials.md`: SR and PR per trial and agent, and the memory's columns after each trial."""
    out = Path(out)
    rows = trial_rows(out, memory)
    extra = list(memory.columns(out / MEMORY_DIR, 0)) if memory is not None else []
    lines = [
        "# Trials",
        "",
        "SR and PR in percent over each trial's episodes (faulted episodes left out)"
        + (
            "; the memory's columns after the trial's update (row 0: before the first trial)."
            if extra
            else "."
        ),
        "",
        "| Trial | Agent | n | SR | PR |" + "".join(f" {c} |" for c in extra),
        "|---|---|---|---|---|" + "---|" * len(extra),
    ]
    if extra:
        start = memory.columns(out / MEMORY_DIR, 0)
        lines.append("| 0 | | | | |" + "".join(f" {start[c]} |" for c in extra))
    for row in rows:
        cells = [str(row["trial"]), row["agent"], str(row["n"]), _percent(row["sr"]), _percent(row["pr"])]
        lines.append("| " + " | ".join(map(markdown_cell, cells + [row[c] for c in extra])) + " |")
    path = out / TRIALS_REPORT
    atomic_write(path, "\n".join(lines) + "\n")
    return path


def cmd_trials(args: Any, plan: RunPlan, memory: TrialMemory | None) -> int:
    """`eval --trials N` (and a memory, e.g. from --insights): run or resume the trials, write each
    trial's report, print SR/PR per trial."""
    from ..reports.report import write_report

    result = run_trials(
        plan,
        args.out,
        args.trials,
        memory,
        workers=args.workers,
        executor=args.executor,
        progress=not args.no_progress,
        baseline_timeout=args.optimal_timeout if args.optimal_timeout > 0 else None,
    )
    if not args.no_report:
        for run in result.results:
            if run.lines:
                write_report(run.out)
    path = write_trials_report(args.out, memory)
    if getattr(args, "format", "table") == "table":
        print(path.read_text(), end="")
    else:  # the rows `trial_rows` gives, for programs
        from ..tables import Column, print_rows

        rows = trial_rows(args.out, memory)
        extra = list(memory.columns(Path(args.out) / MEMORY_DIR, 0)) if memory is not None else []
        print_rows(rows, [Column(k, k) for k in ["trial", "agent", "n", "sr", "pr", *extra]], args.format)
    if not result.complete:
        print(
            f"stopped in trial {result.done + 1} of {result.planned}; run the same command again to resume.",
            file=sys.stderr,
        )
        return 130 if result.interrupted else 1
    print(f"{result.done} trial(s) done -> {args.out}", file=sys.stderr)
    return 0
