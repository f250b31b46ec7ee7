"""Insight generation: one model call per selected experience, whose reply edits the store.

Each call sees the rules that concern the experience (general, its domain's, its category's), numbered
as `prompts.numbered_rules` shows them, and the experience's episodes; the reply's operations are parsed
(`operations.py`) and applied (`editing.py`). A reply the backend reports as unusable changes nothing
and is recorded; an exception from the backend propagates (the trial's update is then redone on resume).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..llm import LLM, Message
from . import prompts
from .editing import DEFAULT_CAP, EditContext, apply_operations
from .experience import Experience
from .operations import parse_operations
from .store import InsightStore, Rule

__all__ = ["GenerationOptions", "rules_for", "update_store"]


@dataclass(frozen=True)
class GenerationOptions:
    cap: int = DEFAULT_CAP  # rules per scale
    max_tokens: int = 160  # per generation call
    max_operations: int = 4  # asked for in the prompt (more are still applied)
    max_steps_shown: int = 30  # trajectory steps per episode in the prompt (the last ones)


def rules_for(store: InsightStore, domain: str, category: str) -> list[tuple[str, list[Rule]]]:
    """(title, rules) for the three scales that concern (domain, category), broadest first."""
    titles = prompts.scale_titles(domain, category)
    scales = ("general", f"domain:{domain}", f"task:{category}")
    return [(title, store.by_scale(scale)) for title, scale in zip(titles, scales)]


def update_store(
    store: InsightStore,
    experiences: Sequence[Experience],
    llm: LLM,
    options: GenerationOptions = GenerationOptions(),
) -> list[dict[str, Any]]:
    """Edit `store` in place from `experiences` (one call each) and bump its revision; one log entry per
    call: the experience, the reply, the operations applied and rejected, lines that held none."""
    log = []
    for experience in experiences:
        sections = rules_for(store, experience.domain, experience.category)
        numbering = [rule.id for _, rules in sections for rule in rules]
        messages = [
            Message(
                "system",
                prompts.generation_system(experience.domain, experience.category, options.max_operations),
            ),
            Message(
                "user",
                prompts.generation_request(
                    prompts.numbered_rules(sections),
                    experience.episodes,
                    experience.mode,
                    options.max_steps_shown,
                ),
            ),
        ]
        completion = llm.chat(
            messages, max_tokens=options.max_tokens, stop=prompts.INSIGHT_STOP, temperature=0.0
        )
        entry: dict[str, Any] = {
            "experience": experience.label,
            "mode": experience.mode,
            "domain": experience.domain,
            "category": experience.category,
            "prompt_tokens": int(completion.prompt_tokens),
            "completion_tokens": int(completion.completion_tokens),
            "reply": completion.text if completion.error is None else (completion.raw or ""),
            "error": completion.error,
        }
        if completion.error is None:
            parsed = parse_operations(completion.text)
            edits = apply_operations(
                store,
                parsed.operations,
                numbering,
                EditContext(experience.domain, experience.category),
                cap=options.cap,
            )
            entry.update(
                applied=edits.applied,
                rejected=edits.rejected,
                dropped=edits.dropped,
                unparsable=parsed.unparsable,
            )
        log.append(entry)
    store.revision += 1
    return log
