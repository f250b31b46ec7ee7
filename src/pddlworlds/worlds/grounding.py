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

import contextlib
import io
import math
import re
from dataclasses import dataclass, field
from functools import cached_property

from itertools import product

from .pddl import Formula, LiftedTask, Literal, PDDLError, SizeLimitError, fd_task, translator

__all__ = [
    "Atom",
    "CondEffect",
    "GroundAction",
    "GroundTask",
    "MAX_ATOMS",
    "MAX_GROUND_ACTIONS",
    "MAX_EXPLORED",
    "SizeEstimate",
    "check_size",
    "estimate_size",
    "ground",
    "holds",
    "natural_key",
    "MAX_QUANTIFIED",
]

#: Most bindings `holds` tries for one quantifier (it explains failed preconditions; stepping never uses it).
MAX_QUANTIFIED = 100_000

#: Most ground actions `ground` keeps (reachable ones). Each holds bit masks as long as the atom count, so
#: memory grows with actions times atoms; past this, a problem is refused.
MAX_GROUND_ACTIONS = 200_000
#: Most ground atoms `ground` numbers (the width of a state and of every action's masks).
MAX_ATOMS = 20_000
#: Most facts, action instances and join tuples the reachability analysis may derive before it is
#: stopped: it bounds grounding's time and memory (about 0.3 GB at the limit) before any count is known.
MAX_EXPLORED = 1_000_000

Atom = tuple[str, tuple[str, ...]]


def natural_key(name: str) -> tuple:
    """Sort key that puts b2 before b10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


@dataclass(frozen=True)
class CondEffect:
    """`(when condition effect)` of one ground action: the masks to add and delete where it holds."""

    pos: int
    neg: int
    add: int
    delete: int


@dataclass(frozen=True)
class GroundAction:
    schema: str
    args: tuple[str, ...]
    pre_pos: int
    pre_neg: int
    add: int
    delete: int
    cost: int = 1
    conditional: tuple[CondEffect, ...] = ()
    #: Further (pos, neg) preconditions, any of which also makes the action applicable: a disjunction or an
    #: existential precondition normalises into several.
    alternatives: tuple[tuple[int, int], ...] = ()

    @property
    def pddl(self) -> str:
        return "(" + " ".join((self.schema, *self.args)) + ")"


@dataclass(frozen=True)
class GroundTask:
    lifted: LiftedTask
    atoms: tuple[Atom, ...]
    actions: tuple[GroundAction, ...]
    init: int
    goal_pos: int
    goal_neg: int
    atom_index: dict[Atom, int] = field(repr=False)
    action_index: dict[tuple[str, tuple[str, ...]], int] = field(repr=False)
    #: Atoms no text shows: the translator's helper atoms (its axioms for complex conditions, the goal's
    #: non-literal conjuncts), whose predicates the domain does not declare.
    hidden: int = 0
    #: Derived atoms, recomputed after every action by `axioms`, stratum by stratum.
    derived: int = 0
    #: Per stratum, the rules (head bit, pos mask, neg mask) that derive atoms of that stratum.
    axioms: tuple[tuple[tuple[int, int, int], ...], ...] = ()

    # ---- the pure transition -----------------------------------------------------------------

    def is_applicable(self, state: int, action: int) -> bool:
        a = self.actions[action]
        if not (a.pre_pos & ~state) and not (a.pre_neg & state):
            return True
        return any(not (pos & ~state) and not (neg & state) for pos, neg in a.alternatives)

    def apply(self, state: int, action: int) -> int:
        """Successor state: effects whose conditions hold in `state`, delete effects first, then add effects
        (PDDL semantics: an atom both deleted and added holds), then the derived atoms' closure."""
        a = self.actions[action]
        add, delete = a.add, a.delete
        for effect in a.conditional:
            if not (effect.pos & ~state) and not (effect.neg & state):
                add |= effect.add
                delete |= effect.delete
        after = (state & ~delete) | add
        return self.closure(after) if self.axioms else after

    def closure(self, state: int) -> int:
        """`state` with its derived atoms recomputed: each stratum's rules applied to a fixpoint, a rule
        looked at again only when an atom in its positive condition became true."""
        state &= ~self.derived
        for stratum, watchers in zip(self.axioms, self._watchers):
            pending = list(range(len(stratum)))
            while pending:
                fresh = 0
                for i in pending:
                    head, pos, neg = stratum[i]
                    if not (state >> head & 1) and not (pos & ~state) and not (neg & state):
                        fresh |= 1 << head
                state |= fresh
                pending = sorted({i for bit in set_bits(fresh) for i in watchers.get(bit, ())})
        return state

    @cached_property
    def _watchers(self) -> tuple[dict[int, tuple[int, ...]], ...]:
        out = []
        for stratum in self.axioms:
            watch: dict[int, list[int]] = {}
            for i, (_, pos, _) in enumerate(stratum):
                for bit in set_bits(pos):
                    watch.setdefault(bit, []).append(i)
            out.append({bit: tuple(rules) for bit, rules in watch.items()})
        return tuple(out)

    @property
    def costs(self) -> bool:
        """Whether actions have costs of their own (`:metric minimize (total-cost)`); else each costs 1."""
        return self.lifted.costs

    def applicable(self, state: int) -> list[int]:
        """Indices of the actions applicable in `state`, in action order.

        Only the actions whose key atom (see `_triggers`) holds are tested, not every ground action.
        """
        keyed, unkeyed, keys = self._triggers
        found = [i for i in unkeyed if self.is_applicable(state, i)]
        actions = self.actions
        true_keys = state & keys
        while true_keys:
            low = true_keys & -true_keys
            for i in keyed[low.bit_length() - 1]:
                a = actions[i]
                if not (a.pre_pos & ~state) and not (a.pre_neg & state):
                    found.append(i)
            true_keys ^= low
        found.sort()
        return found

    @cached_property
    def _triggers(self) -> tuple[dict[int, list[int]], list[int], int]:
        """(key atom -> actions, actions without a key, mask of the key atoms), built on first use.

        An action's key is the positive precondition atom that some action changes and that the fewest
        actions require (else any positive precondition): an action can only apply where its key holds.
        """
        changing = 0
        need: dict[int, int] = {}
        for a in self.actions:
            changing |= a.add | a.delete
            for bit in set_bits(a.pre_pos):
                need[bit] = need.get(bit, 0) + 1
        keyed: dict[int, list[int]] = {}
        unkeyed: list[int] = []
        for i, a in enumerate(self.actions):
            bits = list(set_bits(a.pre_pos))
            if not bits or a.alternatives:
                unkeyed.append(i)
                continue
            key = min(bits, key=lambda b: (not (changing >> b & 1), need[b], b))
            keyed.setdefault(key, []).append(i)
        keys = 0
        for bit in keyed:
            keys |= 1 << bit
        return keyed, unkeyed, keys

    # ---- goal --------------------------------------------------------------------------------

    @property
    def goal_size(self) -> int:
        return self.goal_pos.bit_count() + self.goal_neg.bit_count()

    def goal_satisfied_count(self, state: int) -> int:
        return (state & self.goal_pos).bit_count() + (self.goal_neg & ~state).bit_count()

    def progress(self, state: int) -> float:
        """Fraction of goal literals that hold (1.0 for an empty goal)."""
        size = self.goal_size
        return 1.0 if size == 0 else self.goal_satisfied_count(state) / size

    def is_goal(self, state: int) -> bool:
        return not (self.goal_pos & ~state) and not (self.goal_neg & state)

    # ---- conversions -------------------------------------------------------------------------

    def true_atoms(self, state: int) -> list[Atom]:
        """The atoms that hold in `state`, hidden helper atoms left out."""
        state &= ~self.hidden
        return [atom for i, atom in enumerate(self.atoms) if state >> i & 1]

    def state_of(self, atoms) -> int:
        """The state in which exactly `atoms` hold; atoms the task never mentions are an error."""
        state = 0
        for atom in atoms:
            try:
                state |= 1 << self.atom_index[atom]
            except KeyError:
                raise KeyError(f"atom {atom} is not part of this task") from None
        return state

    def holds(self, state: int, atom: Atom) -> bool:
        index = self.atom_index.get(atom)
        return index is not None and bool(state >> index & 1)


def set_bits(mask: int):
    """Indices of the set bits of `mask`, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


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
    pddl, _, _, pddl_to_prolog, build_model, _ = translator()
    with contextlib.redirect_stdout(io.StringIO()):
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


def _strata(axioms, derived_names: set[str]) -> dict[str, int]:
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
    raise PDDLError("derived predicates recurse through negation (no stratification exists)")


def ground(
    task: LiftedTask, *, max_ground_actions: int = MAX_GROUND_ACTIONS, max_atoms: int = MAX_ATOMS,
    max_explored: int = MAX_EXPLORED,
) -> GroundTask:
    """Ground the reachable part of `task` with Fast Downward's translator, as bit masks.

    Past `max_explored` facts while exploring, or `max_ground_actions` actions or `max_atoms` atoms once
    grounded, a `SizeLimitError` names the count and the parameter to raise.
    """
    pddl, _, normalize, _, _, instantiate = translator()
    fd = fd_task(task.source)
    _goal_axioms(task, fd, pddl)
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            normalize.normalize(fd)
        except SystemExit as exc:
            raise PDDLError(f"{_where(task)}: {str(exc).removeprefix('error: ')}") from None
    model = _explore(task, fd, max_explored)
    with contextlib.redirect_stdout(io.StringIO()):
        _, fluents, fd_actions, _, fd_axioms, _ = instantiate.instantiate(fd, model)
    if len(fd_actions) > max_ground_actions:
        raise SizeLimitError(
            f"{_where(task)}: {len(fd_actions):,} reachable ground actions, over the limit of "
            f"{max_ground_actions:,} (max_ground_actions); pass a larger max_ground_actions to ground it anyway"
        )
    declared = [name for name, _ in task.predicates]
    order = {name: i for i, name in enumerate(declared)}

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
    atom_list = tuple(sorted(atoms, key=lambda a: (order.get(a[0], len(order)), a[0] if a[0] not in order else "",
                                                   tuple(map(natural_key, a[1])))))
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

    groups: dict[str, list] = {}
    for action in fd_actions:
        groups.setdefault(action.name, []).append(action)
    schema_order = {s.name: i for i, s in enumerate(task.schemas)}
    built = []
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
    built.sort(key=lambda a: (schema_order.get(a.schema, len(schema_order)), tuple(map(natural_key, a.args))))
    actions = tuple(built)

    derived_names = {axiom.effect.predicate for axiom in fd_axioms}
    level = _strata(fd_axioms, derived_names)
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
