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

The script builds the expert part from `worlds.search.shortest_plan` and `agents.segments.segment_plan`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "EXAMPLE_FILE",
    "Example",
    "ExampleError",
    "ExampleStep",
    "ExampleSubgoal",
    "example_file",
    "load_example",
    "parse_example",
    "problem_body",
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


def problem_body(pddl_text: str) -> str:
    """A problem's PDDL without comments, its name and layout, lower case: two problems with the same
    body are the same problem (used to keep the example's problem out of every split)."""
    text = re.sub(r";[^\n]*", " ", pddl_text).lower()
    text = re.sub(r"\(\s*problem\s+[^\s()]+\s*\)", "(problem)", text)
    return " ".join(text.replace("(", " ( ").replace(")", " ) ").split())
