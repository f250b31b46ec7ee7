"""Running evaluations: what a run plays (`spec`), writing its folder (`store`; the format is
`artefacts.runs`), its identity (`configuration`), one episode (`episode`), where episodes run
(`executors`, `ray_watchdog`), the run loop (`runner`), trials with a cross-trial memory (`trials`) and
the `eval`/`report`/`compare` commands (`cli`, `options`). The scores are `scoring`'s; reading a run and
its report are `reports`'s (re-exported here: `summarize`, `wilcoxon_paired`, `write_report`).

from pddlworlds.evaluation import RunPlan, run_evaluation, write_report
plan = RunPlan(agents=["expert", "random"], problems={"blocksworld": ["problem1"]})
run_evaluation(plan, "runs/demo")
write_report("runs/demo")
"""

from __future__ import annotations

from ..reports.report import write_report
from ..scoring.metrics import summarize
from ..scoring.significance import wilcoxon_paired
from .episode import run_episode
from .errors import ConfigMismatchError, EvaluationError, RunStopped
from .runner import RunResult, run_evaluation
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
