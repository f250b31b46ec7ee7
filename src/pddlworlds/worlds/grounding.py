"""Ground a lifted task once, by reachability, then step it with integer bit operations.

Fast Downward's translator normalises the task (quantifiers, disjunctions, derived predicates) and
grounds it by relaxed reachability, so a problem's size is its reachable part, not the product of its
argument domains. We keep its ground actions, conditional effects and axioms as bit masks over one
numbering of the atoms: a state is a Python `int` whose bit i says whether atom i holds, testing
applicability is two ANDs and applying an action one AND-NOT and one OR (plus its conditional effects and
the derived atoms' closure where a domain has them). Atoms and actions are numbered in a fixed,
natural-sorted order, so everything built on them (observations, action lists) is reproducible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product
from operator import itemgetter

from .ground_task import Atom, CondEffect, GroundAction, GroundTask, natural_key, set_bits
from .pddl import (
    Formula,
    LiftedTask,
    Literal,
    PDDLError,
    SizeLimitError,
    fd_task,
    translator,
    translator_quiet,
)

__all__ = [
    "MAX_ATOMS",
    "MAX_EXPLORED",
    "MAX_GROUND_ACTIONS",
    "MAX_QUANTIFIED",
    "Atom",
    "CondEffect",
    "GroundAction",
    "GroundTask",
    "SizeEstimate",
    "check_size",
    "estimate_size",
    "ground",
    "holds",
    "natural_key",
    "set_bits",
]

#: Most bindings `holds` tries for one quantifier (it explains failed preconditions; stepping never uses it).
MAX_QUANTIFIED = 100_000

#: Most ground actions `ground` keeps (reachable ones). Each holds bit masks as long as the atom count, so
#: memory grows with actions times atoms; past this, a problem is refused. The IPC's largest first problem
#: that loads (agricola-sat18: 246,879 actions) takes 314 MB.
MAX_GROUND_ACTIONS = 400_000
#: Most ground atoms `ground` numbers (the width of a state and of every action's masks).
MAX_ATOMS = 20_000
#: Most facts, action instances and join tuples the reachability analysis may derive before it is
#: stopped: it bounds grounding's time and memory (about 0.3 GB at the limit) before any count is known.
MAX_EXPLORED = 1_000_000

def holds(task: GroundTask, formula: Formula, state: int, binding: dict[str, str]) -> bool:
    """Whether `formula`, its free variables bound by `binding` ("?x" -> object), holds in `state`.

    For words, not for stepping: it says which of an action's complex preconditions failed."""
    op = formula.op
    if op == "atom":
        args = tuple(binding.get(a, a) for a in formula.args)
        if formula.predicate == "=":
            return len(args) == 2 and args[0] == args[1]
        if formula.predicate.startswith("type@"):
            kinds = dict(task.lifted.objects)
            type_name = formula.predicate.removeprefix("type@")
            return bool(args) and args[0] in kinds and type_name in task.lifted.supertypes.get(
                kinds[args[0]], (kinds[args[0]],))
        return task.holds(state, (formula.predicate, args))
    if op in ("true", "false"):
        return op == "true"
    if op == "not":
        return not holds(task, formula.parts[0], state, binding)
    if op == "and":
        return all(holds(task, part, state, binding) for part in formula.parts)
    if op == "or":
        return any(holds(task, part, state, binding) for part in formula.parts)
    domains = [task.lifted.objects_of(type_name) for _, type_name in formula.variables]
    if math.prod(len(d) for d in domains) > MAX_QUANTIFIED:
        raise SizeLimitError(f"{formula.pddl[:80]} ranges over more than {MAX_QUANTIFIED:,} bindings")
    names = [name for name, _ in formula.variables]
    found = (all(holds(task, part, state, {**binding, **dict(zip(names, values))}) for part in formula.parts)
             for values in product(*domains))
    return all(found) if op == "forall" else any(found)


def bind(lit: Literal, args: tuple[str, ...]) -> Atom:
    return lit.predicate, tuple(args[a] if isinstance(a, int) else a for a in lit.args)


@dataclass(frozen=True)
class SizeEstimate:
    """Upper bounds on the lifted task's size from object counts alone (no grounding): every schema's
    parameters over the objects of their types. Grounding keeps only the reachable part, often far less."""

    ground_actions: int
    atoms: int
    actions_by_schema: dict[str, int]


def estimate_size(task: LiftedTask) -> SizeEstimate:
    """Bounds in time linear in the schemas and objects."""
    counts = {t: len(task.objects_of(t)) for s in task.schemas for t in s.types}
    by_schema: dict[str, int] = {}
    for schema in task.schemas:
        by_schema[schema.name] = by_schema.get(schema.name, 0) + math.prod(counts[t] for t in schema.types)
    n_objects = len(task.objects)
    atoms = len(task.init) + len(task.goal) + sum(n_objects ** len(params) for _, params in task.predicates)
    return SizeEstimate(sum(by_schema.values()), atoms, by_schema)


def check_size(
    task: LiftedTask, *, max_ground_actions: int = MAX_GROUND_ACTIONS, max_atoms: int = MAX_ATOMS
) -> SizeEstimate:
    """The reachable size of `task` (grounding it within the limits, `SizeLimitError` past them): what a
    planner calls before grounding of its own, so that a task too large to play is refused first."""
    grounded = ground(task, max_ground_actions=max_ground_actions, max_atoms=max_atoms)
    by_schema: dict[str, int] = {}
    for action in grounded.actions:
        by_schema[action.schema] = by_schema.get(action.schema, 0) + 1
    return SizeEstimate(len(grounded.actions), len(grounded.atoms), by_schema)


def _where(task: LiftedTask) -> str:
    return f"{task.domain_name}/{task.problem_name} ({len(task.objects)} objects)"


def _explore(task: LiftedTask, fd, max_explored: int):
    """The translator's relaxed reachability analysis, stopped once it has derived `max_explored` facts."""
    _, _, _, pddl_to_prolog, build_model, _ = translator()
    with translator_quiet():
        program = pddl_to_prolog.translate(fd)
        rules = build_model.convert_rules(program)
        unifier = build_model.Unifier(rules)
        queue = build_model.Queue(sorted(fact.atom for fact in program.facts))
        while queue:
            atom = queue.pop()
            for rule, index in unifier.unify(atom):
                rule.update_index(atom, index)
                rule.fire(atom, index, queue.push)
            if len(queue.queue) > max_explored:
                raise SizeLimitError(
                    f"{_where(task)}: reachability analysis passed {max_explored:,} facts and action "
                    "instances (MAX_EXPLORED) before it ended; the reachable task is too large to play"
                )
    return queue.queue


def _goal_axioms(task: LiftedTask, fd, pddl) -> None:
    """Give each non-literal top-level goal conjunct a derived atom of its own, so that progress counts it
    as one condition and a state says in one bit whether it holds."""
    conjuncts = fd.goal.parts if isinstance(fd.goal, pddl.Conjunction) else [fd.goal]
    kept, count = [], 0
    for cond in conjuncts:
        if isinstance(cond, pddl.Truth):
            continue
        literal = isinstance(cond, (pddl.Atom, pddl.NegatedAtom)) and cond.predicate != "=" and not any(
            a.startswith("?") for a in cond.args)
        if literal:
            kept.append(cond)
            continue
        name = f"goal@{count}"
        count += 1
        fd.axioms.append(pddl.Axiom(name, [], 0, cond))
        kept.append(pddl.Atom(name, []))
    fd.goal = pddl.Conjunction(kept)


def _strata(axioms, derived_names: set[str], where: str) -> dict[str, int]:
    """Each derived predicate's stratum: at least that of what it uses, above that of what it negates."""
    level = {name: 0 for name in derived_names}
    for _ in range(len(derived_names) + 1):
        changed = False
        for axiom in axioms:
            head = axiom.effect.predicate
            for cond in axiom.condition:
                if cond.predicate in level:
                    need = level[cond.predicate] + (1 if cond.negated else 0)
                    if level[head] < need:
                        level[head] = need
                        changed = True
        if not changed:
            return level
    cycle = sorted(name for name, value in level.items() if value >= len(derived_names) and "@" not in name)
    raise PDDLError(f"{where}: derived predicates recurse through negation ({', '.join(cycle[:5]) or 'a cycle'}): "
                    "no stratification exists")


def _cost(expression, mapping: dict[str, str], values: dict) -> int:
    """An action's `total-cost` increase: a number, or a static function of its arguments."""
    if hasattr(expression, "symbol"):
        return int(values[(expression.symbol, tuple(mapping.get(a, a) for a in expression.args))])
    return int(expression.value)


def _binder(lit: Literal):
    """`bind(lit, args)` compiled once per literal: most literals name parameters only."""
    if all(isinstance(a, int) for a in lit.args):
        if len(lit.args) == 1:
            position = lit.args[0]
            return lambda args, name=lit.predicate: (name, (args[position],))
        if not lit.args:
            return lambda args, atom=(lit.predicate, ()): atom
        pick = itemgetter(*lit.args)
        return lambda args, name=lit.predicate: (name, pick(args))
    return lambda args: bind(lit, args)


def _instantiate(task: LiftedTask, fd, model, pddl):
    """The model's reachable actions and axioms: a plain schema's actions as (schema, args, cost) to bind
    from our own literals (what most domains are, and several times faster), the rest instantiated by the
    translator itself. Returns (fluent facts, plain actions, translator actions, translator axioms)."""
    from fast_downward.translate.instantiate import get_objects_by_type

    fluent_names = {eff.literal.predicate for action in fd.actions for eff in action.effects}
    fluent_names |= {axiom.name for axiom in fd.axioms}
    fluents = {atom for atom in model if isinstance(atom.predicate, str) and atom.predicate in fluent_names}
    init_facts, assignments = set(), {}
    for element in fd.init:
        if isinstance(element, pddl.Assign):
            assignments[element.fluent] = element.expression
        else:
            init_facts.add(element)
    by_type = get_objects_by_type(fd.objects, fd.types)
    values = {(f.symbol, tuple(f.args)): e.value for f, e in assignments.items()}
    plain_schemas = {s.name: s for s in task.schemas if not s.conditions and not s.conditional}
    plain, actions, axioms = [], [], []
    for atom in model:
        kind = atom.predicate
        if isinstance(kind, pddl.Action):
            mapping = {p.name: arg for p, arg in zip(kind.parameters, atom.args)}
            schema = plain_schemas.get(kind.name)
            if schema is not None and len(kind.parameters) == len(schema.parameters):
                cost = 1
                if fd.use_min_cost_metric:
                    cost = 0 if kind.cost is None else _cost(kind.cost.expression, mapping, values)
                plain.append((schema, tuple(atom.args), cost))
                continue
            action = kind.instantiate(mapping, init_facts, assignments, fluents, by_type, fd.use_min_cost_metric)
            if action is not None:
                actions.append(action)
        elif isinstance(kind, pddl.Axiom):
            mapping = {p.name: arg for p, arg in zip(kind.parameters, atom.args)}
            axiom = kind.instantiate(mapping, init_facts, fluents)
            if axiom is not None:
                axioms.append(axiom)
    return fluents, plain, actions, axioms


def ground(
    task: LiftedTask, *, max_ground_actions: int = MAX_GROUND_ACTIONS, max_atoms: int = MAX_ATOMS,
    max_explored: int = MAX_EXPLORED,
) -> GroundTask:
    """Ground the reachable part of `task` with Fast Downward's translator, as bit masks.

    Past `max_explored` facts while exploring, or `max_ground_actions` actions or `max_atoms` atoms once
    grounded, a `SizeLimitError` names the count and the parameter to raise.
    """
    pddl, _, normalize, _, _, _ = translator()
    fd = fd_task(task.source)
    _goal_axioms(task, fd, pddl)
    with translator_quiet():
        try:
            normalize.normalize(fd)
        except SystemExit as exc:
            raise PDDLError(f"{_where(task)}: {str(exc).removeprefix('error: ')}") from None
    try:
        model = _explore(task, fd, max_explored)
        fluents, plain, fd_actions, fd_axioms = _instantiate(task, fd, model, pddl)
    except (KeyError, TypeError, AttributeError, AssertionError, IndexError) as exc:  # the translator's own
        where = task.files[1] or _where(task)  # crash on a corner it does not read: one line, not a traceback
        raise PDDLError(f"{where}: Fast Downward's translator cannot ground this task ({type(exc).__name__}: "
                        f"{str(exc)[:200]}); {task.domain_name} uses a corner of PDDL it does not read") from None
    count = len(plain) + len({a.name for a in fd_actions})
    if count > max_ground_actions:
        raise SizeLimitError(
            f"{_where(task)}: {count:,} reachable ground actions, over the limit of "
            f"{max_ground_actions:,} (max_ground_actions); pass a larger max_ground_actions to ground it anyway"
        )
    order = {name: i for i, (name, _) in enumerate(task.predicates)}

    def atom_of(fact) -> Atom:
        return fact.predicate, tuple(fact.args)

    atoms: set[Atom] = {atom_of(f) for f in fluents} | set(task.init)
    atoms.update((name, args) for name, args, _ in task.goal)
    atoms.update((f"goal@{i}", ()) for i in range(len(task.goal_conditions)))
    if len(atoms) > max_atoms:
        raise SizeLimitError(
            f"{_where(task)}: {len(atoms):,} reachable ground atoms, over the limit of {max_atoms:,} "
            "(max_atoms); pass a larger max_atoms to ground it anyway"
        )
    # objects ranked once in natural order (b2 before b10): sorting by ranks is sorting by natural keys
    mentioned = {x for _, args in atoms for x in args} | {name for name, _ in task.objects}
    rank = {name: i for i, name in enumerate(sorted(mentioned, key=lambda name: (natural_key(name), name)))}
    atom_list = tuple(sorted(atoms, key=lambda a: (order.get(a[0], len(order)), a[0] if a[0] not in order else "",
                                                   tuple(map(rank.__getitem__, a[1])))))
    index = {atom: i for i, atom in enumerate(atom_list)}

    def masks(literals) -> tuple[int, int]:
        pos = neg = 0
        for lit in literals:
            bit = 1 << index[atom_of(lit)]
            if lit.negated:
                neg |= bit
            else:
                pos |= bit
        return pos, neg

    static_true = 0  # init atoms no action changes: a plain action that needs one false can never apply
    fluent_names = {f.predicate for f in fluents}
    for atom in task.init:
        if atom[0] not in fluent_names:
            static_true |= 1 << index[atom]
    built = []
    compiled = {s.name: ([(_binder(lit), lit.positive) for lit in s.preconditions],
                         [_binder(lit) for lit in s.add], [_binder(lit) for lit in s.delete])
                for s in task.schemas}
    where = index.get
    for schema, args, cost in plain:
        pos = neg = add = delete = 0
        preconditions, adds, deletes = compiled[schema.name]
        never = False
        for atom, positive in preconditions:
            i = where(atom(args))
            if i is None:  # an atom never reached never holds: its negation needs no bit, and an action that
                # needs it never applies (the exploration over-approximates a precondition that repeats a
                # variable, `(link ?x ?x)`: its rule does not bind an atom's two places to one object)
                never = never or positive
            elif positive:
                pos |= 1 << i
            else:
                neg |= 1 << i
        if never or neg & static_true:
            continue
        for atom in adds:
            add |= 1 << index[atom(args)]
        for atom in deletes:
            i = where(atom(args))
            if i is not None:
                delete |= 1 << i
        built.append(GroundAction(schema.name, args, pos, neg, add, delete & ~add, cost))
    groups: dict[str, list] = {}
    for action in fd_actions:
        groups.setdefault(action.name, []).append(action)
    for name, variants in groups.items():
        schema, *args = name.strip("()").split()
        first = variants[0]
        add = delete = 0
        conditional: dict[tuple[int, int], list[int]] = {}
        for effects, deleting in ((first.add_effects, False), (first.del_effects, True)):
            for cond, fact in effects:
                bit = 1 << index[atom_of(fact)]
                if not cond:
                    if deleting:
                        delete |= bit
                    else:
                        add |= bit
                    continue
                entry = conditional.setdefault(masks(cond), [0, 0])
                entry[1 if deleting else 0] |= bit
        delete &= ~add
        preconditions = sorted({masks(v.precondition) for v in variants})
        built.append(GroundAction(
            schema=schema, args=tuple(args), pre_pos=preconditions[0][0], pre_neg=preconditions[0][1],
            add=add, delete=delete, cost=first.cost,
            conditional=tuple(CondEffect(pos, neg, a, d) for (pos, neg), (a, d) in sorted(conditional.items())),
            alternatives=tuple(preconditions[1:]),
        ))
    schema_order = {s.name: i for i, s in enumerate(task.schemas)}
    built.sort(key=lambda a: (schema_order.get(a.schema, len(schema_order)), tuple(map(rank.__getitem__, a.args))))
    actions = tuple(built)

    derived_names = {axiom.effect.predicate for axiom in fd_axioms}
    level = _strata(fd_axioms, derived_names, _where(task))
    strata: list[list[tuple[int, int, int]]] = [[] for _ in range(max(level.values(), default=-1) + 1)]
    derived = 0
    for axiom in fd_axioms:
        head = index[atom_of(axiom.effect)]
        derived |= 1 << head
        strata[level[axiom.effect.predicate]].append((head, *masks(axiom.condition)))
    for i, (name, args) in enumerate(atom_list):
        if name in derived_names or name in task.derived or name.startswith("goal@"):
            derived |= 1 << i
    hidden = 0
    for i, (name, _) in enumerate(atom_list):
        if name not in order:
            hidden |= 1 << i

    def mask(items) -> int:
        m = 0
        for atom in items:
            m |= 1 << index[atom]
        return m

    goal_pos = mask((n, a) for n, a, positive in task.goal if positive)
    goal_pos |= mask((f"goal@{i}", ()) for i in range(len(task.goal_conditions)))
    result = GroundTask(
        lifted=task,
        atoms=atom_list,
        actions=actions,
        init=mask(a for a in task.init if a in index),
        goal_pos=goal_pos,
        goal_neg=mask((n, a) for n, a, positive in task.goal if not positive),
        atom_index=index,
        action_index={(a.schema, a.args): i for i, a in enumerate(actions)},
        hidden=hidden,
        derived=derived,
        axioms=tuple(tuple(rules) for rules in strata),
    )
    if result.axioms:
        object.__setattr__(result, "init", result.closure(result.init))
    return result
