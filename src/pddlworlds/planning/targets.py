"""What to plan for (a shipped problem, or PDDL files of one's own) and replaying plans on its `World`.

Plans are checked and turned into action texts on the same grounded `World` the environment plays (same
action order, same texts), built here straight from the files: the planner sits above the environment
and never builds one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..worlds.catalogue import DEFAULT_SPLIT, get_domain, load_task, names_shipped_domain
from ..worlds.pddl import PDDLError, normalisation_warnings_ignored
from ..worlds.world import World
from .results import Action, action_pddl

__all__ = ["Replay", "Target", "replay", "resolve_target", "world_of"]


@dataclass(frozen=True)
class Target:
    """One problem to plan for: its names, its files, and whether it is a shipped problem of a split."""

    domain: str
    problem: str
    split: str
    domain_file: Path
    problem_file: Path
    text_file: Path | None
    shipped: bool


def _looks_like_file(name: str | os.PathLike) -> bool:
    text = os.fspath(name)
    return text.endswith(".pddl") or os.sep in text or Path(text).is_file()


def resolve_target(domain: str | os.PathLike, problem: str | os.PathLike, split: str = DEFAULT_SPLIT,
                   text_file: str | os.PathLike | None = None,
                   domains_root: str | os.PathLike | None = None) -> Target:
    """A shipped domain's problem by name, a problem file for a shipped domain, or two PDDL files; with
    `domains_root`, `domain` names one of that folder's domain folders (never a shipped one: its stored
    plans are not this domain's)."""
    if domains_root is not None:
        d = get_domain(os.fspath(domain), domains_root)
        text = Path(text_file) if text_file else (d.text_file if d.text_file.is_file() else None)
        if _looks_like_file(problem):
            problem_path = Path(problem).resolve()
            if not problem_path.is_file():
                raise PDDLError("no such PDDL file", problem_path)
            return Target(d.name, problem_path.stem, "custom", d.domain_file, problem_path, text, False)
        return Target(d.name, os.fspath(problem), split, d.domain_file, d.problem_file(os.fspath(problem), split),
                      text, False)
    if not names_shipped_domain(domain) and _looks_like_file(domain):
        domain_file, problem_file = Path(domain).resolve(), Path(problem).resolve()
        for f in (domain_file, problem_file):
            if not f.is_file():
                raise PDDLError("no such PDDL file", f)
        return Target(domain_file.parent.name, problem_file.stem, "custom", domain_file, problem_file,
                      Path(text_file) if text_file else None, False)
    d = get_domain(str(domain))
    text = Path(text_file) if text_file else (d.text_file if d.text_file.is_file() else None)
    if _looks_like_file(problem):  # a problem file of one's own for a shipped domain
        problem_path = Path(problem).resolve()
        if not problem_path.is_file():
            raise PDDLError("no such PDDL file", problem_path)
        return Target(d.name, problem_path.stem, "custom", d.domain_file, problem_path, text, False)
    return Target(d.name, os.fspath(problem), split, d.domain_file, d.problem_file(os.fspath(problem), split), text,
                  True)


@dataclass
class _WorldCache:
    """The last few grounded worlds (grounding is the costly part of a replay); bounded, oldest out."""

    size: int = 64
    worlds: dict[tuple, World] = field(default_factory=dict)

    def get(self, target: Target) -> World:
        key = (str(target.domain_file), str(target.problem_file),
               str(target.text_file) if target.text_file else None, target.problem_file.stat().st_mtime_ns)
        if key not in self.worlds:
            from ..worlds.text import load_templates

            with normalisation_warnings_ignored():
                task = load_task(target.domain_file, target.problem_file)
            self.worlds[key] = World(task, load_templates(task, target.text_file), target.problem)
            if len(self.worlds) > self.size:
                self.worlds.pop(next(iter(self.worlds)))
        return self.worlds[key]


_CACHE = _WorldCache()


def world_of(target: Target) -> World:
    """The grounded world of a target, as the environment builds it (same action order, same texts)."""
    return _CACHE.get(target)


@dataclass(frozen=True)
class Replay:
    """A plan played on a world: the actions' indices and the states visited (the first is the start).

    `indices` is None when a step is not an action of the problem or not applicable; `reason` says which,
    and `states` ends at the last state reached. `goal` is whether every step applied and the goal holds.
    """

    indices: list[int] | None
    states: list[int]
    reason: str = ""
    goal: bool = False


def replay(world: World, actions: Sequence[Action], state: int) -> Replay:
    """Apply `actions` from `state` on the grounded task, stopping at the first that does not apply."""
    states = [state]
    indices: list[int] = []
    for step, action in enumerate(actions, start=1):
        index = world.action_of(*action)
        if index is None:
            return Replay(None, states, f"step {step}: {action_pddl(action)} is not an action of this problem")
        if not world.task.is_applicable(states[-1], index):
            return Replay(None, states, f"step {step}: {action_pddl(action)} is not applicable")
        indices.append(index)
        states.append(world.task.apply(states[-1], index))
    return Replay(indices, states, goal=world.task.is_goal(states[-1]))
