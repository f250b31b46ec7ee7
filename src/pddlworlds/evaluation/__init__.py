"""Evaluating agents: resumable runs (`runner`), metrics (`metrics`), reports (`report`), the CLI (`cli`).

from pddlworlds.evaluation import RunPlan, run_evaluation, write_report
plan = RunPlan(agents=["expert", "random"], problems={"blocksworld": ["problem1"]})
run_evaluation(plan, "runs/demo")
write_report("runs/demo")
"""

from __future__ import annotations

from .metrics import summarize, wilcoxon_paired
from .report import write_report
from .runner import (
    BackendSpec,
    ConfigMismatchError,
    EpisodeSpec,
    EvaluationError,
    RunPlan,
    RunResult,
    RunStopped,
    run_episode,
    run_evaluation,
)

__all__ = [
    "BackendSpec",
    "ConfigMismatchError",
    "EpisodeSpec",
    "EvaluationError",
    "RunPlan",
    "RunResult",
    "RunStopped",
    "run_episode",
    "run_evaluation",
    "summarize",
    "wilcoxon_paired",
    "write_report",
]
