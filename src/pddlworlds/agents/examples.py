"""The in-context example: one fixed, solved episode per domain, read from `<domain folder>/example.json`.

The example comes from a problem outside every evaluated split (`<domain folder>/example.pddl`, written
with the transcript by `scripts/make_examples.py`): an expert run with deliberate detours (an invalid
action and its error, `check valid actions` and a listed action, a subgoal that is not met, and a
`retrieve`), so a model that imitates its example sees each of them once. The file holds every env step's
observation in both observation modes; `load_example` picks the environment's and records the file's
sha256 digest, which the agents' flags report.

File format (JSON): `source` (where the problem came from), `problem_file`, `goal`, `observation` (the
first one), and `subgoals`, each `{"subgoal", "met", "summary", "steps"}` where a step is
`{"action", "observation": {"full": ..., "changes": ...}}` or a retrieval `{"action", "retrieved": k}`.

`bfs_plan` and `segment_plan` are what the script builds the expert part from.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..worlds.text import join_and
from .prompts import clause

if TYPE_CHECKING:
    from ..worlds.grounding import GroundTask
    from ..worlds.world import World

__all__ = [
    "EXAMPLE_FILE",
    "Example",
    "ExampleError",
    "ExampleStep",
    "ExampleSubgoal",
    "PlanSegment",
    "bfs_plan",
    "example_file",
    "load_example",
    "parse_example",
    "plan_cuts",
    "problem_body",
    "segment_plan",
]

EXAMPLE_FILE = "example.json"
MODES = ("full", "changes")


class ExampleError(ValueError):
    """An example file that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class ExampleStep:
    action: str
    observation: str  # for a retrieval: "" (the prompt writes its note)
    retrieved: int | None = None  # the subgoal number a `retrieve` brings back; None for an env step

    @property
    def is_retrieval(self) -> bool:
        return self.retrieved is not None


@dataclass(frozen=True)
class ExampleSubgoal:
    text: str
    steps: tuple[ExampleStep, ...]
    met: bool
    summary: str

    @property
    def env_steps(self) -> tuple[ExampleStep, ...]:
        return tuple(s for s in self.steps if not s.is_retrieval)


@dataclass(frozen=True)
class Example:
    problem: str  # where the example's problem came from (the file's `source`)
    goal: str
    observation: str  # the first observation
    subgoals: tuple[ExampleSubgoal, ...]
    sha256: str  # of the example file

    @property
    def env_steps(self) -> tuple[ExampleStep, ...]:
        return tuple(step for sub in self.subgoals for step in sub.env_steps)


def example_file(domain_folder: str | Path) -> Path:
    return Path(domain_folder) / EXAMPLE_FILE


def load_example(domain_folder: str | Path, mode: str) -> Example | None:
    """The domain's example with observations in `mode`; None when the folder has no example file."""
    path = example_file(domain_folder)
    if not path.is_file():
        return None
    data = path.read_bytes()
    return parse_example(data.decode("utf-8"), mode, source=str(path), sha256=hashlib.sha256(data).hexdigest())


def _need(entry: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in entry:
        raise ExampleError(f"{where}: missing {key!r}")
    value = entry[key]
    if not isinstance(value, kind):
        raise ExampleError(f"{where}: {key!r} must be {kind.__name__}, not {type(value).__name__}")
    return value


def parse_example(text: str, mode: str, *, source: str = "<example>", sha256: str = "") -> Example:
    """An `Example` from the JSON text of an example file, with observations in `mode`."""
    if mode not in MODES:
        raise ExampleError(f"{source}: observation mode must be one of {MODES}, not {mode!r}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ExampleError(f"{source}: not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ExampleError(f"{source}: the top level must be an object")
    subgoals = []
    for i, sub in enumerate(_need(data, "subgoals", list, source), start=1):
        where = f"{source}: subgoal {i}"
        if not isinstance(sub, dict):
            raise ExampleError(f"{where}: must be an object")
        steps = []
        for j, step in enumerate(_need(sub, "steps", list, where), start=1):
            at = f"{where}, step {j}"
            if not isinstance(step, dict):
                raise ExampleError(f"{at}: must be an object")
            action = _need(step, "action", str, at)
            if "retrieved" in step:
                steps.append(ExampleStep(action, "", retrieved=int(_need(step, "retrieved", int, at))))
            else:
                observations = _need(step, "observation", dict, at)
                steps.append(ExampleStep(action, _need(observations, mode, str, f"{at} ({action!r})")))
        subgoals.append(
            ExampleSubgoal(
                text=_need(sub, "subgoal", str, where),
                steps=tuple(steps),
                met=_need(sub, "met", bool, where),
                summary=_need(sub, "summary", str, where),
            )
        )
    return Example(
        problem=_need(data, "source", str, source),
        goal=_need(data, "goal", str, source),
        observation=_need(data, "observation", str, source),
        subgoals=tuple(subgoals),
        sha256=sha256,
    )


# --------------------------------------------------------------------------------------------------
# Building blocks of the expert part (used by scripts/make_examples.py).


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


def segment_plan(world: World, plan: list[int], max_len: int = 4) -> list[PlanSegment]:
    """Play `plan` (action indices) once from the initial state and cut it into subgoals; each is named by
    at most two facts it made true (goal facts first, then what its last action made true)."""
    task = world.task
    states = [task.init]
    for action in plan:
        states.append(task.apply(states[-1], action))
    progress = [float(task.progress(s)) for s in states[1:]]
    goal_atoms = {(n, a) for n, a, positive in world.lifted.goal if positive}

    def added(before: int, after: int) -> list:
        return [task.atoms[i] for i in range(len(task.atoms)) if (after >> i & 1) and not (before >> i & 1)]

    segments = []
    for a, b in plan_cuts(progress, float(task.progress(states[0])), max_len):
        net = added(states[a], states[b])
        last = set(added(states[b - 1], states[b]))
        named = sorted(net, key=lambda atom: (atom not in goal_atoms, atom not in last))[:2]
        text = join_and([clause(world.templates.sentence(atom)) for atom in named]) or "continue"
        summary = " ".join(world.templates.sentence(atom) + "." for atom in net) or "Nothing new is true."
        segments.append(PlanSegment(text, a, b, summary))
    return segments


def problem_body(pddl_text: str) -> str:
    """A problem's PDDL without comments, its name and layout, lower case: two problems with the same
    body are the same problem (used to keep the example's problem out of every split)."""
    text = re.sub(r";[^\n]*", " ", pddl_text).lower()
    text = re.sub(r"\(\s*problem\s+[^\s()]+\s*\)", "(problem)", text)
    return " ".join(text.replace("(", " ( ").replace(")", " ) ").split())
