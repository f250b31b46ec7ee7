"""Read classical PDDL into a small lifted task, with Fast Downward's translator as the parser.

(Reading the files' text safely and checking what they ask for is `pddl_text.py`'s job; its public names
are re-exported here, so `from pddlworlds.worlds.pddl import PDDLError` keeps working.)

Fast Downward's translator is the field's reference reader of classical PDDL (ADL, derived predicates,
action costs). Our own s-expression layer reads the files first (size and nesting limits, lines for
errors), and the translator's parser builds its task from those lists; anything it rejects becomes one
`PDDLError` naming the file. Everything downstream works on `LiftedTask`, plain data, except the
grounder, which hands `LiftedTask.source` back to the translator, and the planner, which gets a parsed
`unified_planning` problem from `read_up_problem`.
"""

from __future__ import annotations

import contextlib
import io
import re
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .pddl_constants import adopt_constants
from .pddl_corners import declared_types
from .pddl_text import (
    MAX_NESTING,
    MAX_PDDL_BYTES,
    MAX_UP_BYTES,
    PDDLError,
    PDDLNormalisationWarning,
    SizeLimitError,
    check_domain_structure,
    check_problem_structure,
    domain_constants,
    domain_name,
    line_of_form,
    normalise_domain,
    normalise_problem,
    normalised_texts,
    parsed_domain,
    parsed_problem,
    read_pddl_bytes,
    read_pddl_text,
)

__all__ = [
    "MAX_NESTING",
    "MAX_PDDL_BYTES",
    "MAX_UP_BYTES",
    "Formula",
    "LiftedTask",
    "Literal",
    "PDDLError",
    "PDDLNormalisationWarning",
    "Schema",
    "SizeLimitError",
    "check_domain_structure",
    "check_problem_structure",
    "domain_constants",
    "domain_name",
    "fd_task",
    "ignore_normalisation_warnings",
    "normalisation_warnings_ignored",
    "normalise_domain",
    "normalise_problem",
    "read_pddl_bytes",
    "read_pddl_text",
    "read_task",
    "read_up_problem",
    "translator",
    "translator_quiet",
]


def translator():
    """Fast Downward's translator modules, its options set once for use as a library (actions whose
    effects vanish are kept: a no-op is still an action an agent may take)."""
    from fast_downward.translate import options

    if options.options is None:
        options.set_options(["domain.pddl", "problem.pddl", "--keep-no-ops"])
    from fast_downward.translate import build_model, instantiate, normalize, pddl, pddl_to_prolog
    from fast_downward.translate.pddl_parser import parsing_functions

    return pddl, parsing_functions, normalize, pddl_to_prolog, build_model, instantiate


#: Held while the translator's output is redirected: `redirect_stdout` swaps the process-wide `sys.stdout`,
#: so two threads redirecting at once could restore each other's buffer and silence the program for good.
_QUIET = threading.RLock()


@contextlib.contextmanager
def translator_quiet() -> Iterator[None]:
    """The translator prints its progress to stdout and its warnings (a type named like a predicate...) to
    stderr; a library says nothing unasked, so both are dropped while it runs (one thread at a time)."""
    with _QUIET, contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


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
# The lifted task: what the grounder and the text need, in plain data.


@dataclass(frozen=True)
class Literal:
    """`predicate(args)` in a schema; an arg is a parameter index (int) or a constant name (str)."""

    predicate: str
    args: tuple[int | str, ...]
    positive: bool = True


@dataclass(frozen=True)
class Formula:
    """A condition that is not a literal (`or`, `forall`, `exists`, a nested `not`...), as plain data.

    `op` is "atom", "not", "and", "or", "forall", "exists", "true" or "false"; an atom's args are variable
    names ("?x") or objects; a quantifier binds `variables` as (name, type) pairs.
    """

    op: str
    parts: tuple[Formula, ...] = ()
    predicate: str = ""
    args: tuple[str, ...] = ()
    variables: tuple[tuple[str, str], ...] = ()

    @property
    def pddl(self) -> str:
        if self.op == "atom":
            return "(" + " ".join((self.predicate, *self.args)) + ")"
        if self.op in ("true", "false"):
            return "(and)" if self.op == "true" else "(or)"
        inner = " ".join(p.pddl for p in self.parts)
        if self.op in ("forall", "exists"):
            bound = " ".join(f"{name} - {type_name}" for name, type_name in self.variables)
            return f"({self.op} ({bound}) {inner})"
        return f"({self.op} {inner})"


@dataclass(frozen=True)
class Schema:
    name: str
    parameters: tuple[str, ...]  # PDDL parameter names without '?'
    types: tuple[str, ...]
    preconditions: tuple[Literal, ...]  # the precondition's top-level literals
    add: tuple[Literal, ...]  # unconditional add effects
    delete: tuple[Literal, ...]  # unconditional delete effects
    #: The precondition's other top-level conjuncts (free variables "?name" are the parameters).
    conditions: tuple[Formula, ...] = ()
    #: Whether some effect is conditional (`when`) or quantified (`forall`): `add`/`delete` are then not all.
    conditional: bool = False
    #: Where the action's cost is a function's value (`(increase (total-cost) (f ?x))`): the function and
    #: its arguments (parameter indices or constants); a ground action whose value the problem omits has no
    #: cost, and Fast Downward's translator leaves it out.
    cost_function: tuple[str, tuple[int | str, ...]] | None = None


@dataclass(frozen=True)
class LiftedTask:
    domain_name: str
    problem_name: str
    predicates: tuple[tuple[str, tuple[str, ...]], ...]  # (name, parameter names), declaration order
    schemas: tuple[Schema, ...]
    objects: tuple[tuple[str, str], ...]  # (name, type), constants included
    supertypes: dict[str, tuple[str, ...]]  # type -> itself and its ancestors
    init: frozenset[tuple[str, tuple[str, ...]]]
    goal: tuple[tuple[str, tuple[str, ...], bool], ...]  # the goal's top-level literals (predicate, args, positive)
    #: The goal's other top-level conjuncts; progress counts each as one condition.
    goal_conditions: tuple[Formula, ...] = ()
    derived: tuple[str, ...] = ()  # predicates defined by `:derived` rules
    costs: bool = False  # `(:metric minimize (total-cost))`: actions cost what their effects say
    #: Numeric functions other than `total-cost` (name, parameter names), and their values at the start
    #: (name, args, value): static, as classical PDDL allows them (road lengths that actions cost).
    functions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    values: tuple[tuple[str, tuple[str, ...], int | float], ...] = ()
    #: The files as the translator's parser reads them (lower-cased nested lists), for the grounder.
    source: tuple = field(default=(), compare=False, repr=False, hash=False)
    #: The domain's and the problem's file, for messages that name them ("" where not read from files).
    files: tuple[str, str] = field(default=("", ""), compare=False, repr=False, hash=False)

    def objects_of(self, type_name: str) -> list[str]:
        return [name for name, t in self.objects if type_name in self.supertypes.get(t, (t,))]

    @property
    def goal_size(self) -> int:
        return len(self.goal) + len(self.goal_conditions)


def read_up_problem(
    domain_path: str | Path,
    problem_path: str | Path,
    environment=None,
    *,
    max_file_bytes: int = MAX_UP_BYTES,
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
    except Exception as exc:  # noqa: BLE001 -- unified-planning raises many kinds; blamed on a file below
        problem_exc = exc
    # Only on failure, the domain alone, to blame the right file (parsing it first always doubled the cost).
    try:
        PDDLReader(environment=env).parse_problem_string(domain_text)
    except Exception as exc:
        raise PDDLError(f"cannot parse domain: {_first_line(exc)}", domain_path, _line_of(exc)) from exc
    raise PDDLError(
        f"cannot parse problem: {_first_line(problem_exc)}", problem_path, _line_of(problem_exc)
    ) from problem_exc


def _line_of(exc: Exception) -> int | None:
    for attr in ("lineno", "line_number"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            return value
    match = re.search(r"line[: ]+(\d+)", str(exc))
    return int(match.group(1)) if match else None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _parse_error(exc: BaseException, tree: list) -> tuple[str, int | None]:
    """The translator's message without its context chain (what is wrong and what it got), and the line of
    what it got in `tree`."""
    lines = [line.strip(" \t->") for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__, None
    got = [line for line in lines if line.startswith(("Got:", "Syntax:"))]
    main = [line for line in lines if not line.startswith(("Got:", "Syntax:", "Parsing"))]
    where = [line for line in lines if line.startswith("Parsing")]
    text = (main[-1] if main else lines[-1]).removeprefix("error: ").removeprefix("Error: ")
    if where:
        text = f"{where[-1][0].lower()}{where[-1][1:]}: {text}"
    line = None
    for entry in got:
        if entry.startswith("Got:"):
            line = line_of_form(tree, entry.removeprefix("Got:").strip())
    return "; ".join([text, *got]), line


def fd_task(source: tuple):
    """A fresh translator task from `LiftedTask.source` (normalising changes a task in place, so each
    grounding parses its own); its printed chatter is dropped."""
    _, parsing_functions, *_ = translator()
    domain_lists, problem_lists = source
    with translator_quiet():
        return parsing_functions.parse_task(domain_lists, problem_lists)


def read_task(
    domain_path: str | Path, problem_path: str | Path, *, max_file_bytes: int = MAX_PDDL_BYTES
) -> LiftedTask:
    """Parse a classical PDDL domain and problem into a `LiftedTask`."""
    domain_path, problem_path = Path(domain_path), Path(problem_path)
    domain_text = read_pddl_text(domain_path, max_file_bytes)
    problem_text = read_pddl_text(problem_path, max_file_bytes)
    domain_lists = parsed_domain(domain_text, domain_path)
    constants = domain_constants(domain_text, domain_path)
    types = declared_types(domain_lists)
    problem_lists = parsed_problem(problem_text, constants, problem_path, types)
    pddl, parsing_functions, *_ = translator()
    from fast_downward.translate.pddl_parser.parse_error import ParseError

    failures = (ParseError, SystemExit, ValueError, KeyError, TypeError, AttributeError, AssertionError,
                IndexError, UnboundLocalError, StopIteration, RecursionError)

    def parse_domain(lists: list) -> None:
        tuple(parsing_functions.parse_domain_pddl(parsing_functions.Context(), lists))

    with translator_quiet():
        try:  # the domain alone first (its parser yields its parts), to blame the right file
            domain_lists, adopted = adopt_constants(domain_lists, problem_lists, parse_domain, failures)
        except failures as exc:
            message, line = _parse_error(exc, domain_lists)
            raise PDDLError(f"cannot parse domain: {message}", domain_path, line) from None
        if adopted:
            problem_lists = parsed_problem(problem_text, {**constants, **adopted}, problem_path, types)
            warnings.warn(
                f"{domain_path}: uses {', '.join(f'{n} ({t})' for n, t in adopted.items())} without declaring "
                f"{'it' if len(adopted) == 1 else 'them'} as constants; taken from the problem's objects",
                PDDLNormalisationWarning, stacklevel=2,
            )
        try:
            task = parsing_functions.parse_task(domain_lists, problem_lists)
        except failures as exc:
            message, line = _parse_error(exc, problem_lists)
            raise PDDLError(f"cannot parse problem: {message}", problem_path, line) from None
    return _lifted(task, pddl, (domain_lists, problem_lists), domain_path, problem_path)


def _formula(cond, pddl) -> Formula:
    if isinstance(cond, pddl.Atom):
        return Formula("atom", predicate=cond.predicate, args=tuple(cond.args))
    if isinstance(cond, pddl.NegatedAtom):
        return Formula("not", (Formula("atom", predicate=cond.predicate, args=tuple(cond.args)),))
    if isinstance(cond, pddl.Truth):
        return Formula("true")
    if isinstance(cond, pddl.Falsity):
        return Formula("false")
    parts = tuple(_formula(p, pddl) for p in cond.parts)
    if isinstance(cond, pddl.Conjunction):
        return Formula("and", parts)
    if isinstance(cond, pddl.Disjunction):
        return Formula("or", parts)
    variables = tuple((p.name, p.type_name) for p in cond.parameters)
    op = "forall" if isinstance(cond, pddl.UniversalCondition) else "exists"
    return Formula(op, parts, variables=variables)


def _conjuncts(cond, pddl) -> list:
    if isinstance(cond, pddl.Conjunction):
        return [c for part in cond.parts for c in _conjuncts(part, pddl)]
    if isinstance(cond, pddl.Truth):
        return []
    return [cond]


def _is_literal(cond, pddl) -> bool:
    return isinstance(cond, (pddl.Atom, pddl.NegatedAtom)) and cond.predicate != "="


def _distinct(names) -> tuple[str, ...]:
    """Parameter names made distinct (`(in ?obj ?obj)`, as logistics00 declares it, reads obj, obj2): a
    sentence template names each slot once."""
    out: list[str] = []
    for name in names:
        candidate, n = name, 1
        while candidate in out:
            n += 1
            candidate = f"{name}{n}"
        out.append(candidate)
    return tuple(out)


def _lifted(task, pddl, source: tuple, domain_path: Path, problem_path: Path) -> LiftedTask:
    """The translator's parsed task (before normalisation) as a `LiftedTask`."""
    supertypes = {t.name: (t.name, *t.supertype_names) for t in task.types}
    objects = tuple((o.name, o.type_name) for o in task.objects)
    for name, type_name in objects:
        if not isinstance(type_name, str):
            raise PDDLError(f"object {name!r} has the type {type_name!r}: objects need one type", problem_path)
        supertypes.setdefault(type_name, (type_name,))
    predicates = tuple(
        (p.name, _distinct(a.name.lstrip("?") for a in p.arguments)) for p in task.predicates if p.name != "="
    )
    schemas = []
    for action in task.actions:
        params = {p.name: i for i, p in enumerate(action.parameters)}
        for p in action.parameters:
            if not isinstance(p.type_name, str):
                raise PDDLError(f"action {action.name!r}: parameter {p.name} of type {p.type_name}: "
                                "an action parameter needs one type", domain_path)

        def literal(cond, params=params) -> Literal:
            args = tuple(params.get(a, a) for a in cond.args)
            return Literal(cond.predicate, args, not cond.negated)

        pre, conditions = [], []
        for cond in _conjuncts(action.precondition, pddl):
            if _is_literal(cond, pddl) and all(a in params or not a.startswith("?") for a in cond.args):
                pre.append(literal(cond))
            else:
                conditions.append(_formula(cond, pddl))
        add, delete, conditional = [], [], False
        for effect in action.effects:
            if effect.parameters or not isinstance(effect.condition, pddl.Truth):
                conditional = True
                continue
            (delete if effect.literal.negated else add).append(literal(effect.literal))
        cost = getattr(action.cost, "expression", None)
        cost_function = None
        if hasattr(cost, "symbol"):
            cost_function = (cost.symbol, tuple(params.get(a, a) for a in cost.args))
        schemas.append(Schema(
            name=action.name,
            parameters=tuple(p.name.lstrip("?") for p in action.parameters),
            types=tuple(p.type_name for p in action.parameters),
            preconditions=tuple(pre),
            add=tuple(add),
            delete=tuple(delete),
            conditions=tuple(conditions),
            conditional=conditional,
            cost_function=cost_function,
        ))
    init = frozenset(
        (a.predicate, tuple(a.args)) for a in task.init if isinstance(a, pddl.Atom) and a.predicate != "="
    )
    goal, goal_conditions = [], []
    for cond in _conjuncts(task.goal, pddl):
        if _is_literal(cond, pddl) and not any(a.startswith("?") for a in cond.args):
            goal.append((cond.predicate, tuple(cond.args), not cond.negated))
        else:
            goal_conditions.append(_formula(cond, pddl))
    return LiftedTask(
        domain_name=task.domain_name,
        problem_name=task.problem_name,
        predicates=predicates,
        schemas=tuple(schemas),
        objects=objects,
        supertypes=supertypes,
        init=init,
        goal=tuple(goal),
        goal_conditions=tuple(goal_conditions),
        derived=tuple(dict.fromkeys(axiom.name for axiom in task.axioms)),
        costs=bool(task.use_min_cost_metric),
        functions=tuple((f.name, _distinct(a.name.lstrip("?") for a in f.arguments))
                        for f in task.functions if f.name != "total-cost"),
        values=tuple(sorted((a.fluent.symbol, tuple(a.fluent.args), a.expression.value) for a in task.init
                            if isinstance(a, pddl.Assign) and a.fluent.symbol != "total-cost")),
        files=(str(domain_path), str(problem_path)),
        source=source,
    )
