"""The unified-planning side: reading a problem for the engines, replacing its initial state, validating.

Used inside the worker process (solving) and by `validate_plan`. Everything unified-planning is imported
inside the functions, so importing the planner front stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..worlds.grounding import Atom
from ..worlds.pddl import (
    domain_constants,
    normalisation_warnings_ignored,
    normalise_domain,
    normalise_problem,
    read_up_problem,
)
from .results import Action

__all__ = ["read_problem", "set_initial_state", "up_validate"]

_DOMAIN_PARSES: dict[str, Any] = {}


def _normalised(domain_file: Path, problem_file: Path) -> tuple[str, str]:
    """The texts unified-planning accepts (section order, no repeated constants), as `pddl` makes them."""
    domain_text, _ = normalise_domain(domain_file.read_text(), domain_file)
    problem_text, _ = normalise_problem(problem_file.read_text(), domain_constants(domain_text, domain_file),
                                        problem_file)
    return domain_text, problem_text


def read_problem(domain_file: Path, problem_file: Path, initial_atoms: Iterable[Atom] | None = None):
    """The problem as `read_up_problem` reads it, but in unified-planning's *global* environment.

    In a private environment unified-planning 1.3's plan validator (its grounder builds actions without
    passing the environment on) and the "fast-downward-opt" engine fail with "Expression has a different
    environment". In a worker process the global environment is fresh anyway. The parsed domain text is
    remembered (parsing it is half the cost of reading a problem); on any surprise from the reader's
    internals this falls back to `read_up_problem`, which also gives the proper error messages.
    """
    from unified_planning.shortcuts import get_environment

    environment = get_environment()
    environment.credits_stream = None
    problem = None
    with normalisation_warnings_ignored():
        try:
            from unified_planning.io import PDDLReader
            from unified_planning.io.utils import parse_string

            domain_text, problem_text = _normalised(Path(domain_file), Path(problem_file))
            domain_text = domain_text.replace("\t", " ").lower()
            problem_text = problem_text.replace("\t", " ").lower()
            reader = PDDLReader(environment=environment)
            domain_parse = _DOMAIN_PARSES.get(domain_text)
            if domain_parse is None:
                domain_parse = parse_string(reader._pp_domain, domain_text, parse_all=True)
                if len(_DOMAIN_PARSES) > 16:
                    _DOMAIN_PARSES.clear()
                _DOMAIN_PARSES[domain_text] = domain_parse
            problem_parse = parse_string(reader._pp_problem, problem_text, parse_all=True)
            problem = reader._parse_problem(domain_parse, domain_text, problem_parse, problem_text)
        except Exception:  # noqa: BLE001  (the reader's internals changed, or bad PDDL: read it the documented way)
            problem = None
        if problem is None:
            problem = read_up_problem(domain_file, problem_file, environment=environment)
    if initial_atoms is not None:
        set_initial_state(problem, initial_atoms)
    return problem


def _named(items: Callable[[], Iterable[Any]], name: str, get: Callable[[str], Any]):
    """`get(name)`, else the item of `items()` whose name matches without case (PDDL names are case-insensitive)."""
    try:
        return get(name)
    except Exception:
        for item in items():
            if item.name.lower() == name.lower():
                return item
        raise


def set_initial_state(problem, atoms: Iterable[Atom]) -> None:
    """Make exactly `atoms` true initially (every other Boolean fluent false, as in PDDL)."""
    for fluent_exp, value in list(problem.explicit_initial_values.items()):
        if value.is_true():
            problem.set_initial_value(fluent_exp, False)
    for name, args in atoms:
        fluent = _named(lambda: problem.fluents, name, problem.fluent)
        problem.set_initial_value(fluent(*[_named(lambda: problem.all_objects, a, problem.object) for a in args]), True)


def _up_plan(problem, actions: Sequence[Action]):
    from unified_planning.plans import ActionInstance, SequentialPlan

    em = problem.environment.expression_manager
    return SequentialPlan(
        [ActionInstance(_named(lambda: problem.actions, s, problem.action),
                        [em.ObjectExp(_named(lambda: problem.all_objects, a, problem.object)) for a in args])
         for s, args in actions],
        environment=problem.environment,
    )


def up_validate(problem, actions: Sequence[Action]) -> tuple[bool | None, str]:
    """(valid, reason) from unified-planning's `PlanValidator`; a plan it cannot even build is invalid, and a
    problem none of its validators takes (None: not judged) says which features stopped them (IPC 2018's
    data-network leaves some numeric values undefined, which no validator of unified-planning 1.3 accepts)."""
    from unified_planning.engines import ValidationResultStatus
    from unified_planning.exceptions import UPNoSuitableEngineAvailableException

    try:
        plan = _up_plan(problem, actions)
    except Exception as exc:  # noqa: BLE001  (an unknown action or object: the plan is invalid)
        return False, f"cannot build the plan: {type(exc).__name__}: {exc}"
    try:
        validator = problem.environment.factory.PlanValidator(problem_kind=problem.kind, plan_kind=plan.kind)
    except UPNoSuitableEngineAvailableException:
        features = ", ".join(sorted(str(f).lower() for f in problem.kind.features))
        return None, f"no validator of unified-planning takes this problem's features ({features})"
    with validator:
        result = validator.validate(problem, plan)
    ok = result.status == ValidationResultStatus.VALID
    reason = "" if ok else str(getattr(result, "reason", None) or getattr(result, "inapplicable_action", "") or "")
    return ok, reason
