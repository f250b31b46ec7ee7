"""Reading a run folder's JSON as the viewer shows it: strict numbers, bounded nesting, valid text.

A run folder may come from anyone (a colleague's shared run, a hand-edited file), so every value is
untrusted. Its episode lines are checked against the record's own field types in their page-safe form
(`artefacts.runs.record_problem(line, page_safe=True)`: numbers a page holds exactly, bounded nesting), and
a line that fails is refused with its file and line instead of being shown; fields a record lacks are
absent, not wrong (older records open), and fields the viewer does not lay out are shown as JSON, escaped.
Here: the JSON decoding (no NaN, no overflowing number, valid UTF-8: a lone surrogate becomes U+FFFD) and
the check of the config.json fields the page reads.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..printable import valid_text
from ..records import MAX_DEPTH, fields_problem

__all__ = ["CONFIG", "MAX_CURVE", "clean_text", "config_problem", "loads"]

#: The largest step budget a config may give: the page draws each progress curve out to the budget.
MAX_CURVE = 100_000
#: config.json fields the page reads as more than text, with their types.
CONFIG: dict[str, Any] = {
    "max_steps": int | None,
    "seeds": list[Any] | None,
    "agents": dict[str, Any] | None,
    "llm": dict[str, Any] | None,
}


def config_problem(config: Any) -> str | None:
    """What is wrong with a run's config.json as the page reads it, or None."""
    if not isinstance(config, dict):
        return f"expected a JSON object, found {type(config).__name__}"
    if problem := fields_problem(CONFIG, config, page_safe=True):
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
