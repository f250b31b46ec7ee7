"""Cutting an expert plan into subgoals: how the in-context examples (`scripts/make_examples.py`) and the
training teacher (`pddlworlds.training.teacher`) both name and summarise HiAgent's subgoals.

A plan is cut after every step that raises progress, pieces longer than `max_len` evenly; each piece is
named by at most two facts it made true (goal facts first, then what its last action made true) and
summarised by all of them.

The state-choice setting's teacher cuts by the plan's own structure instead (`goal_segment`): the next
subgoal is the plan's prefix up to the first step that makes a goal condition true that was not true
where the prefix starts, named by the goal conditions that step made true, and summarised by every fact
the prefix made true.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from ..worlds.text import join_and
from ..worlds.world import World
from . import compact
from .prompts import clause

__all__ = [
    "PlanSegment",
    "added_atoms",
    "goal_segment",
    "goal_segment_facts",
    "made_true",
    "name_progress",
    "plan_cuts",
    "segment_plan",
]


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
        out.extend(pairwise(bounds))
    return out


def added_atoms(world: World, before: int, after: int) -> list:
    """The atoms true in `after` and not in `before`, in atom order."""
    task = world.task
    return [task.atoms[i] for i in range(len(task.atoms)) if (after >> i & 1) and not (before >> i & 1)]


def name_progress(world: World, before: int, last: int, after: int) -> tuple[str, str]:
    """(name, summary) of going from state `before` to `after` (`last`: the state before the final step):
    at most two facts made true, goal facts first, then what the final step made true; all of them."""
    goal_atoms = {(n, tuple(a)) for n, a, positive in world.lifted.goal if positive}
    net = added_atoms(world, before, after)
    final = set(added_atoms(world, last, after))
    named = sorted(net, key=lambda atom: (atom not in goal_atoms, atom not in final))[:2]
    text = join_and([clause(world.templates.sentence(atom)) for atom in named]) or "continue"
    summary = " ".join(world.templates.sentence(atom) + "." for atom in net) or "Nothing new is true."
    return text, summary


def segment_plan(
    world: World,
    plan: Sequence[int | str],
    max_len: int = 4,
    *,
    same: Callable[[str, str], bool] | None = None,
    start: int | None = None,
) -> list[PlanSegment]:
    """Play `plan` (action indices or texts) once from `start` (default: the initial state) and cut it
    into subgoals. With `same`, a piece whose name `same(previous name, name)` reads as the previous
    subgoal is merged into it (as HiAgent would take the second statement for a restatement of the first)."""
    task = world.task
    states = [world.initial_state if start is None else start]
    for action in plan:
        if isinstance(action, str):
            states.append(world.step(states[-1], action, "full").state)
        else:
            states.append(task.apply(states[-1], action))
    progress = [task.progress(s) for s in states[1:]]

    segments: list[PlanSegment] = []
    for a, b in plan_cuts(progress, task.progress(states[0]), max_len):
        text, summary = name_progress(world, states[a], states[b - 1], states[b])
        if same is not None and segments and same(segments[-1].text, text):
            a = segments.pop().start
            summary = name_progress(world, states[a], states[b - 1], states[b])[1]
        segments.append(PlanSegment(text, a, b, summary))
    return segments


def made_true(world: World, before: int, after: int) -> str:
    """The facts true in `after` and not in `before`, as sentences in atom order ("Nothing new is true."
    when there are none): a finished subgoal's summary in the state-choice setting."""
    return " ".join(world.templates.sentence(atom) + "." for atom in added_atoms(world, before, after)) or (
        "Nothing new is true."
    )


def goal_segment(world: World, plan: Sequence[int], start: int) -> PlanSegment:
    """The next subgoal of `plan` (action indices) from state `start`: its steps up to and including the
    first that makes true a goal condition not true at `start`, named by the goal conditions made true
    there ("b1 is on b2 and b2 is on b3"), summarised by every fact the segment made true. A plan that
    never does (empty, or `start` already a goal state) gives the whole plan, named "the goal"."""
    task = world.task
    fresh = task.goal_pos & ~start  # positive goal conditions not true where the segment starts
    state = start
    for step, action in enumerate(plan):
        state = task.apply(state, action)
        new = state & fresh
        if new:
            atoms = [atom for i, atom in enumerate(task.atoms) if new >> i & 1]
            text = join_and([clause(world.templates.sentence(atom)) for atom in atoms])
            return PlanSegment(text, 0, step + 1, made_true(world, start, state))
    return PlanSegment("the goal", 0, len(plan), made_true(world, start, state))


def goal_segment_facts(world: World, plan: Sequence[int], start: int) -> str:
    """`goal_segment`'s subgoal as the compact form writes it: the goal conditions the plan's next segment
    makes true, as facts (`on b3 b2`; "the goal" when it makes none)."""
    end = start
    for index in plan[: goal_segment(world, plan, start).end]:
        end = world.task.apply(end, index)
    return compact.goal_facts_text(world, start, end)
