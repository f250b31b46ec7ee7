"""What cross-trial memory looks like from below: the two Protocols that the evaluation's trials call and a
memory package (such as `pddlworlds.insights`) implements, so neither imports the other.

A `TrialMemory` is updated between the trials of `pddlworlds eval --trials N`; for each trial it hands out
an `InsightSource`, which travels with every episode's spec (picklable) and, in the process that plays the
episode, makes the `selector` an LLM agent calls at reset to pick the rule texts it shows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from ..llm import LLM

__all__ = ["InsightSelector", "InsightSource", "TrialMemory"]

#: Called by an LLM agent at reset with the env and its first info: the texts of the rules to show.
InsightSelector = Callable[[Any, dict[str, Any]], Sequence[str]]


class InsightSource(Protocol):
    """What one trial's episodes read (picklable: it crosses to worker processes)."""

    def describe(self) -> dict[str, Any]: ...  # recorded in the run's configuration

    def selector(self) -> InsightSelector: ...  # built in the process that plays the episode


class TrialMemory(Protocol):
    """What `evaluation.trials.run_trials` asks of a cross-trial memory; `folder` is `out/memory`."""

    def hold(self) -> AbstractContextManager[None]: ...  # held for the whole run: checks and locks the memory

    def prepare(self, folder: Path) -> None: ...  # before the first trial (once; kept on resume)

    def identity(self, folder: Path) -> dict[str, Any]: ...  # recorded in trials.json, compared on resume

    def done(self, folder: Path, trial: int) -> bool: ...  # the update after `trial` is written

    def use(self, folder: Path, trial: int) -> InsightSource: ...  # what trial `trial`'s episodes read

    def update(
        self,
        folder: Path,
        trial: int,
        lines: Sequence[dict[str, Any]],
        earlier: Sequence[Sequence[dict[str, Any]]],
        llm: LLM,
    ) -> None: ...  # the memory after `trial`, from its stored episode lines (and earlier trials')

    def columns(self, folder: Path, trial: int) -> dict[str, str]: ...  # extra report columns after `trial`
