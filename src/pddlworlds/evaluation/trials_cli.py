"""`pddlworlds eval --trials N --insights PATH` (issue 13): the options and the command. Standard library only
at import time, like `evaluation.cli`, which builds its parser with `add_trial_arguments`."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["add_trial_arguments", "cmd_trials"]


def add_trial_arguments(p: Any) -> None:
    """The trial and insight options of `eval`."""
    p.add_argument("--trials", type=int, default=1, help="play the problem set N times (default: 1); with --insights")
    p.add_argument(
        "--insights",
        default=None,
        metavar="PATH",
        help="insight store (JSON): read before the first trial, updated after each one (created if missing)",
    )
    p.add_argument("--insight-mode", default="pair", help="experiences to learn from: pair (default) or success")
    p.add_argument("--insight-cap", type=int, default=None, help="rules kept per scale (default: 10)")
    p.add_argument("--insight-limit", type=int, default=None, help="rules shown per episode (default: all that apply)")
    p.add_argument(
        "--insight-embedding",
        default=None,
        metavar="KIND:MODEL",
        help="rank rules by similarity to the goal, e.g. transformers:PATH (needs torch and transformers)",
    )


def cmd_trials(args: Any, plan: Any) -> int:
    """`eval` with --insights: run (or resume) the trials, write each trial's report, print SR/PR per trial."""
    from ..insights import DEFAULT_CAP
    from .report import write_report
    from .runner import EvaluationError
    from .trials import TrialOptions, run_trials, write_trials_report

    if args.insights is None:
        raise EvaluationError("--trials needs --insights PATH (the store the trials learn into)")
    options = TrialOptions(
        trials=args.trials,
        insights=args.insights,
        mode=args.insight_mode,
        cap=DEFAULT_CAP if args.insight_cap is None else args.insight_cap,
        limit=args.insight_limit,
        embedding=args.insight_embedding,
    )
    result = run_trials(plan, args.out, options, workers=args.workers, backend=args.backend, progress=not args.no_progress)
    if not args.no_report:
        for run in result.results:
            if run.lines:
                write_report(run.out)
    path = write_trials_report(args.out)
    print(path.read_text(), end="")
    if not result.complete:
        print(
            f"stopped in trial {result.done + 1} of {result.planned}; run the same command again to resume.",
            file=sys.stderr,
        )
        return 130 if result.interrupted else 1
    print(f"{result.done} trial(s) done; insight store: {args.insights}", file=sys.stderr)
    return 0
