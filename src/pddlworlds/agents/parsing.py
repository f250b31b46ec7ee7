"""Reading the model's replies: the action (and subgoal) of a turn, a retrieval, a summariser's verdict.

The parsers are the other half of the reply format stated in `prompts.py`; they accept what models
actually write (missing colons, markdown, lower case, extra text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Reply", "parse_reply", "parse_retrieve", "parse_summary"]

@dataclass(frozen=True)
class Reply:
    subgoal: str | None  # None when the reply states no subgoal
    action: str  # "" when nothing usable was found


_MARKUP = re.compile(r"\*\*|__|`")
_LABEL = re.compile(
    r"\b(subgoal|action)\b[ \t]*(?:\d+)?[ \t]*(?:\([^)\n]*\))?[ \t]*(:|=|-(?=\s))?[ \t]*", re.IGNORECASE
)
_LINE_START = re.compile(r"^[\s>#*\-+.\d)]*$")
_NON_ACTION_LINE = re.compile(r"^\s*(observation|summary|met|goal|example|your problem)\b", re.IGNORECASE)
# What a model copies from the prompt's own placeholders: "(not stated)", "<next subgoal>".
_PLACEHOLDER = re.compile(r"^\W*(\(not stated\)|<[^<>]*>)?\W*$", re.IGNORECASE)
_MAX_ACTION_CHARS = 300


def _clean_action(text: str) -> str:
    text = re.split(r"(?i)\bobservation\s*:", text, maxsplit=1)[0]
    text = text.strip().strip("\"'").strip()
    text = text.rstrip(".").strip()
    return text[:_MAX_ACTION_CHARS]


def _is_reference(line: str, m: re.Match[str], at_start: bool, labels: list[re.Match[str]]) -> bool:
    """A lower-case "subgoal N:" inside a sentence names subgoal N ("Cannot retrieve subgoal 1: no subgoal
    is finished yet.", a retrieval note the model copies), it does not state one."""
    return not at_start and not labels and line[m.start()] == "s" and re.search(r"\d", m.group(0)) is not None


def _segments(text: str) -> list[tuple[str | None, str]]:
    """(label, content) per labelled part of each line; unlabelled lines come as (None, line)."""
    out: list[tuple[str | None, str]] = []
    for raw_line in _MARKUP.sub("", text).splitlines():
        line = raw_line.strip()
        if not line:
            continue
        labels = []
        for m in _LABEL.finditer(line):
            at_start = bool(_LINE_START.match(line[: m.start()]))
            capitalised = m.group(1)[0].isupper()
            after_subgoal = bool(labels) and m.group(1).lower() == "action" and line[m.end() :].strip() != ""
            if _is_reference(line, m, at_start, labels):
                continue
            if m.group(2) or at_start or (labels and (capitalised or after_subgoal)):
                labels.append(m)
        if not labels:
            out.append((None, line))
            continue
        head = line[: labels[0].start()].strip(" \t>#*-+")
        if head and not _LINE_START.match(head):
            out.append((None, head))
        for i, m in enumerate(labels):
            end = labels[i + 1].start() if i + 1 < len(labels) else len(line)
            out.append((m.group(1).lower(), line[m.end() : end].strip()))
    return out


def parse_reply(text: str) -> Reply:
    """Find `Subgoal: ...` and `Action: ...` in a reply, tolerating the slips small models make.

    The action is the first non-empty `Action` part (a label with nothing after it takes the next
    unlabelled line);
    without any `Action` label it is the first unlabelled line that is not an observation or summary.
    """
    segments = _segments(text or "")
    subgoal = next((c for label, c in segments if label == "subgoal" and c), None)
    action: str | None = None
    for i, (label, content) in enumerate(segments):
        if label == "action":
            if not content and i + 1 < len(segments) and segments[i + 1][0] is None:
                content = segments[i + 1][1]
            if content:
                action = content
                break
            action = ""
    if action is None:
        action = next(
            (c for label, c in segments if label is None and not _NON_ACTION_LINE.match(c)),
            "",
        )
    if subgoal is not None and _PLACEHOLDER.match(subgoal):
        subgoal = None  # a copied placeholder starts no subgoal
    return Reply(subgoal=subgoal.strip().rstrip(".") if subgoal else None, action=_clean_action(action))


_RETRIEVE = re.compile(r"^\W*retrieve\b\W*(?:subgoal(?:[ _]?id)?\b\W*)?(\d+)?", re.IGNORECASE)


def parse_retrieve(action: str) -> tuple[bool, int | None]:
    """(is a retrieval, subgoal number): `retrieve(2)`, `retrieve( 2 )`, `retrieve(subgoal_id=2)`,
    `Retrieve subgoal 2`, `retrieve 2`, `retrieve`."""
    m = _RETRIEVE.match(action or "")
    if not m:
        return False, None
    return True, int(m.group(1)) if m.group(1) else None


# "Met: yes", "Subgoal met: No", "reached - yes", "achieved: true" (the label form) ...
_MET = re.compile(
    r"(?:\bsubgoal\s+)?\b(?:met|reached|achieved|done|completed|success(?:ful)?)\b\W{0,3}(yes|no|true|false)\b",
    re.IGNORECASE,
)
# ... and the sentence form: "Subgoal is met.", "The subgoal was not reached."
_MET_SENTENCE = re.compile(
    r"\b(?:the\s+)?(?:sub)?goal\s+(?:is|was|has\s+been)\s+(not\s+)?(?:met|reached|achieved|completed)\b",
    re.IGNORECASE,
)
_SUMMARY = re.compile(r"\bsummary\b\W{0,3}(.*)", re.IGNORECASE | re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def _without_sentence(text: str, span: tuple[int, int]) -> str:
    """`text` without the sentence that holds `span`."""
    kept, start = [], 0
    for end_match in [*_SENTENCE_END.finditer(text), None]:
        end = end_match.start() if end_match else len(text)
        if not (start <= span[0] < max(end, start + 1)):
            kept.append(text[start:end])
        start = end_match.end() if end_match else len(text)
    return " ".join(kept)


def parse_summary(text: str) -> tuple[bool | None, str | None]:
    """(met, summary) from a summariser reply; met is None (unknown) when the reply does not say.

    Accepted: the two-line form `Met: yes\\nSummary: ...` (either order, markdown or not), the one-line
    forms `Subgoal met: No. <summary>`, `<summary> Subgoal is met.` and `Summary: <summary> Met: yes`, and
    a bare leading `Yes.`/`No.`. The met statement is not repeated in the summary.
    """
    clean = _MARKUP.sub("", text or "").strip()
    met: bool | None = None
    m = _MET.search(clean)
    sentence = _MET_SENTENCE.search(clean) if m is None else None
    if m:
        met = m.group(1).lower() in ("yes", "true")
    elif sentence:
        met = sentence.group(1) is None
    else:
        lead = re.match(r"^\W*(yes|no)\s*(?:[.,:;!\n]|$)", clean, re.IGNORECASE)
        if lead:
            met = lead.group(1).lower() == "yes"
    s = _SUMMARY.search(clean)
    if s:
        summary = s.group(1)
        inner = _MET.search(summary) or _MET_SENTENCE.search(summary)
        if inner:  # "Summary: ... Met: yes": the verdict after the summary is not part of it
            summary = summary[: inner.start()]
    elif m and not clean[: m.start()].strip(" \t\n.,;:-"):
        summary = clean[m.end() :]  # "Subgoal met: No. The nut could not be loosened."
    elif m:
        summary = "\n".join(ln for ln in clean.splitlines() if not _MET.search(ln))
    elif sentence:
        summary = _without_sentence(clean, sentence.span())
    else:
        summary = clean
    summary = " ".join(summary.split()).lstrip(" .,;:-")
    return met, summary or None
