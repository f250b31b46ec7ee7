"""Text written from PDDL names, for domains without a `text.toml`: a predicate's sentences from its name
(`(on ?x ?y)` reads "{x} is on {y}"), and a starter `text.toml` to edit (`pddlworlds text-template`)."""

from __future__ import annotations

import json
import re

from .pddl import LiftedTask

__all__ = ["generic_sentences", "starter_text"]

#: First words of predicate names that read as a verb of their own ("has-wrench ?x": "x has wrench").
_VERBS = frozenset(["is", "are", "has", "have", "can", "contains", "holds", "needs", "carries", "sees", "knows"])



_PREPOSITIONS = frozenset(["at", "in", "on", "near", "under", "above", "below", "inside", "into", "onto", "with", "from", "to", "by", "behind", "over"])


def generic_sentences(name: str, params: tuple[str, ...]) -> tuple[str, str]:
    """(true, false) sentences written from a predicate's name where a domain gives none: `(on ?x ?y)` reads
    "{x} is on {y}", `(clear ?x)` "{x} is clear", `(has-key ?a ?k)` "{a} has key {k}", a longer one
    "{words} holds for {a}, {b} and {c}"."""
    words = " ".join(w for w in re.split(r"[-_]+", name) if w) or name
    slots = ["{" + p + "}" for p in params]
    if not slots:
        return f"{words} is true", f"{words} is false"
    if len(slots) == 1 and words.split(" ")[-1] in _PREPOSITIONS:  # (at ?r): "at hall is true"
        return f"{words} {slots[0]} is true", f"{words} {slots[0]} is false"
    if len(slots) <= 2:
        first, *rest = words.split(" ", 1)
        if first in _VERBS:
            tail = " ".join([*rest, *slots[1:]])
            negated = {"is": "is not", "are": "are not", "can": "cannot"}.get(first, "does not " + (
                "have" if first == "has" else first.removesuffix("s")))
            return f"{slots[0]} {first} {tail}".strip(), f"{slots[0]} {negated} {tail}".strip()
        tail = " ".join([words, *slots[1:]])
        return f"{slots[0]} is {tail}", f"{slots[0]} is not {tail}"
    listed = ", ".join(slots[:-1]) + " and " + slots[-1]
    return f"{words} holds for {listed}", f"{words} does not hold for {listed}"


def starter_text(task: LiftedTask) -> str:
    """A `text.toml` for a domain, to edit: every predicate's generic sentences and every action's bare
    phrasing, in the file's own format (`pddlworlds text-template` writes it)."""
    lines = [f"# How {task.domain_name} reads in words: a starter written by `pddlworlds text-template`; edit it.",
             "# Sentences: [when true, when false]; actions: the canonical phrasing first, then others accepted.",
             'after_action = "full"', "", "[predicates]"]
    for name, params in task.predicates:  # a JSON string is a TOML basic string
        lines.append(f"{_toml_key(name)} = {json.dumps(list(generic_sentences(name, params)))}")
    lines += ["", "[actions]"]
    for schema in task.schemas:
        bare = " ".join([schema.name, *("{" + p + "}" for p in schema.parameters)])
        lines.append(f"{_toml_key(schema.name)} = {json.dumps([bare])}")
    return "\n".join(lines) + "\n"


def _toml_key(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z0-9_-]+", text) else json.dumps(text)


