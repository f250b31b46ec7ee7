"""Task categories, defined here and nowhere else: the sorted set of a problem's goal predicates.

Blocksworld problems whose goal says only `on` facts are category `on`; a goal with `at` and a negated
`holding` is `at+not-holding`. Rules of scale `task:<category>` are shared by every problem of that
category, in any domain.
"""

from __future__ import annotations

import functools

from ..worlds.pddl import LiftedTask

__all__ = ["category_of", "task_category"]


def task_category(task: LiftedTask) -> str:
    """The category of a parsed problem: its goal predicates, sorted, joined by `+`."""
    names = {predicate if positive else f"not-{predicate}" for predicate, _, positive in task.goal}
    return "+".join(sorted(names)) or "none"


@functools.lru_cache(maxsize=1024)
def category_of(domain: str, split: str, problem: str) -> str:
    """The category of a catalogue problem (read once per process)."""
    from ..worlds.catalogue import get_domain
    from ..worlds.pddl import normalisation_warnings_ignored

    with normalisation_warnings_ignored():  # known quirks of shipped problems; the env reports them itself
        return task_category(get_domain(domain).load(problem, split))
