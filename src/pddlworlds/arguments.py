"""Command-line values checked where they enter: a number out of range, or a list of integers (`--seeds
0-4`) too long to hold, is refused in one line (by argparse: exit 2) before anything is loaded, allocated
or written. Standard library only: the main CLI builds every parser.

The same checks are applied to a configuration built in code (`check_range`), so both ways in agree.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = [
    "MAX_LIST_VALUES",
    "check_range",
    "integer_list",
    "integer_list_type",
    "learning_rate",
    "nonnegative_float",
    "nonnegative_int",
    "positive_float",
    "positive_int",
    "probability",
]


def check_range(
    name: str, value: float, low: float, high: float = math.inf, *, low_open: bool = False, integer: bool = False
) -> None:
    """Raise ValueError naming `name` unless `value` is a finite number (an integer with `integer`) in
    [low, high] ((low, high] with `low_open`)."""
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or math.isnan(value):
        raise ValueError(f"{name} must be {'an integer' if integer else 'a number'}, not {value!r}")
    too_low = value <= low if low_open else value < low
    if too_low or value > high or math.isinf(value):
        lower = f"more than {low:g}" if low_open else f"at least {low:g}"
        upper = "" if math.isinf(high) else f" and at most {high:g}"
        raise ValueError(f"{name} must be {lower}{upper}, not {value:g}")


#: The most values an integer list (`--seeds 0-99999`) may name: every one becomes an episode or a problem,
#: and a range is counted before it is made, so `0-200000000` is refused instead of filling the memory.
MAX_LIST_VALUES = 100_000


def integer_list(text: str, what: str = "", limit: int = MAX_LIST_VALUES) -> list[int]:
    """`0`, `0,1,2`, `0-4` or a mix, as non-negative integers, each once, in the order given; ValueError (its
    message starting with `what`, the option's name, when given) for anything else, for no value, and for
    more than `limit` values (counted before any is made)."""
    prefix = f"{what} " if what else ""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    spans: list[tuple[int, int]] = []
    try:
        for part in parts:
            low, dash, high = part.partition("-")
            spans.append((int(low), int(high)) if dash else (int(part), int(part)))
    except ValueError:
        raise ValueError(f"{prefix}takes integers like 0, 0,1,2 or 0-4, not {text!r}") from None
    count = sum(max(0, high - low + 1) for low, high in spans)
    if count > limit:
        raise ValueError(f"{prefix}{text!r} names {count:,} values; at most {limit:,} are allowed")
    if not count:
        raise ValueError(f"{prefix}gives no value: {text!r}")
    return list(dict.fromkeys(value for low, high in spans for value in range(low, high + 1)))


def integer_list_type(text: str) -> list[int]:
    """`integer_list` as an argparse type (a bad list is argparse's one-line error naming the option)."""
    try:
        return integer_list(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _number(convert: Callable[[str], float], low: float, high: float = math.inf, *, low_open: bool = False):
    def parse(text: str) -> float:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        try:
            check_range("the value", value, low, high, low_open=low_open)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc).replace("the value ", "")) from None
        return value

    parse.__name__ = convert.__name__
    return parse


#: 1, 2, 3, ...
positive_int = _number(int, 1)
#: 0, 1, 2, ...
nonnegative_int = _number(int, 0)
#: any number above 0
positive_float = _number(float, 0, low_open=True)
#: 0 or any number above
nonnegative_float = _number(float, 0)
#: a chance: 0 to 1
probability = _number(float, 0, 1)
#: an optimizer's learning rate: above 0, at most 1 (larger rates only diverge)
learning_rate = _number(float, 0, 1, low_open=True)
