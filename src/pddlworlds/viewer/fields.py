"""The types of the stored fields the viewer lays out, checked when a run folder is read.

A run folder may come from anyone (a colleague's shared run, a hand-edited file), so every value is
untrusted: a line whose laid-out fields do not have their record types (a string where a step index or a
token count belongs, a list where an observation belongs) is refused with its file and line instead of being
shown. Fields a record lacks are absent, not wrong (older records open); fields the viewer does not lay
out are shown as JSON, escaped. Text is made valid UTF-8 (a lone surrogate becomes U+FFFD) on the way in.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..printable import valid_text
from ..records import RecordError, check_stored

__all__ = ["MAX_DEPTH", "clean_text", "config_problem", "line_problem", "loads"]

#: JSON nested deeper than this is refused (no record comes near it; it would only exhaust the stack).
MAX_DEPTH = 64
#: The largest integer the page's script holds exactly (2**53 - 1).
MAX_INT = 2**53 - 1
#: The largest step budget a config may give: the page draws each progress curve out to the budget.
MAX_CURVE = 100_000

# Kinds: "int" (a JSON integer, not a boolean), "number" (a finite int or float), "bool", "str", "list",
# "dict", "none"; a field lists the kinds it may have.
_NUMBER_OR_NONE = ("number", "none")
EPISODE = {
    "agent": ("str",),
    "domain": ("str",),
    "problem": ("str",),
    "split": ("str", "none"),
    "seed": ("int", "none"),
    "success": ("bool", "none"),
    "progress": _NUMBER_OR_NONE,
    "steps": ("int", "none"),
    "optimal_length": ("int", "none"),
    "run_time_s": _NUMBER_OR_NONE,
    "goal": ("str", "none"),
    "initial_observation": ("str", "none"),
    "flags": ("dict", "none"),
    "model": ("str", "none"),
    "trajectory": ("list",),
    "memory": ("list", "none"),
    "error": ("str", "dict", "none"),
    "meta": ("dict", "none"),
    "solvable": ("bool", "none"),
    "claimed_impossible": ("bool", "none"),
}
STEP = {
    "index": ("int",),
    "action": ("str", "none"),
    "observation": ("str", "none"),
    "valid": ("bool", "none"),
    "action_kind": ("str", "none"),
    "progress": _NUMBER_OR_NONE,
    "prompt_tokens": ("int", "none"),
    "context_tokens": ("int", "none"),
    "completion_tokens": ("int", "none"),
    "latency_s": _NUMBER_OR_NONE,
    "raw_output": ("str", "none"),
    "raw_output_length": ("int", "none"),
    "subgoal_index": ("int", "none"),
    "subgoal": ("str", "none"),
    "memory_view": ("str", "none"),
    "calls": ("list", "none"),
}
CALL = {
    "purpose": ("str",),
    "prompt_tokens": ("int", "none"),
    "completion_tokens": ("int", "none"),
    "latency_s": _NUMBER_OR_NONE,
    "raw_output": ("str", "none"),
    "error": ("str", "none"),
    "raw_output_length": ("int", "none"),
}
#: config.json fields the page reads as more than text.
CONFIG = {
    "max_steps": ("int", "none"),
    "seeds": ("list", "none"),
    "agents": ("dict", "none"),
    "llm": ("dict", "none"),
}


_PYTHON_TYPES = {
    "int": {int},
    "number": {int, float},
    "bool": {bool},
    "str": {str},
    "list": {list},
    "dict": {dict},
    "none": {type(None)},
}


def _allowed(schema: dict[str, tuple[str, ...]]) -> dict[str, frozenset[type]]:
    """Each field's kinds as the exact Python types JSON gives them (a boolean is not an int here)."""
    return {name: frozenset().union(*(_PYTHON_TYPES[k] for k in kinds)) for name, kinds in schema.items()}


_ALLOWED = {id(schema): _allowed(schema) for schema in (EPISODE, STEP, CALL, CONFIG)}


def _value_ok(value: Any, allowed: frozenset[type]) -> bool:
    kind = type(value)
    if kind not in allowed:
        return False
    if kind is float:
        return math.isfinite(value) and abs(value) <= MAX_INT
    return kind is not int or abs(value) <= MAX_INT


_NAMES = {
    "int": "an integer",
    "number": "a finite number",
    "bool": "a boolean",
    "str": "a string",
    "list": "a list",
    "dict": "an object",
    "none": "null",
}


def _describe(value: Any) -> str:
    name = {bool: "a boolean", str: "a string", list: "a list", dict: "an object", type(None): "null"}
    return name.get(type(value), "a number")


def _depth(value: Any) -> int:
    """How deep `value` nests lists and objects (0 for a scalar), counted no further than MAX_DEPTH + 1."""
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


def _fields_problem(obj: dict[str, Any], schema: dict[str, tuple[str, ...]], where: str) -> str | None:
    allowed = _ALLOWED[id(schema)]
    for name, value in obj.items():
        if name in allowed and not _value_ok(value, allowed[name]):
            wanted = " or ".join(_NAMES[k] for k in schema[name])
            return f"{where}{name} is {_describe(value)}, expected {wanted}"
        # Nesting is bounded everywhere (the trajectory's steps are checked one by one).
        if isinstance(value, (dict, list)) and name != "trajectory" and _depth(value) > MAX_DEPTH:
            return f"{where}{name} nests deeper than {MAX_DEPTH} levels"
    return None


def line_problem(line: Any) -> str | None:
    """What is wrong with an episode line's laid-out fields (the first thing found), or None."""
    if not isinstance(line, dict):
        return f"expected a JSON object, found {type(line).__name__}"
    missing = [name for name in ("agent", "domain", "problem") if not isinstance(line.get(name), str)]
    if missing:
        return f"no {', '.join(missing)}"
    try:  # the record's own typing, the one report and resume use; fields a line lacks are shown as absent
        check_stored(line, complete=False)
    except RecordError as exc:
        return exc.problem
    if problem := _fields_problem(line, EPISODE, ""):
        return problem
    for number, step in enumerate(line.get("trajectory") or [], start=1):
        if not isinstance(step, dict):
            return f"trajectory step {number} is {_describe(step)}, expected an object"
        if problem := _fields_problem(step, STEP, f"trajectory step {number}: "):
            return problem
        for c, call in enumerate(step.get("calls") or [], start=1):
            if not isinstance(call, dict):
                return f"trajectory step {number}: call {c} is {_describe(call)}, expected an object"
            if problem := _fields_problem(call, CALL, f"trajectory step {number}, call {c}: "):
                return problem
    return None


def config_problem(config: Any) -> str | None:
    """What is wrong with a run's config.json as the page reads it, or None."""
    if not isinstance(config, dict):
        return f"expected a JSON object, found {type(config).__name__}"
    if problem := _fields_problem(config, CONFIG, ""):
        return problem
    budget = config.get("max_steps")
    if budget is not None and not 0 <= budget <= MAX_CURVE:
        return f"max_steps is {budget}, expected an integer from 0 to {MAX_CURVE}"
    return None


def clean_text(value: Any, depth: int = 0) -> Any:
    """`value` with every lone surrogate in its strings (keys too) replaced by U+FFFD; refuses deep nesting."""
    if depth > 2 * MAX_DEPTH:
        raise ValueError(f"nested deeper than {2 * MAX_DEPTH} levels")
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        return [clean_text(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {clean_text(k, depth + 1): clean_text(v, depth + 1) for k, v in value.items()}
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number the page can show")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range")
    return value


def loads(raw: bytes) -> Any:
    """JSON as the viewer accepts it: no NaN or Infinity, no overflowing number, no deep nesting, valid text.

    Raises ValueError (the reason) for anything else, RecursionError included.
    """
    try:
        value = json.loads(raw, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise ValueError("nested too deep to read") from None
    # A lone surrogate can only come from a \uD800-\uDFFF escape: walk the value only then.
    return clean_text(value) if _SURROGATE_ESCAPE.search(raw) else value


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
