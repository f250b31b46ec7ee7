"""Plain records that cross module boundaries: one agent step, one episode.

They are what evaluation stores (one JSON line per episode) and what metrics are computed from, so every
field is JSON-serialisable and nothing here depends on an agent's or backend's internals.
"""

from __future__ import annotations

import functools
import math
import os
import types
import typing
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from typing import Any

__all__ = ["EpisodeRecord", "LLMCall", "RecordError", "StepRecord", "check_stored"]


@dataclass
class LLMCall:
    """One model call made during a step (the action call, a summary call, ...)."""

    purpose: str  # "action" | "summary" | "retrieve" ...
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    raw_output: str
    error: str | None = None
    raw_output_length: int | None = None  # the reply's length when the stored raw_output was cut
    cached_tokens: int | None = None  # prompt tokens the backend took from its cache (None: not known)
    prompt_eval_s: float | None = None  # latency up to the first generated token (None: not known)
    generation_s: float | None = None  # the rest of the latency
    # the admissible-action setting only: how many actions the model chose among, and the summed token
    # log-probability of the reply it chose
    candidates: int | None = None
    logprob: float | None = None


@dataclass
class StepRecord:
    """One environment step (one agent turn); retrievals and summaries that preceded it are in `calls`."""

    index: int  # 1-based environment step
    action: str  # the text sent to the environment
    observation: str
    valid: bool  # info["action_valid"]
    action_kind: str  # info["action_kind"]
    progress: float  # best progress after this step
    prompt_tokens: int = 0  # of the call that produced the action (context size)
    context_tokens: int | None = None  # of the in-trial context (goal, observations, memory) of that call
    completion_tokens: int = 0
    latency_s: float = 0.0
    raw_output: str | None = None
    raw_output_length: int | None = None  # the reply's length when the stored raw_output was cut
    subgoal_index: int | None = None
    subgoal: str | None = None
    memory_view: str | None = None  # the working memory as it was sent to the model
    calls: list[LLMCall] = field(default_factory=list)

    @property
    def total_prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls) if self.calls else self.prompt_tokens


@dataclass
class EpisodeRecord:
    agent: str
    domain: str
    split: str
    problem: str
    seed: int | None
    success: bool
    progress: float
    steps: int
    optimal_length: int | None
    run_time_s: float
    goal: str
    initial_observation: str
    flags: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    trajectory: list[StepRecord] = field(default_factory=list)
    memory: list[dict[str, Any]] = field(default_factory=list)  # e.g. HiAgent's subgoals and summaries
    error: str | dict[str, Any] | None = None  # a failure outside the agent's control: {kind, message, count}
    solvable: bool | None = None  # False: a stored proof says no plan exists; None: unknown (older records)
    claimed_impossible: bool = False  # the episode ended on the agent's `impossible`

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeRecord:
        data = dict(data)
        data["trajectory"] = [
            StepRecord(**{**s, "calls": [LLMCall(**c) for c in s.get("calls", [])]}) for s in data.get("trajectory", [])
        ]
        return cls(**data)

    @classmethod
    def from_stored(
        cls, line: Any, *, source: str | os.PathLike[str] | None = None, line_no: int | None = None
    ) -> EpisodeRecord:
        """A record from a stored run line: the record's fields plus the run's own keys (`meta`: split,
        step budget...), which are left out. Every field is checked first (`check_stored`): a missing,
        misspelt or wrongly typed one raises `RecordError` naming `source` and `line_no` when given."""
        check_stored(line, source=source, line_no=line_no)
        names = {f.name for f in fields(cls)}
        return cls.from_dict({k: v for k, v in line.items() if k in names})


class RecordError(ValueError):
    """A stored line that is not an episode record; the message names the file and line when known."""

    def __init__(self, problem: str, source: str | os.PathLike[str] | None = None, line_no: int | None = None):
        self.problem, self.source, self.line_no = problem, source, line_no
        where = "" if source is None else f"{source}" + (f", line {line_no}" if line_no is not None else "") + ": "
        tail = "; fix or remove that line" if line_no is not None else ""
        super().__init__(f"{where}not an episode record ({problem}){tail}")


def check_stored(
    line: Any,
    *,
    source: str | os.PathLike[str] | None = None,
    line_no: int | None = None,
    complete: bool = True,
) -> None:
    """Raise `RecordError` unless `line` (a decoded JSON line) is an episode record: an object whose fields
    have the types `EpisodeRecord` declares, in its steps and their calls too (numbers finite, `bool` not
    taken for a number). With `complete=False` (a reader that shows what is there, such as the viewer) a
    missing field or an unknown one inside a step is allowed; the fields present are still checked."""
    problem = _problems(EpisodeRecord, line, "", complete, top=True)
    if problem:
        raise RecordError(problem, source, line_no)


_JSON_NAMES = {type(None): "null", bool: "true/false", int: "a number", float: "a number", str: "a string",
               list: "a list", dict: "an object"}


def _describe(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return _JSON_NAMES.get(type(value), type(value).__name__)


def _wanted(hint: Any) -> str:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(_wanted(a) for a in typing.get_args(hint))
    origin = typing.get_origin(hint) or hint
    if is_dataclass(origin):
        return "an object"
    return {type(None): "null", bool: "true/false", int: "an integer", float: "a number"}.get(
        origin, _JSON_NAMES.get(origin, str(origin))
    )


@functools.cache
def _declared(cls: type) -> tuple[dict[str, Any], dict[str, Any]]:
    """(field types, fields) of a record dataclass, resolved once."""
    return typing.get_type_hints(cls), {f.name: f for f in fields(cls)}


def _problems(cls: type, data: Any, where: str, complete: bool, top: bool = False) -> str | None:
    """What is wrong with `data` as a `cls` (a dataclass), as words naming the field; None when nothing."""
    if not isinstance(data, dict):
        return f"{where or 'the line'} is {_describe(data)}, not an object"
    hints, declared = _declared(cls)
    if complete:
        missing = [n for n, f in declared.items()
                   if n not in data and f.default is MISSING and f.default_factory is MISSING]
        if missing:
            return f"{where + ': ' if where else ''}no {', '.join(missing)}"
        unknown = [k for k in data if k not in declared]
        if unknown and not top:  # a run's own keys (`meta`) sit beside the record's fields
            return f"{where}: unknown field(s) {', '.join(map(str, unknown))}"
    for name, value in data.items():
        if name in declared:
            problem = _value_problem(hints[name], value, f"{where}.{name}" if where else name, complete)
            if problem:
                return problem
    return None


@functools.cache
def _options(hint: Any) -> tuple[tuple[Any, tuple[Any, ...]], ...]:
    """(origin, arguments) of each type a field may hold: `int | None` -> ((int, ()), (NoneType, ()))."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    return tuple((typing.get_origin(o) or o, typing.get_args(o)) for o in options)


def _value_problem(hint: Any, value: Any, where: str, complete: bool) -> str | None:
    for origin, args in _options(hint):
        if origin is list and isinstance(value, list):
            for i, item in enumerate(value):
                if is_dataclass(args[0]):
                    problem = _problems(args[0], item, f"{where}[{i}]", complete)
                else:
                    problem = _value_problem(args[0], item, f"{where}[{i}]", complete)
                if problem:
                    return problem
            return None
        if origin is dict and isinstance(value, dict):
            return None
        if _scalar_ok(origin, value):
            return None
    return f"{where} is {_describe(value)}, not {_wanted(hint)}"


def _scalar_ok(kind: Any, value: Any) -> bool:
    if kind is Any:
        return True
    if kind is type(None):
        return value is None
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if kind is str:
        return isinstance(value, str)
    return False
