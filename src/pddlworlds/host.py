"""Facts about the machine and the user's settings that several layers need, each decided in one place."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir", "default_threads"]


def cache_dir(kind: str) -> Path:
    """The folder for cached `kind` data ("digests", "models", ...).

    `$PDDLWORLDS_CACHE/<kind>` when set, else `$XDG_CACHE_HOME/pddlworlds/<kind>`, else
    `~/.cache/pddlworlds/<kind>`. Nothing is created here.
    """
    root = os.environ.get("PDDLWORLDS_CACHE")
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pddlworlds")
    return Path(root) / kind


def default_threads() -> int:
    """The cores this process may run on (its CPU affinity, which containers and `taskset` narrow)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
