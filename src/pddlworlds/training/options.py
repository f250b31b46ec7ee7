"""Argument types of `pddlworlds train ...`: a number out of range is refused by argparse (one line, exit 2)
before anything is loaded or written. Standard library only: the main CLI builds every parser.

The same checks are applied to a `TrainConfig` built in code (`check_range`), so both ways in agree.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = [
    "check_range",
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
