"""Trials with cross-trial insight memory (issue 13): the problem set played N times, the insight store
updated from each trial's episodes before the next.

    out/trials.json                 what the trials measure (insight options; compared on resume)
    out/insights/store-0.json       the store the first trial reads (the --insights file as it was)
    out/insights/store-<t>.json     the store after trial t (written once, last, so it marks t as done)
    out/insights/update-<t>.jsonl   trial t's generation calls: experience, reply, operations, rejections
    out/trial-<t>/                  trial t as an ordinary run folder (config.json records the store it read)
    out/trials.md                   SR/PR per trial and agent, rules per scale after each trial

A run killed at any point resumes at the right trial with the same store: a trial whose `store-<t>.json`
exists is done; otherwise its run folder resumes as any run does, and its update is made again from its
stored episodes and `store-<t-1>.json`. After each update the store is also written to the --insights file.

This module is a layer over `run_evaluation`; the run loop's only part in it is the hook marked
"issue 13" in the runner: an episode's spec carries the store to read (`InsightUse`) and the trial index.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files import atomic_write
from ..insights import MODES, GenerationOptions, InsightStore, InsightUse, select_experiences, update_store
from ..insights.editing import DEFAULT_CAP
from ..insights.prompts import INSIGHT_PROMPTS_VERSION
from ..insights.store import SCALE_KINDS
from .metrics import aggregate
from .runner import EvaluationError, RunPlan, RunResult, RunStore, run_evaluation

__all__ = [
    "TRIALS_FILE",
    "TrialOptions",
    "TrialsResult",
    "run_trials",
    "store_path",
    "trial_dir",
    "trial_rows",
    "write_trials_report",
]

TRIALS_FILE = "trials.json"
TRIALS_REPORT = "trials.md"
TRIALS_FORMAT = 1


@dataclass(frozen=True)
class TrialOptions:
    """`--trials`, `--insights` and the insight options of `pddlworlds eval`."""

    trials: int
    insights: str  # the user's store file: read before the first trial, written after each
    mode: str = "pair"  # experience selection: success | pair
    cap: int = DEFAULT_CAP  # rules per scale
    limit: int | None = None  # rules shown per episode (None: all that apply)
    embedding: str | None = None  # e.g. transformers:<model>: rank rules by similarity to the goal
    max_tokens: int = 160  # per generation call

    def check(self) -> None:
        if self.trials < 1:
            raise EvaluationError("--trials must be at least 1")
        if self.mode not in MODES:
            raise EvaluationError(f"unknown --insight-mode {self.mode!r}; modes: {', '.join(MODES)}")
        if self.cap < 1:
            raise EvaluationError("--insight-cap must be at least 1")
        if self.limit is not None and self.limit < 1:
            raise EvaluationError("--insight-limit must be at least 1")

    def identity(self) -> dict[str, Any]:
        """What the run configuration records (the trial count may grow on resume; the file path is not
        compared, the first store's content is)."""
        return {
            "mode": self.mode,
            "cap": self.cap,
            "limit": self.limit,
            "embedding": self.embedding,
            "max_tokens": self.max_tokens,
            "prompts_version": INSIGHT_PROMPTS_VERSION,
        }


@dataclass
class TrialsResult:
    out: Path
    planned: int  # trials asked for
    done: int  # trials finished with their store written
    results: list[RunResult] = field(default_factory=list)  # runs played by this call
    interrupted: bool = False

    @property
    def complete(self) -> bool:
        return self.done >= self.planned


def trial_dir(out: str | os.PathLike[str], trial: int) -> Path:
    return Path(out) / f"trial-{trial}"


def store_path(out: str | os.PathLike[str], trial: int) -> Path:
    """The store after `trial` (0: before the first)."""
    return Path(out) / "insights" / f"store-{trial}.json"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _prepare(out: Path, options: TrialOptions, plan: RunPlan) -> dict[str, Any]:
    """Write (or check) trials.json and store-0.json; the trials' identity."""
    first = store_path(out, 0)
    if not first.is_file():
        source = Path(options.insights)
        store = InsightStore.load(source) if source.is_file() else InsightStore()
        store.save(first)
    identity = {
        "format": TRIALS_FORMAT,
        "agents": list(plan.agents),
        "insights": {**options.identity(), "initial_store_sha256": _sha256(first)},
    }
    path = out / TRIALS_FILE
    if path.is_file():
        stored = json.loads(path.read_text())
        differences = [
            f"{key} (stored {json.dumps(stored.get(key))}, now {json.dumps(identity[key])})"
            for key in identity
            if stored.get(key) != identity[key]
        ]
        if differences:
            raise EvaluationError(
                f"refusing to resume {out}: its trials were run with other insight options:\n  "
                + "\n  ".join(differences)
                + "\nRepeat the original options to resume, or choose another --out."
            )
    atomic_write(path, json.dumps({**identity, "trials": options.trials}, indent=2) + "\n", fsync=True)
    return identity


def _lines(out: Path, trial: int) -> list[dict[str, Any]]:
    return RunStore(trial_dir(out, trial)).load_lines()


def run_trials(
    plan: RunPlan,
    out: str | os.PathLike[str],
    options: TrialOptions,
    *,
    workers: int | None = 1,
    backend: str = "local",
    progress: bool = True,
    on_event: Callable[[str, int], None] | None = None,
) -> TrialsResult:
    """Play `plan` `options.trials` times in `out`, updating the insight store after each trial.

    `on_event(name, trial)` is called with "trial_played" (episodes stored, store not yet updated) and
    "store_written"; tests use it to kill the process there.
    """
    options.check()
    if not plan.needs_llm():
        raise EvaluationError("--insights needs an agent that uses a model (standard, hiagent, ...)")
    out = Path(out)
    with RunStore(out).lock():
        _prepare(out, options, plan)
    result = TrialsResult(out, options.trials, 0)
    llm = None
    for trial in range(1, options.trials + 1):
        if store_path(out, trial).is_file():
            result.done = trial
            continue
        use = InsightUse(str(store_path(out, trial - 1).resolve()), options.limit, options.embedding)
        trial_plan = dataclasses.replace(plan, insights=use, trial=trial)
        run = run_evaluation(trial_plan, trial_dir(out, trial), workers=workers, backend=backend, progress=progress)
        result.results.append(run)
        if run.interrupted or not run.complete:
            result.interrupted = run.interrupted
            return result
        if on_event is not None:
            on_event("trial_played", trial)
        if llm is None:
            llm = plan.backend.build()  # the same backend the agents used
        with RunStore(out).lock():
            store = InsightStore.load(store_path(out, trial - 1))
            earlier = [_lines(out, t) for t in range(1, trial)]
            experiences = select_experiences(options.mode, run.lines, earlier)
            log = update_store(store, experiences, llm, GenerationOptions(cap=options.cap, max_tokens=options.max_tokens))
            atomic_write(
                out / "insights" / f"update-{trial}.jsonl",
                "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in log),
                fsync=True,
            )
            store.save(store_path(out, trial))  # last: it marks the trial as done
            store.save(options.insights)
        result.done = trial
        if on_event is not None:
            on_event("store_written", trial)
    write_trials_report(out)
    return result


def trial_rows(out: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """One row per (trial, agent) with episodes on file: n, SR and PR (fractions), and the rules per scale
    kind in the store after the trial (None while its update is not written)."""
    out = Path(out)
    rows = []
    trial = 1
    while trial_dir(out, trial).is_dir():
        lines = [line for line in _lines(out, trial) if not line.get("error")]
        after = store_path(out, trial)
        counts = InsightStore.load(after).counts() if after.is_file() else None
        for agent in dict.fromkeys(line["agent"] for line in lines):
            mine = [line for line in lines if line["agent"] == agent]
            max_steps = int(mine[0].get("meta", {}).get("max_steps", 30))
            summary = aggregate(mine, max_steps)
            rows.append({"trial": trial, "agent": agent, "n": summary["n"], "sr": summary["sr"], "pr": summary["pr"], "rules": counts})
        trial += 1
    return rows


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def write_trials_report(out: str | os.PathLike[str]) -> Path:
    """`<out>/trials.md`: SR and PR per trial and agent, and the rules per scale after each trial."""
    out = Path(out)
    rows = trial_rows(out)
    first = InsightStore.load(store_path(out, 0)).counts() if store_path(out, 0).is_file() else None
    lines = [
        "# Trials with insight memory",
        "",
        "SR and PR in percent over the trial's episodes (faulted episodes left out); rules per scale in the",
        "insight store after the trial's update (`insights/store-<t>.json`).",
        "",
        "| Trial | Agent | n | SR | PR | " + " | ".join(f"{kind} rules" for kind in SCALE_KINDS) + " |",
        "|---|---|---|---|---|" + "---|" * len(SCALE_KINDS),
    ]
    if first is not None:
        lines.append("| 0 (start) | | | | | " + " | ".join(str(first[k]) for k in SCALE_KINDS) + " |")
    for row in rows:
        rules = " | ".join(str(row["rules"][k]) if row["rules"] else "-" for k in SCALE_KINDS)
        lines.append(f"| {row['trial']} | {row['agent']} | {row['n']} | {_percent(row['sr'])} | {_percent(row['pr'])} | {rules} |")
    path = out / TRIALS_REPORT
    atomic_write(path, "\n".join(lines) + "\n")
    return path

