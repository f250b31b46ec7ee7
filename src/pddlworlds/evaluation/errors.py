"""The errors an evaluation raises: all `ValueError`s, so the CLI turns them into one line and exit 2."""

from __future__ import annotations

from pathlib import Path

__all__ = ["ConfigMismatchError", "EvaluationError", "RunStopped"]


class EvaluationError(ValueError):
    """A run cannot start or go on; the message says why and what to do."""


class RunStopped(EvaluationError):
    """The run stopped part-way (server gone, repeated failures, a worker died); finished episodes are stored."""


class ConfigMismatchError(EvaluationError):
    """The output folder holds a run with a different configuration."""

    def __init__(self, out: Path, differences: list[str], hint: str = ""):
        self.differences = differences
        keys = ", ".join(d.split(" ", 1)[0] for d in differences)
        detail = "\n  ".join(differences)
        super().__init__(
            f"refusing to resume {out}: it holds a run with a different configuration "
            f"(differing keys: {keys}).\n  {detail}\n"
            f"Repeat the original options to resume it, or choose another --out.{' ' + hint if hint else ''}"
        )
