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
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from typing import Any

__all__ = [
    "HEAD_PURPOSE",
    "MAX_DEPTH",
    "MAX_EXACT_INT",
    "RUN_KEYS",
    "EpisodeRecord",
    "LLMCall",
    "RecordError",
    "StepRecord",
    "check_stored",
    "fields_problem",
    "nesting_depth",
]

#: Page-safe values nest no deeper than this (no record comes near it; deeper would only exhaust a stack).
MAX_DEPTH = 64
#: The largest integer a web page's script holds exactly (2**53 - 1): page-safe numbers stay within it.
MAX_EXACT_INT = 2**53 - 1


#: `LLMCall.purpose` of HiAgent's free-written subgoal line in a choosing setting; the scored pick that
#: follows it in the step continues it (the paper's one reply: subgoal, then action).
HEAD_PURPOSE = "head"


@dataclass
class LLMCall:
    """One model call made during a step (the action call, a summary call, ...)."""

    purpose: str  # "action" | "summary" | "retrieve" | HEAD_PURPOSE ...
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    raw_output: str
    error: str | None = None
    raw_output_length: int | None = None  # the reply's length when the stored raw_output was cut
    cached_tokens: int | None = None  # prompt tokens the backend took from its cache (None: not known)
    prompt_eval_s: float | None = None  # latency up to the first generated token (None: not known)
    generation_s: float | None = None  # the rest of the latency
    # the settings that choose among candidates only: how many actions the model chose among, the summed
    # token log-probability of the reply it chose, and every candidate (its action, summed log-probability,
    # tokens: {"action", "logprob", "tokens"}), so another ranking rule can be replayed on the same calls
    candidates: int | None = None
    logprob: float | None = None
    candidate_scores: list[dict[str, Any]] | None = None


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

    @classmethod
    def of_step(cls, action: str, observation: str, info: Mapping[str, Any], **details: Any) -> StepRecord:
        """The record of one `env.step(action)` from what it returned (`info` is an `env.StepInfo`), with the
        model-side `details` of the call that chose the action: what `Agent.run` and the adapters store."""
        return cls(index=info["step"], action=action, observation=observation, valid=bool(info["action_valid"]),
                   action_kind=info["action_kind"], progress=float(info["progress"]), **details)


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
    #: What the episode's actions cost in all (`info["cost"]` at its end), where the domain has action costs
    #: (`:metric minimize (total-cost)`); None without action costs (cost is then the length) or in older records.
    cost: int | None = None
    #: The cost of an optimal plan of the problem where the domain has action costs and one is known.
    optimal_cost: int | None = None
    #: The steps the episode had (`info["step_budget"]`: 30, or a ladder band's budget); None in older records
    #: or without a limit. An unsolved episode counts it as its steps.
    step_budget: int | None = None

    @classmethod
    def of_episode(
        cls,
        agent: str,
        seed: int | None,
        first: tuple[str, Mapping[str, Any]],
        last_info: Mapping[str, Any],
        trajectory: list[StepRecord],
        run_time_s: float,
        *,
        costed: bool = False,
        **extra: Any,
    ) -> EpisodeRecord:
        """An episode's record from its reset (`first`: the observation and info) and its last step's info,
        as `Agent.run` and the framework adapters store one alike; `costed`: the domain has action costs (the
        record then keeps `info["cost"]`); `extra`: flags, model, memory."""
        observation, info = first
        cost = int(last_info["cost"]) if costed and "cost" in last_info else None
        return cls(
            agent=agent, domain=info["domain"], split=info["split"], problem=info["problem"], seed=seed,
            success=bool(last_info["success"]), progress=float(last_info["progress"]), steps=int(last_info["step"]),
            optimal_length=info.get("optimal_length"), run_time_s=run_time_s, goal=info["goal"],
            initial_observation=observation, trajectory=trajectory, solvable=info.get("solvable"),
            claimed_impossible=bool(last_info.get("claimed_impossible", False)), cost=cost,
            optimal_cost=info.get("optimal_cost") if costed else None, step_budget=info.get("step_budget"), **extra,
        )

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


#: The keys a run stores beside a record's fields, with their types (`artefacts.runs.EpisodeMeta` reads
#: `meta`).
RUN_KEYS: dict[str, Any] = {"meta": dict[str, Any] | None}


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
    page_safe: bool = False,
) -> None:
    """Raise `RecordError` unless `line` (a decoded JSON line) is an episode record: an object whose fields
    have the types `EpisodeRecord` declares, in its steps and their calls too (numbers finite, `bool` not
    taken for a number), and whose run keys (`RUN_KEYS`) have theirs. With `complete=False` (a reader that
    shows what is there, such as the viewer) a missing field or an unknown one inside a step is allowed; the
    fields present are still checked. With `page_safe=True` (a web page shows the line) every number field
    also holds a number the page's script holds exactly (`MAX_EXACT_INT`), and no value, known or not,
    nests deeper than `MAX_DEPTH`."""
    problem = _problems(EpisodeRecord, line, "", complete, page_safe, top=True)
    if problem:
        raise RecordError(problem, source, line_no)


def fields_problem(
    types: Mapping[str, Any], data: Mapping[str, Any], *, page_safe: bool = False
) -> str | None:
    """What is wrong with the fields of `data` that `types` names (field -> type, as a dataclass declares
    them; a field `data` lacks is fine), in the words `check_stored` uses; None when nothing. With
    `page_safe`, as `check_stored`'s: every field's value, named or not, is bounded too."""
    return _fields(types, data, "", True, page_safe)


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


def _problems(
    cls: type, data: Any, where: str, complete: bool, page_safe: bool, top: bool = False
) -> str | None:
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
    return _fields({**RUN_KEYS, **hints} if top else hints, data, where, complete, page_safe)


def _fields(
    types: Mapping[str, Any], data: Mapping[str, Any], where: str, complete: bool, page_safe: bool
) -> str | None:
    for name, value in data.items():
        at = f"{where}.{name}" if where else str(name)
        hint = types.get(name)
        if hint is not None and (problem := _value_problem(hint, value, at, complete, page_safe)):
            return problem
        # A list of records is walked record by record, each bounded on its own.
        if page_safe and not _records_list(hint) and nesting_depth(value) > MAX_DEPTH:
            return f"{at} nests deeper than {MAX_DEPTH} levels"
    return None


@functools.cache
def _records_list(hint: Any) -> bool:
    """Whether `hint` is a list of records (`list[StepRecord]`), which the walk enters."""
    return any(origin is list and args and is_dataclass(args[0]) for origin, args in _options(hint))


def nesting_depth(value: Any) -> int:
    """How deep `value` nests lists and objects (0 for a scalar), counted no further than MAX_DEPTH + 1
    (without recursion: a value nested 100,000 deep is counted as safely as a flat one)."""
    stack, deepest = [(value, 0)], 0
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


@functools.cache
def _options(hint: Any) -> tuple[tuple[Any, tuple[Any, ...]], ...]:
    """(origin, arguments) of each type a field may hold: `int | None` -> ((int, ()), (NoneType, ()))."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    return tuple((typing.get_origin(o) or o, typing.get_args(o)) for o in options)


def _value_problem(hint: Any, value: Any, where: str, complete: bool, page_safe: bool) -> str | None:
    for origin, args in _options(hint):
        if origin is list and isinstance(value, list):
            for i, item in enumerate(value):
                if is_dataclass(args[0]):
                    problem = _problems(args[0], item, f"{where}[{i}]", complete, page_safe)
                else:
                    problem = _value_problem(args[0], item, f"{where}[{i}]", complete, page_safe)
                if problem:
                    return problem
            return None
        if origin is dict and isinstance(value, dict):
            if len(args) == 2 and args[1] is not Any:  # `dict[str, list[str]]`: each value checked too
                for key, item in value.items():
                    if problem := _value_problem(args[1], item, f"{where}.{key}", complete, page_safe):
                        return problem
            return None
        if _scalar_ok(origin, value):
            if page_safe and origin in (int, float) and abs(value) > MAX_EXACT_INT:
                return f"{where} is a number, expected {_wanted(origin)} from -(2**53 - 1) to 2**53 - 1"
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
