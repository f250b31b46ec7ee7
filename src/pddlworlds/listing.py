"""The catalogue as rows: every shipped problem with its size, optimal length and solvability.

`pddlworlds list` prints these rows (as a table, CSV or JSON); code gets the same dicts:

    from pddlworlds.listing import problem_rows
    rows = problem_rows(["blocksworld"], split="agentboard")   # [{"domain": "blocksworld", ...}, ...]
    rows = problem_rows(domains_root="my_domains")              # the domain folders of one's own
    rows = file_rows("domain.pddl", ["p01.pddl", "p02.pddl"])   # PDDL files

Stored optimal lengths and proofs are the shipped domains' only: a domain of one's own (even of a shipped
domain's name) shows none ("?" solvable).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

from .artefacts.plans import optimal_lengths
from .artefacts.proofs import solvable_text
from .worlds.catalogue import domains, get_domain, load_task
from .worlds.grounding import ground
from .worlds.pddl import LiftedTask

__all__ = ["ProblemRow", "file_rows", "problem_rows"]


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


def _row(domain: str, split: str, problem: str, task: LiftedTask, ground_problems: bool, optimal: int | None,
         solvable: str) -> ProblemRow:
    grounded = ground(task) if ground_problems else None
    return ProblemRow(
        domain=domain,
        split=split,
        problem=problem,
        objects=len(task.objects),
        atoms=len(grounded.atoms) if grounded else None,
        ground_actions=len(grounded.actions) if grounded else None,
        goal=len(task.goal),
        optimal=optimal,
        solvable=solvable,
    )


def problem_rows(
    domain_names: Sequence[str] | None = None, split: str | None = None, *, ground_problems: bool = False,
    domains_root: str | os.PathLike | None = None,
) -> list[ProblemRow]:
    """The rows of the named domains (default all) and split (default every split), in catalogue order;
    `ground_problems` also grounds each problem to count its atoms and actions (slow on big ones).
    `domains_root`: the domain folders under that folder instead of the shipped ones."""
    wanted = (
        [get_domain(d, domains_root) for d in domain_names] if domain_names else list(domains(domains_root).values())
    )
    shipped = domains_root is None
    rows: list[ProblemRow] = []
    for domain in wanted:
        for split_name in [split] if split else domain.splits():
            lengths = optimal_lengths(domain.name, split_name) if shipped else {}
            for problem in domain.problems(split_name):
                optimal = lengths.get(problem)
                solvable = solvable_text(domain.name, problem, optimal) if shipped else "?"
                task = domain.load(problem, split_name)
                rows.append(_row(domain.name, split_name, problem, task, ground_problems, optimal, solvable))
    return rows


def file_rows(
    domain_file: str | os.PathLike, problem_files: Sequence[str | os.PathLike], *, ground_problems: bool = False
) -> list[ProblemRow]:
    """The rows of PDDL files of one's own (split "custom", domain named by the domain file's folder, as
    `make_env` names it), in the order given."""
    domain_name = Path(domain_file).resolve().parent.name
    return [
        _row(domain_name, "custom", Path(f).stem, load_task(domain_file, f), ground_problems, None, "?")
        for f in problem_files
    ]
