"""Ground a lifted STRIPS task once, then step it with integer bit operations.

A state is a Python `int` whose bit i says whether atom i holds. Each ground action keeps its precondition,
add and delete sets as bit masks, so testing applicability is two ANDs and applying an action is one
AND-NOT and one OR. Atoms and actions are numbered in a fixed, natural-sorted order, so everything built
on them (observations, action lists) is reproducible across runs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from itertools import product

from .pddl import LiftedTask, Literal, PDDLError, Schema, SizeLimitError

__all__ = [
    "Atom",
    "GroundAction",
    "GroundTask",
    "MAX_ATOMS",
    "MAX_GROUND_ACTIONS",
    "SizeEstimate",
    "check_size",
    "estimate_size",
    "ground",
    "natural_key",
]

#: Most ground actions `ground` builds. Each holds four bit masks as long as the atom count, so memory
#: grows with actions times atoms; past this, a problem is refused before any is built.
MAX_GROUND_ACTIONS = 200_000
#: Most ground atoms `ground` numbers (the width of a state and of every action's masks).
MAX_ATOMS = 20_000

Atom = tuple[str, tuple[str, ...]]


def natural_key(name: str) -> tuple:
    """Sort key that puts b2 before b10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


@dataclass(frozen=True)
class GroundAction:
    schema: str
    args: tuple[str, ...]
    pre_pos: int
    pre_neg: int
    add: int
    delete: int

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

    # ---- the pure transition -----------------------------------------------------------------

    def is_applicable(self, state: int, action: int) -> bool:
        a = self.actions[action]
        return not (a.pre_pos & ~state) and not (a.pre_neg & state)

    def apply(self, state: int, action: int) -> int:
        """Successor state; delete effects first, then add effects (PDDL semantics)."""
        a = self.actions[action]
        return (state & ~a.delete) | a.add

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
            if not bits:
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


def bind(lit: Literal, args: tuple[str, ...]) -> Atom:
    return lit.predicate, tuple(args[a] if isinstance(a, int) else a for a in lit.args)


def _ground_schema(task: LiftedTask, schema: Schema, static: set[str]) -> list[tuple[str, ...]]:
    """All argument tuples whose static preconditions hold in the initial state."""
    domains = [sorted(task.objects_of(t), key=natural_key) for t in schema.types]
    static_lits = [lit for lit in schema.preconditions if lit.predicate in static]
    # Check each static literal as soon as its last parameter is bound.
    by_depth: dict[int, list[Literal]] = {}
    for lit in static_lits:
        params = [a for a in lit.args if isinstance(a, int)]
        by_depth.setdefault(max(params, default=-1), []).append(lit)
    init = task.init

    def ok(lit: Literal, args: tuple[str, ...]) -> bool:
        return (bind(lit, args) in init) == lit.positive

    if any(not ok(lit, ()) for lit in by_depth.get(-1, [])):
        return []
    results: list[tuple[str, ...]] = []

    def extend(prefix: tuple[str, ...]) -> None:
        depth = len(prefix)
        if depth == len(domains):
            results.append(prefix)
            return
        checks = by_depth.get(depth, [])
        for obj in domains[depth]:
            args = prefix + (obj,)
            if all(ok(lit, args) for lit in checks):
                extend(args)

    if len(domains) == 0:
        return [()]
    if not static_lits:
        return list(product(*domains))
    extend(())
    return results


@dataclass(frozen=True)
class SizeEstimate:
    """Upper bounds on what grounding a task builds, computed from object counts alone (no grounding)."""

    ground_actions: int  # every schema's parameters over the objects of their types
    atoms: int  # initial and goal atoms plus every atom an action literal can bind to
    actions_by_schema: dict[str, int]


def estimate_size(task: LiftedTask) -> SizeEstimate:
    """Bounds in time linear in the schemas and objects, so a huge task is refused in milliseconds.

    They ignore static preconditions, which is what makes them cheap: grounding may build far fewer.
    """
    counts = {t: len(task.objects_of(t)) for s in task.schemas for t in s.types}
    by_schema: dict[str, int] = {}
    literal_atoms: dict[str, int] = {}
    for schema in task.schemas:
        by_schema[schema.name] = by_schema.get(schema.name, 0) + math.prod(counts[t] for t in schema.types)
        for lit in (*schema.preconditions, *schema.add, *schema.delete):
            bound = math.prod(counts[schema.types[a]] for a in set(lit.args) if isinstance(a, int))
            literal_atoms[lit.predicate] = literal_atoms.get(lit.predicate, 0) + bound
    n_objects = len(task.objects)
    arity = {name: len(params) for name, params in task.predicates}
    atoms = len(task.init) + len(task.goal)
    for name, bound in literal_atoms.items():
        atoms += min(bound, n_objects ** arity.get(name, 0))
    return SizeEstimate(sum(by_schema.values()), atoms, by_schema)


def check_size(
    task: LiftedTask, *, max_ground_actions: int = MAX_GROUND_ACTIONS, max_atoms: int = MAX_ATOMS
) -> SizeEstimate:
    """`estimate_size`, refused with a `SizeLimitError` naming the counts and the parameter to raise.

    Call it before any grounding of your own (the planner's included): it costs no memory.
    """
    size = estimate_size(task)
    where = f"{task.domain_name}/{task.problem_name} ({len(task.objects)} objects)"
    if size.ground_actions > max_ground_actions:
        biggest = max(size.actions_by_schema, key=size.actions_by_schema.__getitem__)
        raise SizeLimitError(
            f"{where}: up to {size.ground_actions:,} ground actions ({biggest!r} alone "
            f"{size.actions_by_schema[biggest]:,}), over the limit of {max_ground_actions:,} "
            "(max_ground_actions); pass a larger max_ground_actions to ground it anyway"
        )
    if size.atoms > max_atoms:
        raise SizeLimitError(
            f"{where}: up to {size.atoms:,} ground atoms, over the limit of {max_atoms:,} (max_atoms); "
            "pass a larger max_atoms to ground it anyway"
        )
    return size


def ground(
    task: LiftedTask, *, max_ground_actions: int = MAX_GROUND_ACTIONS, max_atoms: int = MAX_ATOMS
) -> GroundTask:
    """Ground every schema over the objects, pruned by static preconditions.

    Tasks whose `estimate_size` passes a limit are refused first (`SizeLimitError`), so a hostile or
    mistaken problem fails in milliseconds instead of filling memory.
    """
    check_size(task, max_ground_actions=max_ground_actions, max_atoms=max_atoms)
    dynamic = {lit.predicate for s in task.schemas for lit in (*s.add, *s.delete)}
    static = {name for name, _ in task.predicates} - dynamic
    order = {name: i for i, (name, _) in enumerate(task.predicates)}
    for name, args in task.init:
        if name not in order:
            raise PDDLError(f"initial state uses undeclared predicate {name!r}")

    raw: list[tuple[Schema, tuple[str, ...], list[tuple[Atom, bool]], list[Atom], list[Atom]]] = []
    atoms: set[Atom] = set(task.init)
    for schema in task.schemas:
        for args in _ground_schema(task, schema, static):
            pre = [(bind(lit, args), lit.positive) for lit in schema.preconditions]
            add = [bind(lit, args) for lit in schema.add]
            delete = [bind(lit, args) for lit in schema.delete]
            raw.append((schema, args, pre, add, delete))
            atoms.update(a for a, _ in pre)
            atoms.update(add)
            atoms.update(delete)
    atoms.update((name, args) for name, args, _ in task.goal)

    atom_list = tuple(sorted(atoms, key=lambda a: (order.get(a[0], len(order)), tuple(map(natural_key, a[1])))))
    index = {atom: i for i, atom in enumerate(atom_list)}

    def mask(items) -> int:
        m = 0
        for atom in items:
            m |= 1 << index[atom]
        return m

    actions = tuple(
        GroundAction(
            schema=schema.name,
            args=args,
            pre_pos=mask(a for a, positive in pre if positive),
            pre_neg=mask(a for a, positive in pre if not positive),
            add=mask(add),
            delete=mask(delete),
        )
        for schema, args, pre, add, delete in raw
    )
    return GroundTask(
        lifted=task,
        atoms=atom_list,
        actions=actions,
        init=mask(task.init),
        goal_pos=mask((n, a) for n, a, positive in task.goal if positive),
        goal_neg=mask((n, a) for n, a, positive in task.goal if not positive),
        atom_index=index,
        action_index={(a.schema, a.args): i for i, a in enumerate(actions)},
    )
