"""PDDL's s-expressions: our own reader (nesting limit, the line of every form, a missing `)` blamed on the
form left open), and the error every reader of PDDL raises, with the file and line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MAX_NESTING", "Node", "PDDLError", "SizeLimitError", "line_of_form", "lowered", "read_sexpr",
    "section_name", "typed_names", "write_sexpr",
]


class PDDLError(ValueError):
    """A PDDL file that cannot be read, with its path and (where known) line."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None):
        self.path = None if path is None else str(path)
        self.line = line
        where = "" if path is None else f"{path}" + (f":{line}" if line else "") + ": "
        super().__init__(where + message)


class SizeLimitError(PDDLError):
    """Input refused because it is larger than a documented limit (the message names the parameter)."""


#: Deepest parenthesis nesting accepted. Shipped files reach 5; unified-planning's recursive reader
#: raises RecursionError at about 50 levels, so deeper input is refused before it gets there.
MAX_NESTING = 32


@dataclass
class Token:
    text: str
    line: int
    column: int
    first_on_line: bool


class Node(list):
    """A parenthesised form: a list of strings and forms, with the line its '(' is on."""

    line: int = 0


def tokenise(text: str, path: Path) -> list[Token]:
    tokens: list[Token] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        line = line.split(";", 1)[0]
        # a '?' starts a word of its own, as Fast Downward reads `(p?x)` (zenotravel writes `aircraft?a`);
        # so does a '-' before a letter at a word's start, the dash of a typed list glued to its type
        # (`?c -compressor`, the fridge domain): no PDDL name starts with '-'
        for i, match in enumerate(re.finditer(r"[()]|-(?=[A-Za-z])|\??[^\s()?]+|\?", line)):
            tokens.append(Token(match.group(0), line_no, match.start(), i == 0))
    return tokens


_SECTIONS = frozenset({
    ":domain", ":requirements", ":types", ":constants", ":predicates", ":functions", ":action",
    ":durative-action", ":derived", ":objects", ":init", ":goal", ":metric",
})
_ACTIONS = frozenset({":action", ":durative-action"})
_ACTION_KEYS = frozenset({":parameters", ":precondition", ":effect", ":duration", ":condition"})


def left_open(opened: list[Token], tok: Token) -> bool:
    """Whether the innermost open form looks unclosed, judged by indentation (the only trace of intent).

    It does when `tok`, a '(' starting its own line, sits at or left of that form's column, and the form
    was itself indented under its parent (or sits directly inside the outermost `define`), so flush-left
    writing does not count. The outermost form is never blamed this way: it is open by design.
    """
    if len(opened) < 2:
        return False
    inner, parent = opened[-1], opened[-2]
    return (
        inner.first_on_line
        and inner.line < tok.line
        and tok.column <= inner.column
        and (inner.column > parent.column or len(opened) == 2)
    )


def read_sexpr(text: str, path: Path) -> list:
    """Nested lists of strings; raises PDDLError with the line of an unbalanced parenthesis.

    Iterative, with a nesting limit, so hostile input cannot exhaust the stack here or in unified-planning.
    A missing ')' is blamed on the form most likely left open: the first one found holding what belongs
    elsewhere (a section such as `(:goal` belongs directly in `define`, `:effect` directly in an action),
    else the first one that indentation says was left open (`left_open`), else the innermost one.
    """
    stack: list[Node] = [Node()]
    opened: list[Token] = []
    suspect: Token | None = None  # from the structure: a section or action keyword nested too deep
    by_indent: Token | None = None  # from the indentation
    for tok in tokenise(text, path):
        if tok.text == "(":
            if by_indent is None and tok.first_on_line and left_open(opened, tok):
                by_indent = opened[-1]
            if len(opened) >= MAX_NESTING:
                raise PDDLError(
                    f"parentheses nested deeper than {MAX_NESTING} levels (MAX_NESTING); "
                    "no PDDL construct needs that many",
                    path,
                    tok.line,
                )
            node = Node()
            node.line = tok.line
            stack.append(node)
            opened.append(tok)
        elif tok.text == ")":
            if len(stack) == 1:
                raise PDDLError("unexpected ')'", path, tok.line)
            done = stack.pop()
            opened.pop()
            stack[-1].append(done)
        else:
            if suspect is None and len(opened) >= 2:
                word = tok.text.lower()
                if not stack[-1] and word in _SECTIONS and len(opened) > 2:
                    suspect = opened[-2]  # a section belongs directly inside (define ...)
                elif word in _ACTION_KEYS and str(stack[-1][0] if stack[-1] else "").lower() not in _ACTIONS:
                    suspect = opened[-1]  # :effect and the like belong directly inside (:action ...)
            stack[-1].append(tok.text)
    if len(stack) > 1:
        blamed = suspect or by_indent or opened[-1]
        raise PDDLError("unclosed '(' opened here: a ')' is missing", path, blamed.line)
    top = [x for x in stack[0] if isinstance(x, list)]
    if len(top) != 1 or not top[0] or str(top[0][0]).lower() != "define":
        raise PDDLError("expected one (define ...) form", path, 1)
    return top[0]


def write_sexpr(expr) -> str:
    if isinstance(expr, list):
        return "(" + " ".join(write_sexpr(e) for e in expr) + ")"
    return expr


def section_name(expr) -> str | None:
    if isinstance(expr, list) and expr and isinstance(expr[0], str) and expr[0].startswith(":"):
        return expr[0].lower()
    return None


def typed_names(items: list) -> list[tuple[str, str]]:
    """(name, type) pairs of a typed list such as `a b - t c`; untyped names get type 'object'."""
    out: list[tuple[str, str]] = []
    pending: list[str] = []
    i = 0
    while i < len(items):
        item = items[i]
        if item == "-" and i + 1 < len(items):
            type_name = items[i + 1]
            type_name = write_sexpr(type_name) if isinstance(type_name, list) else type_name
            out.extend((name, type_name.lower()) for name in pending)
            pending = []
            i += 2
            continue
        pending.append(str(item).lower())
        i += 1
    out.extend((name, "object") for name in pending)
    return out


def lowered(expr):
    """Nested lists of lower-case strings, each list keeping its line: PDDL names are case-insensitive, and
    the parser downstream (Fast Downward's) compares keywords in lower case."""
    if isinstance(expr, list):
        node = Node(lowered(e) for e in expr)
        node.line = getattr(expr, "line", 0)
        return node
    return expr.lower()


def line_of_form(tree: list, text: str) -> int | None:
    """The line of the first form in `tree` written as `text` (or holding the word `text`): where a parser
    that names only what it got found it."""
    stack = [tree]
    while stack:
        node = stack.pop(0)
        if write_sexpr(node) == text or text in node:
            return getattr(node, "line", None) or None
        stack[:0] = [e for e in node if isinstance(e, list)]
    return None


