"""Text from outside (a server's error message, a stored record) made safe to print or put in a table.

A terminal obeys escape sequences (retitle the window, move the cursor, forge an earlier line) and Markdown
reads `|` and line breaks as table structure, so text that did not come from this package is shown with its
control characters escaped (`\\x1b`, `\\n`, bidirectional overrides as `\\u202e`): one line, inert, still
readable. `valid_text` makes text encodable at all: a lone surrogate (a reply's `\\ud800` escape) cannot be
written as UTF-8, so it would fail the next request that carries it, or the file that stores it.
"""

from __future__ import annotations

import re

__all__ = ["markdown_cell", "printable", "valid_text"]

# C0 and C1 controls, DEL, line and paragraph separators, bidirectional marks, embeddings, overrides and
# isolates (they reorder what a reader sees), and lone surrogates (not text at all).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, so that it encodes as UTF-8 (the same object
    when it already does)."""
    return _LONE_SURROGATE.sub("\ufffd", text) if _LONE_SURROGATE.search(text) else text


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def printable(text: object) -> str:
    """`text` (made a string) with every control character shown as its escape: one inert line."""
    return _UNPRINTABLE.sub(_escaped, str(text))


def markdown_cell(text: object) -> str:
    """`text` as the content of one Markdown table cell: printable, with `|` escaped."""
    return printable(text).replace("|", "\\|")
