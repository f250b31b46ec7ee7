"""Objects a domain uses without declaring them, taken from the problem as constants.

Older domains (the IPC 2000 Tyreworld: `(have wrench)` in `loosen`'s precondition) name a problem object in
an action as if it were a constant. PDDL asks for a `:constants` declaration, and Fast Downward's translator
and pymimir refuse such a file; planners of that time (FF among them) read the name as the problem's
object. `adopt_constants` does what they did: each name the translator reports as an undefined object that
the problem declares is added to the domain's `:constants`, with the problem's type, and the problem's own
declaration of it is then dropped as a repeat (`pddl_text.normalise_problem`). A name the problem does not
declare stays an error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .sexpr import Node, section_name, typed_names

__all__ = ["adopt_constants", "problem_objects", "undefined_object", "with_constants"]

#: Where a `:constants` section goes among the declarations (the translator reads them in this order).
_BEFORE_CONSTANTS = (":requirements", ":types")


def problem_objects(problem_lists: list) -> dict[str, str]:
    """The problem's declared objects (lower case) and their types."""
    out: dict[str, str] = {}
    for section in problem_lists:
        if section_name(section) == ":objects":
            out.update(typed_names(section[1:]))
    return out


def undefined_object(message: str) -> str | None:
    """The name in the translator's "Undefined object ... Got: NAME" message, else None."""
    if "Undefined object" not in message:
        return None
    got = [line.strip(" \t->").removeprefix("Got:").strip() for line in message.splitlines() if "Got:" in line]
    return got[-1].lower() if got and got[-1] and " " not in got[-1] else None


def with_constants(domain_lists: list, extra: Mapping[str, str]) -> Node:
    """`domain_lists` with `extra` (name -> type) added to its `:constants` (a section made if it has none)."""
    tokens: list[str] = []
    for name, type_name in extra.items():
        tokens += [name, "-", type_name]
    out = Node(domain_lists)
    out.line = getattr(domain_lists, "line", 0)
    for i, section in enumerate(out):
        if section_name(section) == ":constants":
            grown = Node([*section, *tokens])
            grown.line = getattr(section, "line", 0)
            out[i] = grown
            return out
    place = len(out)
    for i, section in enumerate(out):
        name = section_name(section)
        if name is not None and name not in _BEFORE_CONSTANTS:
            place = i
            break
    section = Node([":constants", *tokens])
    section.line = 0
    out.insert(place, section)
    return out


def adopt_constants(
    domain_lists: list, problem_lists: list, parse: Callable[[list], Any],
    error: type[BaseException] | tuple[type[BaseException], ...],
) -> tuple[list, dict[str, str]]:
    """Parse `domain_lists` with `parse`, adopting each undefined object the problem declares as a constant
    until it parses; returns the lists it parsed and the adopted names and types. An `error` that names no
    adoptable object is raised as it came."""
    objects = problem_objects(problem_lists)
    adopted: dict[str, str] = {}
    while True:
        try:
            parse(domain_lists)
            return domain_lists, adopted
        except error as exc:
            name = undefined_object(str(exc))
            if name is None or name not in objects or name in adopted:
                raise
            adopted[name] = objects[name]
            domain_lists = with_constants(domain_lists, {name: objects[name]})
