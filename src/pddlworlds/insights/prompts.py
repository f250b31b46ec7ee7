"""Every word the insight generation sends, in one place (the heading agents show is in agents/prompts).

`INSIGHT_PROMPTS_VERSION` changes whenever the wording or the format changes; the run records it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .store import Rule

__all__ = [
    "INSIGHT_PROMPTS_VERSION",
    "INSIGHT_STOP",
    "episode_text",
    "generation_request",
    "generation_system",
    "numbered_rules",
    "scale_titles",
]

INSIGHT_PROMPTS_VERSION = "pw-insights-1"
#: Stop sequences of a generation call: an invented episode or step (a base model continuing the transcript).
INSIGHT_STOP = ("\nEpisode (", "\nAction:", "\nObservation:")

_TASK = (
    "You keep a short list of rules that help an agent reach goals in a text world by writing one action "
    "per turn. Rules live at three scales: general (every task in every world), domain (every problem of "
    "the {domain} world) and task (every problem whose goal is about {category}). Read the rules and the "
    "episodes below, then edit the rules so that they would have helped: keep what the episodes confirm, "
    "fix or drop what they contradict, and add what was missing. A rule is one short sentence of advice "
    "that holds beyond this one problem: no object names, no step numbers."
)
_FORMAT = (
    "Write only operations, one per line, at most {max_ops}:\n"
    "ADD general: <rule>   (or ADD domain: <rule>, ADD task: <rule>)\n"
    "EDIT <n>: <rule>   (rewrite rule n)\n"
    "REMOVE <n>   (rule n is wrong or useless)\n"
    "AGREE <n>   (the episodes confirm rule n)\n"
    "MOVE <n> <general|domain|task>: <rule>   (rule n belongs to another scale)\n"
    "Write NONE if nothing should change."
)
_EXAMPLE = (
    "Example of a reply:\n"
    "ADD domain: Before moving an item, check that the place it goes to is free.\n"
    "AGREE 2\n"
    "REMOVE 4"
)


def generation_system(domain: str, category: str, max_ops: int) -> str:
    return "\n\n".join(
        [
            _TASK.format(domain=domain, category=category.replace("+", " and ")),
            _FORMAT.format(max_ops=max_ops),
            _EXAMPLE,
        ]
    )


def numbered_rules(sections: Sequence[tuple[str, Sequence[Rule]]]) -> str:
    """The rules as the model sees them: a title per scale, rules numbered 1.. across the scales."""
    out, number = [], 0
    for title, rules in sections:
        out.append(f"{title}:")
        if not rules:
            out.append("(none yet)")
        for rule in rules:
            number += 1
            out.append(f"{number}. {rule.text}")
    return "\n".join(out)


def scale_titles(domain: str, category: str) -> tuple[str, str, str]:
    return (
        "General rules",
        f"Rules for the {domain} domain",
        f"Rules for tasks about {category.replace('+', ' and ')}",
    )


def episode_text(line: dict[str, Any], max_steps: int) -> str:
    """One stored episode as the model reads it: outcome, goal, first observation, then its steps."""
    steps = line.get("trajectory", [])
    if line.get("success"):
        outcome = f"succeeded in {line['steps']} steps"
    else:
        outcome = f"failed: {round(100 * float(line['progress']))}% of the goal after {line['steps']} steps"
    goal = str(line["goal"]).removeprefix("The goal is to satisfy the following conditions: ")
    out = [f"Episode ({outcome}):", f"Goal: {goal}", f"Observation: {line['initial_observation']}"]
    shown = steps[-max_steps:] if max_steps > 0 else []
    if len(shown) < len(steps):
        out.append(f"({len(steps) - len(shown)} earlier steps not shown)")
    for step in shown:
        out += [f"Action: {step['action']}", f"Observation: {step['observation']}"]
    return "\n".join(out)


def generation_request(rules_text: str, episodes: Sequence[dict[str, Any]], mode: str, max_steps: int) -> str:
    if mode == "pair":
        lead = "The same kind of task failed once and succeeded once. Compare the two episodes: what made the difference?"
    else:
        lead = "This episode reached its goal. What did it do right that is worth keeping as a rule?"
    parts = [
        "Current rules:\n" + rules_text,
        lead,
        *(episode_text(e, max_steps) for e in episodes),
        "Your operations:",
    ]
    return "\n\n".join(parts)
