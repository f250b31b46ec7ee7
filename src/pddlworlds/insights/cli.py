"""The insight options of `pddlworlds eval` (`--insights PATH` and `--insight-*`), added to the eval
parser by the main CLI. Standard library only at import time: the main CLI builds every parser."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parsers", "memory_from_args"]


def memory_from_args(args: argparse.Namespace) -> Any:
    """The `InsightMemory` the options ask for, or None without --insights."""
    if args.insights is None:
        return None
    from .editing import DEFAULT_CAP
    from .memory import InsightMemory

    return InsightMemory(
        args.insights,
        mode=args.insight_mode,
        cap=DEFAULT_CAP if args.insight_cap is None else args.insight_cap,
        limit=args.insight_limit,
        embedding=args.insight_embedding,
    )


def add_parsers(subparsers: Any) -> None:
    """Add the insight options to the `eval` subcommand (when the CLI has one)."""
    p = subparsers.choices.get("eval")
    if p is None:
        return
    group = p.add_argument_group("cross-trial insight memory")
    group.add_argument(
        "--insights",
        default=None,
        metavar="PATH",
        help="insight store (JSON): read before the first trial (created if missing), updated after each one",
    )
    group.add_argument(
        "--insight-mode", default="pair", help="experiences to learn from: pair (default) or success"
    )
    group.add_argument("--insight-cap", type=int, default=None, help="rules kept per scale (default: 10)")
    group.add_argument(
        "--insight-limit", type=int, default=None, help="rules shown per episode (default: all that apply)"
    )
    group.add_argument(
        "--insight-embedding",
        default=None,
        metavar="KIND:MODEL",
        help="rank rules by similarity to the goal, e.g. transformers:PATH (needs torch and transformers)",
    )
    p.set_defaults(trial_memory=memory_from_args)
