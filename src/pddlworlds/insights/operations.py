"""Reading the model's edit operations from a free-form reply, tolerantly.

Accepted (any case, with or without colons, after bullet marks or numbering, several on one line):

    ADD general: <rule>          ADD domain: <rule>        ADD task: <rule>
    ADD domain:blocksworld: <rule>                         ADD task on: <rule>
    EDIT 3: <rule>   REMOVE 3   AGREE 3   MOVE 3 general: <rule>   (MOVE 3 general keeps the text)

`<n>` is the number a rule had in the prompt; `#3`, `rule 3` and `[3]` are read as 3. A line with no
operation is kept in `ParsedReply.unparsable` (never an error); `NONE` / `no changes` lines are silent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["OPERATION_KINDS", "Operation", "ParsedReply", "parse_operations"]

OPERATION_KINDS = ("ADD", "EDIT", "REMOVE", "AGREE", "MOVE")

_SCALE = r"(?P<kind>general|domain|task)(?:(?:\s*[:=]\s*|\s+)(?P<name>[A-Za-z0-9_+\-.]+)(?=\s*:))?"
_NUMBER = r"(?:rule\s*)?[#\[(]?\s*(?P<n>\d+)\s*[\])]?"
_STARTS = re.compile(
    rf"\b(?P<op>add)\b\s*[:\-]?\s*(?:(?:a\s+)?(?:rule\s+)?(?:to|in|for)\s+)?(?={_SCALE}\b)"
    rf"|\b(?P<op2>edit|remove|agree|move)\b\s*[:\-]?\s*(?={_NUMBER})",
    re.IGNORECASE,
)
_ADD_BODY = re.compile(rf"^{_SCALE}\b\s*(?:rules?\b)?\s*[:\-]?\s*(?P<text>.*)$", re.IGNORECASE | re.DOTALL)
_NUMBER_BODY = re.compile(rf"^{_NUMBER}\s*[:\-.]?\s*(?P<text>.*)$", re.IGNORECASE | re.DOTALL)
_MOVE_REST = re.compile(rf"^(?:to\s+)?{_SCALE}\b\s*[:\-]?\s*(?P<text>.*)$", re.IGNORECASE | re.DOTALL)
_BULLET = re.compile(r"^\s*(?:[-*+•>]+|\d+[.)]|\(\d+\))\s*")
_SILENT = re.compile(r"^(?:none|no changes?|nothing to (?:add|change)|operations?:?)\.?$", re.IGNORECASE)
#: Separators before which a lower-case operation word inside a line starts a new operation.
_SEPARATED = re.compile(r"(?:^|[;|.,]\s*|\s{2,})$")


@dataclass(frozen=True)
class Operation:
    """One edit: `kind` in OPERATION_KINDS; `number` the rule's number in the prompt; `scale` as written
    (`general`, `domain`, `domain:<name>`, `task`, `task:<name>`); `text` the rule text, if any."""

    kind: str
    number: int | None = None
    scale: str | None = None
    text: str | None = None
    source: str = ""


@dataclass
class ParsedReply:
    operations: list[Operation] = field(default_factory=list)
    unparsable: list[str] = field(default_factory=list)


def _clean(text: str) -> str:
    text = text.replace("**", "").replace("__", "").replace("`", "")
    return " ".join(text.split()).strip(" \"'").strip()


def _scale(match: re.Match[str]) -> str:
    kind = match.group("kind").lower()
    name = match.group("name")
    return f"{kind}:{name}" if name and kind != "general" else kind


def _starts(line: str) -> list[re.Match[str]]:
    """Operation words that begin an operation: first on the line, upper case, or after a separator."""
    out = []
    for m in _STARTS.finditer(line):
        word = m.group("op") or m.group("op2")
        if not out and not line[: m.start()].strip() or word.isupper() or _SEPARATED.search(line[: m.start()]):
            out.append(m)
    return out


def _one(chunk: str, word: str, source: str) -> Operation | None:
    kind = word.upper()
    if kind == "ADD":
        m = _ADD_BODY.match(chunk)
        text = _clean(m.group("text")) if m else ""
        return Operation(kind, scale=_scale(m), text=text, source=source) if m and text else None
    m = _NUMBER_BODY.match(chunk)
    if not m:
        return None
    number, rest = int(m.group("n")), m.group("text")
    if kind in ("REMOVE", "AGREE"):
        return Operation(kind, number, source=source)
    if kind == "EDIT":
        text = _clean(rest)
        return Operation(kind, number, text=text, source=source) if text else None
    moved = _MOVE_REST.match(rest.strip())
    if not moved:
        return None
    return Operation(
        kind, number, scale=_scale(moved), text=_clean(moved.group("text")) or None, source=source
    )


def parse_operations(reply: str) -> ParsedReply:
    """Every operation in `reply`, in order; lines (or parts of lines) that hold none are `unparsable`."""
    parsed = ParsedReply()
    for raw in reply.splitlines():
        line = _BULLET.sub("", raw.replace("**", "").replace("__", "")).strip()
        if not line or _SILENT.match(_clean(line)):
            continue
        starts = _starts(line)
        if not starts:
            parsed.unparsable.append(raw.strip())
            continue
        if line[: starts[0].start()].strip(" :-"):
            parsed.unparsable.append(line[: starts[0].start()].strip())
        for i, m in enumerate(starts):
            end = starts[i + 1].start() if i + 1 < len(starts) else len(line)
            body = line[m.end() : end].strip().rstrip(";|,").strip()
            source = line[m.start() : end].strip()
            operation = _one(body, m.group("op") or m.group("op2"), source)
            if operation is None:
                parsed.unparsable.append(source)
            else:
                parsed.operations.append(operation)
    return parsed
