"""Evaluating agents: what a run plays (`spec`), writing its folder (`store`; the format is
`artefacts.runs`), its identity (`configuration`), one episode (`episode`), where episodes run
(`executors`), the run loop (`runner`), trials with a cross-trial memory (`trials`), the scores
(`metrics`, `significance`, `unsolvable`, `agentboard_scores`), a run read and analysed (`analysis`), its
tables and report (`report_tables`, `plots`, `report`, `paper`, `published`, `published_report`) and the
CLI (`cli`, `options`).

from pddlworlds.evaluation import RunPlan, run_evaluation, write_report
plan = RunPlan(agents=["expert", "random"], problems={"blocksworld": ["problem1"]})
run_evaluation(plan, "runs/demo")
write_report("runs/demo")
"""

from __future__ import annotations

from .episode import run_episode
from .errors import ConfigMismatchError, EvaluationError, RunStopped
from .metrics import summarize
from .report import write_report
from .runner import RunResult, run_evaluation
from .significance import wilcoxon_paired
from .spec import BackendSpec, EpisodeSpec, RunPlan
from .store import RunStore

__all__ = [
    "BackendSpec",
    "ConfigMismatchError",
    "EpisodeSpec",
    "EvaluationError",
    "RunPlan",
    "RunResult",
    "RunStopped",
    "RunStore",
    "run_episode",
    "run_evaluation",
    "summarize",
    "wilcoxon_paired",
    "write_report",
]
