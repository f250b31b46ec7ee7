"""Applying parsed operations to a store: scores, the drop at zero, and the size cap per scale.

The model numbers rules as the prompt showed them (`numbering[n - 1]` is rule n's id). An operation that
names no shown rule, or a scale it cannot write, is rejected with a reason and the rest go on.

Scores: ADD starts a rule at `NEW_SCORE`; AGREE adds 1; EDIT replaces the text and adds 1 (the model
kept the rule); MOVE changes the scale (and the text when given) and keeps the score; REMOVE takes 1
off, and a rule at zero is dropped. A scale over its cap keeps its highest-scored rules (the older one
on a tie), so a new rule displaces only a weaker one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .operations import Operation
from .store import SCALE_KINDS, InsightStore, Rule, check_scale

__all__ = [
    "DEFAULT_CAP",
    "NEW_SCORE",
    "EditContext",
    "EditLog",
    "apply_operations",
    "enforce_cap",
    "resolve_scale",
]

NEW_SCORE = 2
#: Rules kept per scale (per `general`, per `domain:<name>`, per `task:<category>`).
DEFAULT_CAP = 10


@dataclass(frozen=True)
class EditContext:
    """What `domain` and `task` mean in this reply: the experience's domain and task category."""

    domain: str
    category: str


@dataclass
class EditLog:
    applied: list[str] = field(default_factory=list)  # e.g. "ADD #4 general", "REMOVE #2 (score 1)"
    rejected: list[str] = field(default_factory=list)  # "<operation>: <reason>"
    dropped: list[int] = field(default_factory=list)  # rule ids dropped (score zero or over the cap)


def resolve_scale(written: str, context: EditContext) -> str:
    """`domain` -> `domain:<context domain>`, `task` -> `task:<context category>`; full scales as given.

    Only the experience's own domain and category can be written: another name raises ValueError.
    """
    kind, _, name = written.partition(":")
    kind = kind.lower()
    if kind == "general":
        return "general"
    own = context.domain if kind == "domain" else context.category
    if kind not in SCALE_KINDS:
        raise ValueError(f"unknown scale {written!r}")
    if name and name.lower() != own.lower():
        raise ValueError(f"scale {written!r} is not this experience's ({kind}:{own})")
    return check_scale(f"{kind}:{own}")


def _describe(op: Operation) -> str:
    return op.source or f"{op.kind} {op.number or ''} {op.scale or ''} {op.text or ''}".strip()


def apply_operations(
    store: InsightStore,
    operations: Sequence[Operation],
    numbering: Sequence[int],
    context: EditContext,
    *,
    cap: int = DEFAULT_CAP,
) -> EditLog:
    """Apply `operations` in order to `store` (in place); returns what was applied, rejected, dropped."""
    log = EditLog()

    def shown(op: Operation) -> Rule | None:
        if op.number is None or not 1 <= op.number <= len(numbering):
            shown_range = f"rules 1-{len(numbering)} were" if numbering else "no rule was"
            log.rejected.append(f"{_describe(op)}: no rule {op.number} was shown ({shown_range} shown)")
            return None
        rule = store.get(numbering[op.number - 1])
        if rule is None:
            log.rejected.append(f"{_describe(op)}: rule {op.number} was already removed")
        return rule

    for op in operations:
        try:
            if op.kind == "ADD":
                scale = resolve_scale(op.scale or "general", context)
                text = op.text or ""
                twin = next((r for r in store.by_scale(scale) if r.text.lower() == text.lower()), None)
                if twin is not None:  # the same rule again counts as agreement
                    twin.score += 1
                    log.applied.append(f"ADD {scale} (same as #{twin.id}: score {twin.score})")
                    continue
                rule = store.add(scale, text, NEW_SCORE)
                log.applied.append(f"ADD #{rule.id} {scale}")
                continue
            rule = shown(op)
            if rule is None:
                continue
            if op.kind == "AGREE":
                rule.score += 1
                log.applied.append(f"AGREE #{rule.id} (score {rule.score})")
            elif op.kind == "REMOVE":
                rule.score -= 1
                log.applied.append(f"REMOVE #{rule.id} (score {rule.score})")
                if rule.score <= 0:
                    store.rules.remove(rule)
                    log.dropped.append(rule.id)
            elif op.kind == "EDIT":
                rule.text = op.text or rule.text
                rule.score += 1
                log.applied.append(f"EDIT #{rule.id} (score {rule.score})")
            elif op.kind == "MOVE":
                rule.scale = resolve_scale(op.scale or "general", context)
                rule.text = op.text or rule.text
                log.applied.append(f"MOVE #{rule.id} {rule.scale}")
        except ValueError as exc:
            log.rejected.append(f"{_describe(op)}: {exc}")
    log.dropped += enforce_cap(store, cap)
    store.sort()
    return log


def enforce_cap(store: InsightStore, cap: int) -> list[int]:
    """Keep at most `cap` rules per scale: the highest scores, the older rule on a tie; the ids dropped."""
    dropped = []
    for scale in sorted({r.scale for r in store.rules}):
        rules = sorted(store.by_scale(scale), key=lambda r: (-r.score, r.id))
        for rule in rules[cap:]:
            store.rules.remove(rule)
            dropped.append(rule.id)
    return dropped
