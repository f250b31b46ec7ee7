"""The catalogue as rows: every shipped problem with its size, optimal length and solvability.

`pddlworlds list` prints these rows (as a table, CSV or JSON); code gets the same dicts:

    from pddlworlds.listing import problem_rows
    rows = problem_rows(["blocksworld"], split="agentboard")   # [{"domain": "blocksworld", ...}, ...]
    rows = problem_rows(domains_root="my_domains")              # the domain folders of one's own
    rows = file_rows("domain.pddl", ["p01.pddl", "p02.pddl"])   # PDDL files
    rows = world_rows()                                         # one row a world: its id, card and ladder

Stored optimal lengths and proofs are the shipped domains' only: a domain of one's own (even of a shipped
domain's name) shows none ("?" solvable).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

from .artefacts.plans import optimal_costs, optimal_lengths
from .artefacts.proofs import solvable_text
from .worlds.catalogue import AGENTBOARD_SPLIT, domains, get_domain, load_task
from .worlds.grounding import ground
from .worlds.ladder import BANDS, HELDOUT_SPLIT, LADDER_SPLIT, band_of_problem
from .worlds.pddl import LiftedTask

__all__ = ["ProblemRow", "WorldRow", "file_rows", "problem_rows", "world_rows"]


class WorldRow(TypedDict):
    """One world: its registered id, what its card says, and its problems. `ladder` and `heldout` count the
    problems per band ("10/10/10": easy/medium/hard); `optima` is the range of the ladder's proven optima
    (cost on a domain with action costs, else length); `public` counts AgentBoard's problems (the four)."""

    world: str
    id: str
    title: str
    kinds: str
    origin: str
    features: str
    public: int
    ladder: str
    heldout: str
    optima: str


def world_rows(domains_root: str | os.PathLike | None = None) -> list[WorldRow]:
    """A row for every world (shipped, or the folders under `domains_root`), in name order."""
    rows: list[WorldRow] = []
    for name, domain in domains(domains_root).items():
        card = domain.card
        splits = domain.splits()

        def bands(split: str, domain=domain, splits=splits) -> str:
            if split not in splits:
                return "-"
            names = domain.problems(split)
            return "/".join(str(sum(band_of_problem(p) == band for p in names)) for band in BANDS)

        optima = {**optimal_lengths(name, LADDER_SPLIT), **optimal_costs(name, LADDER_SPLIT)}
        rows.append(WorldRow(
            world=name, id=f"pddlworlds/{name.capitalize()}-v0", title=card.title if card else name,
            kinds=", ".join(card.kinds) if card else "", origin=card.origin if card else "",
            features=", ".join(card.features) if card else "",
            public=len(domain.problems(AGENTBOARD_SPLIT)) if AGENTBOARD_SPLIT in splits else 0,
            ladder=bands(LADDER_SPLIT), heldout=bands(HELDOUT_SPLIT),
            optima=f"{min(optima.values())}-{max(optima.values())}" if optima and domains_root is None else "-",
        ))
    return rows


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
