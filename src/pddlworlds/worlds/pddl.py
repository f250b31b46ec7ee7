"""Read STRIPS PDDL with unified-planning into a small lifted task.

(Reading the files' text safely and normalising it is `pddl_text.py`'s job; its public names are
re-exported here, so `from pddlworlds.worlds.pddl import PDDLError` keeps working.)

unified-planning's reader is strict in ways real benchmark files are not (section order, names declared both
as domain constants and problem objects). Such input is normalised here, with a warning, before it reaches
the reader; anything the reader still rejects becomes one `PDDLError` naming the file and, where known, the
line. Everything downstream works on `LiftedTask`, never on unified-planning objects, except the planner,
which gets the parsed `unified_planning` problem back from `read_up_problem`.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .pddl_text import (
    MAX_NESTING,
    MAX_PDDL_BYTES,
    PDDLError,
    PDDLNormalisationWarning,
    SizeLimitError,
    check_domain_structure,
    check_problem_structure,
    domain_constants,
    domain_name,
    normalise_domain,
    normalise_problem,
    normalised_texts,
    read_pddl_bytes,
    read_pddl_text,
)

__all__ = [
    "PDDLError",
    "SizeLimitError",
    "MAX_PDDL_BYTES",
    "MAX_NESTING",
    "read_pddl_bytes",
    "read_pddl_text",
    "PDDLNormalisationWarning",
    "ignore_normalisation_warnings",
    "normalisation_warnings_ignored",
    "Literal",
    "Schema",
    "LiftedTask",
    "read_task",
    "read_up_problem",
    "normalise_domain",
    "normalise_problem",
    "check_domain_structure",
    "check_problem_structure",
    "domain_constants",
    "domain_name",
    "lift",
]


def ignore_normalisation_warnings() -> None:
    """Ignore `PDDLNormalisationWarning` from now on: what a program (the CLI, a worker, a script) does, as
    the shipped files' rewrites are known; library code that reads them uses the context manager below."""
    warnings.simplefilter("ignore", PDDLNormalisationWarning)


@contextlib.contextmanager
def normalisation_warnings_ignored() -> Iterator[None]:
    """Ignore `PDDLNormalisationWarning` inside the block only."""
    with warnings.catch_warnings():
        ignore_normalisation_warnings()
        yield


# --------------------------------------------------------------------------------------------------
# The lifted task: what the grounder needs, in plain data.


@dataclass(frozen=True)
class Literal:
    """`predicate(args)` in a schema; an arg is a parameter index (int) or a constant name (str)."""

    predicate: str
    args: tuple[int | str, ...]
    positive: bool = True


@dataclass(frozen=True)
class Schema:
    name: str
    parameters: tuple[str, ...]  # PDDL parameter names without '?'
    types: tuple[str, ...]
    preconditions: tuple[Literal, ...]
    add: tuple[Literal, ...]
    delete: tuple[Literal, ...]


@dataclass(frozen=True)
class LiftedTask:
    domain_name: str
    problem_name: str
    predicates: tuple[tuple[str, tuple[str, ...]], ...]  # (name, parameter names), declaration order
    schemas: tuple[Schema, ...]
    objects: tuple[tuple[str, str], ...]  # (name, type), constants included
    supertypes: dict[str, tuple[str, ...]]  # type -> itself and its ancestors
    init: frozenset[tuple[str, tuple[str, ...]]]
    goal: tuple[tuple[str, tuple[str, ...], bool], ...]  # (predicate, args, positive)

    def objects_of(self, type_name: str) -> list[str]:
        return [name for name, t in self.objects if type_name in self.supertypes.get(t, (t,))]


def _line_of(exc: Exception) -> int | None:
    for attr in ("lineno", "line_number"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            return value
    match = re.search(r"line[: ]+(\d+)", str(exc))
    return int(match.group(1)) if match else None


def read_up_problem(
    domain_path: str | Path,
    problem_path: str | Path,
    environment=None,
    *,
    max_file_bytes: int = MAX_PDDL_BYTES,
):
    """Parse with unified-planning (after normalisation) into a `unified_planning.model.Problem`.

    By default the problem lives in a private `Environment`, so no hidden global state is shared between
    problems. unified-planning 1.3's grounder (used by `SequentialSimulator` and plan validation) builds
    actions in the global environment whatever the problem's, so pass
    `environment=unified_planning.environment.get_environment()` for a problem those engines accept.
    Files over `max_file_bytes` are refused before unified-planning reads them (`SizeLimitError`).
    """
    from unified_planning.environment import Environment
    from unified_planning.io import PDDLReader

    domain_path, problem_path = Path(domain_path), Path(problem_path)
    domain_text, problem_text = normalised_texts(domain_path, problem_path, max_file_bytes)
    env = Environment() if environment is None else environment
    env.credits_stream = None
    try:
        return PDDLReader(environment=env).parse_problem_string(domain_text, problem_text)
    except Exception as exc:
        problem_exc = exc
    # Only on failure, the domain alone, to blame the right file (parsing it first always doubled the cost).
    try:
        PDDLReader(environment=env).parse_problem_string(domain_text)
    except Exception as exc:
        raise PDDLError(f"cannot parse domain: {_first_line(exc)}", domain_path, _line_of(exc)) from exc
    raise PDDLError(
        f"cannot parse problem: {_first_line(problem_exc)}", problem_path, _line_of(problem_exc)
    ) from problem_exc


def _first_line(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def read_task(
    domain_path: str | Path, problem_path: str | Path, *, max_file_bytes: int = MAX_PDDL_BYTES
) -> LiftedTask:
    """Parse a STRIPS domain and problem into a `LiftedTask`."""
    problem = read_up_problem(domain_path, problem_path, max_file_bytes=max_file_bytes)
    domain_path = Path(domain_path)
    return lift(problem, Path(problem_path), domain_name(domain_path, max_file_bytes), domain_path)


def lift(
    problem, problem_path: Path | None = None, domain: str | None = None, domain_path: Path | None = None
) -> LiftedTask:
    """Translate a parsed unified-planning problem into a `LiftedTask`; reject what is not STRIPS, naming
    the domain file for what its actions and predicates hold and the problem file for its goal."""

    def fail(message: str, path: Path | None = None):
        raise PDDLError(f"not STRIPS: {message}", path or domain_path or problem_path)

    supertypes: dict[str, tuple[str, ...]] = {}
    for t in problem.user_types:
        chain = []
        cur = t
        while cur is not None:
            chain.append(cur.name)
            cur = cur.father
        supertypes[t.name] = tuple(chain)
    objects = tuple((o.name, o.type.name) for o in problem.all_objects)
    for name, t in objects:
        supertypes.setdefault(t, (t,))

    predicates = []
    for fluent in problem.fluents:
        if not fluent.type.is_bool_type():
            fail(f"fluent {fluent.name} is numeric")
        predicates.append((fluent.name, tuple(p.name for p in fluent.signature)))

    def literal(node, params: dict[str, int], where: str) -> Literal:
        positive = True
        if node.is_not():
            positive = False
            node = node.arg(0)
        if not node.is_fluent_exp():
            fail(f"{where}: unsupported expression {node}")
        args: list[int | str] = []
        for arg in node.args:
            if arg.is_parameter_exp():
                args.append(params[arg.parameter().name])
            elif arg.is_object_exp():
                args.append(arg.object().name)
            else:
                fail(f"{where}: unsupported argument {arg}")
        return Literal(node.fluent().name, tuple(args), positive)

    def conjuncts(node):
        if node.is_and():
            for arg in node.args:
                yield from conjuncts(arg)
        elif node.is_true():
            return
        else:
            yield node

    schemas = []
    for action in problem.actions:
        if not hasattr(action, "preconditions") or not hasattr(action, "effects"):
            fail(f"action {action.name} is not instantaneous")
        params = {p.name: i for i, p in enumerate(action.parameters)}
        pre = tuple(
            literal(c, params, f"precondition of {action.name}")
            for node in action.preconditions
            for c in conjuncts(node)
        )
        add, delete = [], []
        for effect in action.effects:
            if effect.is_conditional() or not effect.is_assignment():
                fail(f"action {action.name} has a conditional or numeric effect")
            lit = literal(effect.fluent, params, f"effect of {action.name}")
            (add if effect.value.is_true() else delete).append(lit)
        schemas.append(
            Schema(
                name=action.name,
                parameters=tuple(p.name for p in action.parameters),
                types=tuple(p.type.name for p in action.parameters),
                preconditions=pre,
                add=tuple(add),
                delete=tuple(delete),
            )
        )

    def ground_atom(node) -> tuple[str, tuple[str, ...]]:
        return node.fluent().name, tuple(a.object().name for a in node.args)

    init = frozenset(
        ground_atom(fluent) for fluent, value in problem.explicit_initial_values.items() if value.is_true()
    )
    goal = []
    for node in problem.goals:
        for c in conjuncts(node):
            positive = not c.is_not()
            atom = c.arg(0) if c.is_not() else c
            if not atom.is_fluent_exp():
                fail(f"goal: unsupported expression {c}", problem_path)
            goal.append((*ground_atom(atom), positive))
    return LiftedTask(
        domain_name=domain or "unknown",
        problem_name=problem.name,
        predicates=tuple(predicates),
        schemas=tuple(schemas),
        objects=objects,
        supertypes=supertypes,
        init=init,
        goal=tuple(goal),
    )
