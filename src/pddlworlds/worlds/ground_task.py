"""A ground task as bit masks: the pure transition every world steps (`grounding.ground` builds it).

A state is a Python `int` whose bit i says whether atom i holds; each ground action keeps its
precondition and effects as masks, so testing applicability is two ANDs and applying an action one AND-NOT
and one OR, plus its conditional effects and the derived atoms' closure where a domain has them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .pddl import LiftedTask

__all__ = ["CANDIDATE_MEMO", "Atom", "ByteTable", "CondEffect", "GroundAction", "GroundTask", "Memo", "natural_key",
           "set_bits"]

Atom = tuple[str, tuple[str, ...]]

#: Most candidate actions `GroundTask.applicable` keeps listed per task, over all the combinations of true
#: key atoms it remembers (a reference each: about 8 MB at the limit).
CANDIDATE_MEMO = 1_000_000


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

        Only the actions whose key atom (see `_triggers`) holds are tested, not every ground action. The
        candidates of a combination of true key atoms are gathered once (per byte of the key atoms,
        `ByteTable`), less those whose conditions on key atoms fail there, and kept, in action order, for
        the next state with the same key atoms (at most `CANDIDATE_MEMO` candidates in all): a step
        changes few key atoms, and states recur.
        """
        unkeyed, table, keys, memo = self._triggers
        masked = state & keys
        candidates = memo.get(masked)
        if candidates is None:
            off = keys & ~masked  # the key atoms that do not hold: a candidate needing one is out for good
            candidates = tuple(sorted(
                x for part in table.parts(masked) for x in part if not (x[1] & off) and not (x[2] & masked)
            ))
            memo.keep(masked, candidates)
        absent = ~state
        found = [i for i, pos, neg in candidates if not (pos & absent) and not (neg & state)]
        if unkeyed:
            found += [i for i in unkeyed if self.is_applicable(state, i)]
            found.sort()
        return found

    @cached_property
    def _triggers(self) -> tuple[list[int], ByteTable, int, Memo]:
        """(actions without a key, key atom byte -> (index, pos, neg) of its actions, mask of the key atoms,
        the memo of candidates per combination of true key atoms), built on first use.

        An action's key is the positive precondition atom that some action changes and that the fewest
        actions require (else any positive precondition): an action can only apply where its key holds.
        """
        changing = 0
        need: dict[int, int] = {}
        for a in self.actions:
            changing |= a.add | a.delete
            for bit in set_bits(a.pre_pos):
                need[bit] = need.get(bit, 0) + 1
        keyed: dict[int, list[tuple[int, int, int]]] = {}
        unkeyed: list[int] = []
        for i, a in enumerate(self.actions):
            bits = list(set_bits(a.pre_pos))
            if not bits or a.alternatives:
                unkeyed.append(i)
                continue
            key = min(bits, key=lambda b: (not (changing >> b & 1), need[b], b))
            keyed.setdefault(key, []).append((i, a.pre_pos, a.pre_neg))
        keys = 0
        for bit in keyed:
            keys |= 1 << bit
        by_bit = [tuple(keyed.get(bit, ())) for bit in range(max(keyed, default=-1) + 1)]
        return unkeyed, ByteTable(by_bit, lambda parts: tuple(x for part in parts for x in part)), keys, Memo(CANDIDATE_MEMO)

    # ---- goal --------------------------------------------------------------------------------

    @cached_property
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


class Memo(dict):
    """A dictionary that stops taking entries once the sizes of the values it took reach `budget`."""

    def __init__(self, budget: int) -> None:
        super().__init__()
        self.left = budget

    def keep(self, key: Any, value: Sequence[Any]) -> None:
        cost = max(1, len(value))  # an empty list still takes an entry
        if cost <= self.left:
            self[key] = value
            self.left -= cost


class ByteTable:
    """What the set bits of a mask stand for, combined one byte of the mask at a time.

    `parts(mask)` gives, for each non-zero byte of `mask` (lowest first), `combine` of the items of that
    byte's set bits (in bit order), worked out the first time that byte value is seen at that place and
    then looked up: a state's sentences, or the candidate actions of its key atoms, cost one dictionary
    look-up per non-zero byte instead of a loop over its bits. At most 256 entries per byte of the mask.
    """

    def __init__(self, items: Sequence[Any], combine: Callable[[list[Any]], Any]):
        self._items = items
        self._combine = combine
        self._cache: dict[int, Any] = {}

    def parts(self, mask: int) -> list[Any]:
        """The combined items of each non-zero byte of `mask`, lowest byte first."""
        get, out = self._cache.get, []
        append = out.append
        place = 0  # the byte's index times 256: a cache key is place | value
        for value in mask.to_bytes((mask.bit_length() + 7) >> 3, "little"):
            if value:
                part = get(place | value)
                if part is None:
                    part = self._fill(place | value)
                append(part)
            place += 256
        return out

    def _fill(self, key: int) -> Any:
        base, value = (key >> 8) << 3, key & 255
        part = self._combine([self._items[base + b] for b in range(8) if value >> b & 1])
        self._cache[key] = part
        return part
