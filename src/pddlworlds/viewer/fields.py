"""Reading a run folder's JSON as the viewer shows it: strict numbers, bounded nesting, valid text.

A run folder may come from anyone (a colleague's shared run, a hand-edited file), so every value is
untrusted. Its episode lines are checked against the record's own field types in their page-safe form
(`artefacts.runs.record_problem(line, page_safe=True)`: numbers a page holds exactly, bounded nesting), and
a line that fails is refused with its file and line instead of being shown; fields a record lacks are
absent, not wrong (older records open), and fields the viewer does not lay out are shown as JSON, escaped.
Here: the JSON decoding (no NaN, no overflowing number, valid UTF-8: a lone surrogate becomes U+FFFD) and
the step budget the page draws curves to (config.json's fields are checked by `artefacts.runs.read_config`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..printable import valid_text
from ..records import MAX_DEPTH

__all__ = ["MAX_CURVE", "budget_problem", "clean_text", "loads"]

#: The largest step budget a config may give: the page draws each progress curve out to the budget.
MAX_CURVE = 100_000


def budget_problem(config: dict[str, Any]) -> str | None:
    """What is wrong with a run's step budget for the page (its curves are drawn out to it), or None; the
    config's fields and their types are checked by its one reader (`artefacts.runs.read_config`)."""
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
