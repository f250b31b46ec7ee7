"""The words of the AgentBoard profile: its per-domain wording, its word splitting and its action reading.

AgentBoard's PDDL environment (hkust-nlp/AgentBoard) writes every atom and action from one template per
name and reads actions by a rule of its own. This module holds that text layer for
`profile="agentboard"`: the wording comes from `agentboard.toml` beside a domain's `domain.pddl` (data,
origin stated there); the code is ours, written from the behaviour:

- an atom or action is its template filled with the objects in parameter order, or, without a template,
  its PDDL name and objects joined by spaces ("handempty left");
- observation sentences are capitalised the way Python's `str.capitalize` does (first letter upper,
  the rest lower) and sorted; goal texts are sorted but not capitalised;
- an action text is lower-cased and split into words like NLTK's `word_tokenize`; the first word that
  names an action executable now is the action, the words that name objects are its objects in the
  order written, extra objects are dropped and too few make the text unreadable.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..grounding import Atom
from ..pddl import LiftedTask, PDDLError
from ..text import fill

__all__ = [
    "AGENTBOARD_TEXT_FILE",
    "AgentBoardText",
    "load_agentboard_text",
    "read_action",
    "word_tokenize",
]

#: The file beside `domain.pddl` that holds a domain's AgentBoard wording.
AGENTBOARD_TEXT_FILE = "agentboard.toml"

_SLOT = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class AgentBoardText:
    """One domain's AgentBoard wording: templates by predicate and action name, and how it observes."""

    predicates: dict[str, str]
    actions: dict[str, str]
    after_action: str  # "full" or "changes": what the observation after an action shows
    look_around: bool  # whether the valid-action listing offers "look around"
    params: dict[str, tuple[str, ...]]  # parameter names by predicate name and by "action:" + schema name
    source: str = "<bare>"

    def atom_text(self, atom: Atom) -> str:
        """An atom as AgentBoard writes it (not capitalised)."""
        name, args = atom
        return self._fill(self.predicates.get(name), name, self.params.get(name, ()), args)

    def action_text(self, schema: str, args: tuple[str, ...]) -> str:
        """A ground action as AgentBoard lists it."""
        return self._fill(self.actions.get(schema), schema, self.params.get("action:" + schema, ()), args)

    @staticmethod
    def _fill(template: str | None, name: str, params: tuple[str, ...], args: tuple[str, ...]) -> str:
        if template is None:
            return " ".join((name, *args))
        return fill(template, dict(zip(params, args)))

    def listing_extras(self) -> tuple[str, ...]:
        """The meta-actions AgentBoard appends to every valid-action listing."""
        return ("check valid actions", "look around") if self.look_around else ("check valid actions",)


def load_agentboard_text(task: LiftedTask, path: str | Path | None) -> AgentBoardText:
    """The AgentBoard wording of `task` from `path` (TOML); without a file every name reads bare."""
    data: dict = {}
    source = "<bare>"
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise PDDLError("AgentBoard text file not found", path)
        source = str(path)
        try:
            data = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise PDDLError(f"invalid TOML: {exc}", path) from exc
    params: dict[str, tuple[str, ...]] = {name: tuple(p) for name, p in task.predicates}
    params.update({"action:" + s.name: tuple(s.parameters) for s in task.schemas})
    after = data.get("after_action", "full")
    if after not in ("full", "changes"):
        raise PDDLError(f"after_action must be 'full' or 'changes', not {after!r}", path)
    look = data.get("look_around", False)
    if not isinstance(look, bool):
        raise PDDLError(f"look_around must be true or false, not {look!r}", path)
    predicates = _templates(
        data.get("predicates", {}), {n: params[n] for n, _ in task.predicates}, "predicates", path
    )
    actions = _templates(
        data.get("actions", {}), {s.name: params["action:" + s.name] for s in task.schemas}, "actions", path
    )
    return AgentBoardText(predicates, actions, after, look, params, source)


def _templates(table: dict, known: dict[str, tuple[str, ...]], section: str, path) -> dict[str, str]:
    """Check each template: a known name, a string, and placeholders that are the first parameters in order
    (AgentBoard fills its templates positionally, so a template may leave trailing objects out)."""
    if not isinstance(table, dict):
        raise PDDLError(f"[{section}] must be a table", path)
    out: dict[str, str] = {}
    for name, template in table.items():
        if name not in known:
            raise PDDLError(
                f"[{section}] names unknown {section[:-1]} {name!r}; known: {', '.join(known)}", path
            )
        if not isinstance(template, str):
            raise PDDLError(f"[{section}] {name}: expected a string, not {template!r}", path)
        slots = _SLOT.findall(template)
        if slots != list(known[name][: len(slots)]):
            raise PDDLError(
                f"[{section}] {name}: {template!r} must use the parameters {', '.join(known[name]) or '(none)'} "
                f"in this order (a prefix of them), each once; it uses {', '.join(slots) or 'none'}",
                path,
            )
        out[name] = template
    return out


# --------------------------------------------------------------------------------------------------
# Reading an action the way AgentBoard does.

# NLTK's word_tokenize = Punkt sentences, then NLTK's Treebank rules (NLTKWordTokenizer, NLTK 3.10) on each.
# The rules are restated below in NLTK's order; the sentence split is approximated by "after . ? or !
# (and closing brackets or quotes) before white space", which is where Punkt splits plain action texts.
_SENTENCE_END = re.compile(r"(?<=[.?!])([\]\)}>\"']*)\s+")
_STARTING_QUOTES = [
    (re.compile(r"([«“‘„]|[`]+)"), r" \1 "),
    (re.compile(r'^"'), r"``"),
    (re.compile(r"(``)"), r" \1 "),
    (re.compile(r'([ \(\[{<])("|\'{2})'), r"\1 `` "),
    (re.compile(r"(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)"), r"\1 "),
]
_PUNCTUATION = [
    (re.compile(r'([^\.])(\.)([\]\)}>"\'»”’ ]*+)\s*$'), r"\1 \2 \3 "),
    (re.compile(r"([:,])([^\d])"), r" \1 \2"),
    (re.compile(r"([:,])$"), r" \1 "),
    (re.compile(r"\.{2,}"), r" \g<0> "),
    (re.compile(r"[;@#$%&]"), r" \g<0> "),
    (re.compile(r"[\u2012-\u2015]"), r" \g<0> "),
    (re.compile(r'([^\.])(\.)([\]\)}>"\']*)\s*$'), r"\1 \2\3 "),
    (re.compile(r"[?!]"), r" \g<0> "),
    (re.compile(r"([^'])' "), r"\1 ' "),
    (re.compile(r"[*]"), r" \g<0> "),
    (re.compile(r"[\]\[\(\)\{\}\<\>]"), r" \g<0> "),
    (re.compile(r"--"), r" -- "),
]
_ENDING_QUOTES = [
    (re.compile(r"([»”’])"), r" \1 "),
    (re.compile(r"''"), " '' "),
    (re.compile(r'"'), " '' "),
    (re.compile(r"\s+"), " "),
    (re.compile(r"([^' ])('[sS]|'[mM]|'[dD]|') "), r"\1 \2 "),
    (re.compile(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1 \2 "),
]
_CONTRACTIONS = [
    re.compile(pattern)
    for pattern in (
        r"(?i)\b(can)(not)\b", r"(?i)\b(d)('ye)\b", r"(?i)\b(gim)(me)\b", r"(?i)\b(gon)(na)\b",
        r"(?i)\b(got)(ta)\b", r"(?i)\b(lem)(me)\b", r"(?i)\b(more)('n)\b", r"(?i)\b(wan)(na)(?=\s)",
        r"(?i) ('t)(is)\b", r"(?i) ('t)(was)\b",
    )
]  # fmt: skip


#: Texts of letters, digits, "_", "-", "." and white space only: the rules above reduce to splitting at
#: white space and parting a sentence's closing period from its word (most action texts are such).
_PLAIN = re.compile(r"[A-Za-z0-9_\-. \t\n]*")
_SPLIT_WORDS = ("cannot", "gimme", "gonna", "gotta", "lemme", "wanna")  # NLTK parts these words


def word_tokenize(text: str) -> list[str]:
    """Words as NLTK's `word_tokenize` splits them (checked against NLTK 3.10 on single sentences)."""
    lowered = text.lower()
    if (
        _PLAIN.fullmatch(text)
        and ".." not in text
        and "--" not in text
        and not any(w in lowered for w in _SPLIT_WORDS)
    ):
        return [
            w
            for word in text.split()
            for w in ((word[:-1], ".") if len(word) > 1 and word[-1] == "." else (word,))
        ]
    words: list[str] = []
    for sentence in _SENTENCE_END.sub(r"\1\n", text).split("\n"):
        for pattern, replacement in _STARTING_QUOTES + _PUNCTUATION:
            sentence = pattern.sub(replacement, sentence)
        sentence = " " + sentence + " "
        for pattern, replacement in _ENDING_QUOTES:
            sentence = pattern.sub(replacement, sentence)
        for pattern in _CONTRACTIONS:
            sentence = pattern.sub(r" \1 \2 ", sentence)
        words.extend(sentence.split())
    return words


def read_action(
    text: str, arity: dict[str, int], executable: Callable[[str], bool], objects: frozenset[str] | set[str]
) -> tuple[str, tuple[str, ...]] | str:
    """AgentBoard's reading of `text`: (action name, objects), or why it is unreadable.

    `arity` maps every (lower-case) action name to its number of parameters, `executable(name)` says
    whether some action of that name is executable now, and `objects` holds the (lower-case) object
    names. Returns "unknown_verb" when no word names an executable action and "wrong_arity" when fewer
    objects than parameters are named.
    """
    words = word_tokenize(text.lower())
    name = next((w for w in words if w in arity and executable(w)), None)
    if name is None:
        return "unknown_verb"
    named = [w for w in words if w in objects]
    if len(named) < arity[name]:
        return "wrong_arity"
    return name, tuple(named[: arity[name]])
