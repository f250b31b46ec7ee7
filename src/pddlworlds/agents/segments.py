"""Cutting an expert plan into subgoals: how the in-context examples (`scripts/make_examples.py`) and the
training teacher (`pddlworlds.training.teacher`) both name and summarise HiAgent's subgoals.

A plan is cut after every step that raises progress, pieces longer than `max_len` evenly; each piece is
named by at most two facts it made true (goal facts first, then what its last action made true) and
summarised by all of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..worlds.text import join_and
from ..worlds.world import World
from .prompts import clause

__all__ = ["PlanSegment", "plan_cuts", "segment_plan"]


@dataclass(frozen=True)
class PlanSegment:
    text: str  # the subgoal, in words
    start: int  # first step (index into the plan)
    end: int  # one past the last step
    summary: str  # every fact the segment made true


def plan_cuts(progress: list[float], start_progress: float, max_len: int) -> list[tuple[int, int]]:
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


def segment_plan(
    world: World,
    plan: Sequence[int | str],
    max_len: int = 4,
    *,
    same: Callable[[str, str], bool] | None = None,
) -> list[PlanSegment]:
    """Play `plan` (action indices or texts) once from the initial state and cut it into subgoals. With
    `same`, a piece whose name `same(previous name, name)` reads as the previous subgoal is merged into it
    (as HiAgent would take the second statement for a restatement of the first)."""
    task = world.task
    states = [world.initial_state]
    for action in plan:
        if isinstance(action, str):
            states.append(world.step(states[-1], action, "full").state)
        else:
            states.append(task.apply(states[-1], action))
    progress = [task.progress(s) for s in states[1:]]
    goal_atoms = {(n, tuple(a)) for n, a, positive in world.lifted.goal if positive}

    def added(before: int, after: int) -> list:
        return [task.atoms[i] for i in range(len(task.atoms)) if (after >> i & 1) and not (before >> i & 1)]

    segments: list[PlanSegment] = []
    for a, b in plan_cuts(progress, task.progress(states[0]), max_len):
        net = added(states[a], states[b])
        last = set(added(states[b - 1], states[b]))
        named = sorted(net, key=lambda atom: (atom not in goal_atoms, atom not in last))[:2]
        text = join_and([clause(world.templates.sentence(atom)) for atom in named]) or "continue"
        if same is not None and segments and same(segments[-1].text, text):
            a = segments.pop().start
            net = added(states[a], states[b])
        summary = " ".join(world.templates.sentence(atom) + "." for atom in net) or "Nothing new is true."
        segments.append(PlanSegment(text, a, b, summary))
    return segments
