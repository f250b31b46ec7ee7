"""Words out of PDDL names: filling a template's slots, joining items, articles, and an action text's words.

The pieces every part of the text layer shares (templates, list sentences, the action parser): kept apart so
each of those modules needs only these, not one another.
"""

from __future__ import annotations

import re

__all__ = ["SLOT", "article", "fill", "join_and", "quoted", "tokens"]

#: A template's slot: `{name}`, the name a PDDL parameter's (any characters but braces).
SLOT = re.compile(r"\{([^{}]+)\}")
_TOKEN = re.compile(r"[a-z0-9_][a-z0-9_\-]*")


def fill(template: str, values: dict[str, str]) -> str:
    """`template` with each `{name}` slot replaced by `values[name]`. Not `str.format`: a PDDL parameter may
    be named `?x.1` or `?0`, which `format` reads as an attribute or a position."""
    return SLOT.sub(lambda match: values[match.group(1)], template)


def quoted(text: str, limit: int = 200) -> str:
    """`text` quoted for a message, cut after `limit` characters: an action echoed back whole could make an
    observation longer than the observation space allows (the space leaves room for one action's length)."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def tokens(text: str) -> list[str]:
    """Lower-case words of an action text; punctuation and brackets are separators."""
    return [t.strip("-") for t in _TOKEN.findall(text.lower()) if t.strip("-")]


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def join_and(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
