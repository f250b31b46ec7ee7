"""The catalogue as rows: every shipped problem with its size, optimal length and solvability.

`pddlworlds list` prints these rows (as a table, CSV or JSON); code gets the same dicts:

    from pddlworlds.listing import problem_rows
    rows = problem_rows(["blocksworld"], split="agentboard")   # [{"domain": "blocksworld", ...}, ...]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from .artefacts.plans import optimal_lengths
from .artefacts.proofs import solvable_text
from .worlds.catalogue import domains, get_domain
from .worlds.grounding import ground

__all__ = ["ProblemRow", "problem_rows"]


class ProblemRow(TypedDict):
    """One problem of one split. `atoms` and `ground_actions` are None unless grounding was asked for;
    `optimal` is None without a stored optimal plan; `solvable` is "yes" (a stored plan), "no" (a stored
    proof), "no (trivial)" or "?" (neither)."""

    domain: str
    split: str
    problem: str
    objects: int
    atoms: int | None
    ground_actions: int | None
    goal: int
    optimal: int | None
    solvable: str


def problem_rows(
    domain_names: Sequence[str] | None = None, split: str | None = None, *, ground_problems: bool = False
) -> list[ProblemRow]:
    """The rows of the named domains (default all) and split (default every split), in catalogue order;
    `ground_problems` also grounds each problem to count its atoms and actions (slow on big ones)."""
    wanted = [get_domain(d) for d in domain_names] if domain_names else list(domains().values())
    rows: list[ProblemRow] = []
    for domain in wanted:
        for split_name in [split] if split else domain.splits():
            lengths = optimal_lengths(domain.name, split_name)
            for problem in domain.problems(split_name):
                task = domain.load(problem, split_name)
                grounded = ground(task) if ground_problems else None
                optimal = lengths.get(problem)
                rows.append(
                    ProblemRow(
                        domain=domain.name,
                        split=split_name,
                        problem=problem,
                        objects=len(task.objects),
                        atoms=len(grounded.atoms) if grounded else None,
                        ground_actions=len(grounded.actions) if grounded else None,
                        goal=len(task.goal),
                        optimal=optimal,
                        solvable=solvable_text(domain.name, problem, optimal),
                    )
                )
    return rows
