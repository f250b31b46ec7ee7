"""The in-context example: an expert episode of another problem of the same domain, cut into subgoals.

The expert's actions come from `pddlworlds.planning.expert_trajectory` (the stored plan, else a planner
run) or, failing that, a breadth-first search; they are played once in the environment's own `World`
(in its observation mode), and that one pass gives the observations, the progress and the states from
which the subgoals are cut and named.
"""

from __future__ import annotations

import math
import warnings
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..text import join_and
from .prompts import clause

if TYPE_CHECKING:
    from ..grounding import GroundTask
    from ..world import World

__all__ = [
    "Example",
    "ExampleStep",
    "ExampleSubgoal",
    "example_problem",
    "bfs_plan",
    "expert_actions",
    "expert_actions_fallback",
    "play_example",
    "build_example",
]


@dataclass(frozen=True)
class ExampleStep:
    action: str
    observation: str
    progress: float


@dataclass(frozen=True)
class ExampleSubgoal:
    text: str
    start: int  # first step (index into Example.steps)
    end: int  # one past the last step
    summary: str  # what changed from the subgoal's start to its end


@dataclass(frozen=True)
class Example:
    problem: str
    goal: str
    observation: str  # the first observation
    steps: tuple[ExampleStep, ...]
    subgoals: tuple[ExampleSubgoal, ...]


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return math.inf  # type: ignore[return-value]


def example_problem(env: Any, problem: str) -> str | None:
    """The smallest problem of the environment's split other than `problem` (by file size, then name)."""
    from ..grounding import natural_key

    env = env.unwrapped
    files: dict[str, Path] = env.problem_files
    others = [name for name in files if name != problem]
    if not others:
        return None
    return min(others, key=lambda n: (_file_size(Path(files[n])), natural_key(n)))


def bfs_plan(task: GroundTask, max_nodes: int = 200_000) -> list[int] | None:
    """A shortest plan (action indices) by breadth-first search, or None past `max_nodes` states."""
    start = task.init
    if task.is_goal(start):
        return []
    parent: dict[int, tuple[int, int] | None] = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        for action in task.applicable(state):
            nxt = task.apply(state, action)
            if nxt in parent:
                continue
            parent[nxt] = (state, action)
            if task.is_goal(nxt):
                plan = []
                cur = nxt
                while parent[cur] is not None:
                    prev, act = parent[cur]  # type: ignore[misc]
                    plan.append(act)
                    cur = prev
                return plan[::-1]
            if len(parent) >= max_nodes:
                return None
            queue.append(nxt)
    return None


def expert_actions(env: Any, problem: str) -> list[str] | None:
    """The expert's action texts for `problem`: `expert_trajectory` for a shipped split, else (or when it
    fails) `expert_actions_fallback`."""
    env = env.unwrapped
    if env.split != "custom":
        from ..planning import expert_trajectory

        try:
            return [step[1] for step in expert_trajectory(env.domain_name, problem, split=env.split)]
        except Exception as exc:  # a missing planner must not stop an agent: search instead
            warnings.warn(f"expert_trajectory({env.domain_name!r}, {problem!r}) failed: {exc}", stacklevel=2)
    return expert_actions_fallback(env, problem)


def expert_actions_fallback(env: Any, problem: str) -> list[str] | None:
    """A breadth-first search (fine for the small problems examples are made from; None when it gives up).

    No stored plan is looked up here: for a shipped split `expert_trajectory` has already tried it, and a
    problem of one's own (split "custom") has none, whatever its name.
    """
    world = env.unwrapped.world_of(problem)
    plan = bfs_plan(world.task)
    return None if plan is None else [world.action_text(i) for i in plan]


def _segment(progress: list[float], start_progress: float, max_len: int) -> list[tuple[int, int]]:
    """Cut a plan after each step that raises progress; pieces longer than `max_len` are cut evenly."""
    cuts, start, best = [], 0, start_progress
    for i, p in enumerate(progress):
        if p > best or i == len(progress) - 1:
            best = max(best, p)
            cuts.append((start, i + 1))
            start = i + 1
    out = []
    for a, b in cuts:
        pieces = math.ceil((b - a) / max_len)
        size = (b - a) / pieces
        bounds = [a + round(size * k) for k in range(pieces + 1)]
        out.extend(zip(bounds[:-1], bounds[1:]))
    return out


def _subgoals(world: World, states: list[int], progress: list[float], max_len: int = 4) -> tuple[ExampleSubgoal, ...]:
    """Cut the expert run into subgoals; each is named by at most two facts it made true (goal facts
    first, then what its last action made true) and summarised by every fact it made true."""
    task = world.task
    goal_atoms = {(n, a) for n, a, positive in world.lifted.goal if positive}

    def added(before: int, after: int) -> list:
        return [task.atoms[i] for i in range(len(task.atoms)) if (after >> i & 1) and not (before >> i & 1)]

    subgoals = []
    for a, b in _segment(progress, task.progress(states[0]), max_len):
        net = added(states[a], states[b])
        last = set(added(states[b - 1], states[b]))
        named = sorted(net, key=lambda atom: (atom not in goal_atoms, atom not in last))[:2]
        text = join_and([clause(world.templates.sentence(atom)) for atom in named]) or "continue"
        summary = " ".join(world.templates.sentence(atom) + "." for atom in net) or "Nothing new is true."
        subgoals.append(ExampleSubgoal(text, a, b, summary))
    return tuple(subgoals)


def play_example(world: World, problem: str, actions: list[str], mode: str) -> Example:
    """Play `actions` once in `world` (observations in `mode`) and cut the run into subgoals."""
    state = world.initial_state
    first = world.observe(state, "full")
    states, steps = [state], []
    for text in actions:
        outcome = world.step(state, text, mode)
        if not outcome.valid or outcome.action is None:
            raise ValueError(f"expert action {text!r} of {problem} is not applicable: {outcome.observation}")
        state = outcome.state
        states.append(state)
        steps.append(ExampleStep(outcome.action, outcome.observation, float(world.task.progress(state))))
    return Example(
        problem=problem,
        goal=world.goal_text(),
        observation=first,
        steps=tuple(steps),
        subgoals=_subgoals(world, states, [s.progress for s in steps]),
    )


def build_example(env: Any, problem: str) -> Example | None:
    """The in-context example for an episode of `problem`: an expert run of the smallest other problem
    (None when there is no other problem or no plan for it). Deterministic."""
    env = env.unwrapped
    other = example_problem(env, problem)
    if other is None:
        return None
    actions = expert_actions(env, other)
    if not actions:
        return None
    return play_example(env.world_of(other), other, actions, env.observation_mode)
