"""Reasonable orders among a goal's conditions: which open condition is not yet worth making true.

Why: a subgoal chosen among the goal's open conditions (`state-choice-subgoals`) can be one no plan should
make true yet: in Blocksworld, a block put on another that must still be moved itself. Koehler and
Hoffmann's reasonable orders ("On reasonable and forced goal orderings", JAIR 2000) name such pairs:
condition b comes before a when every action that makes b true needs a fact that cannot hold with a, or
deletes a (and does not add it back). Then a is false whenever b is made true, so a made true before b's
last achievement is undone again; a plan that ends with both makes a true after b. Orders chain (c before b
before a: a comes after c's last achievement too). The facts that cannot hold together are Fast Downward's
mutex groups (the translator's invariant synthesis, sound for every state reachable from the task's
initial state); nothing is searched.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ground_task import GroundTask, set_bits
from .pddl import fd_task, translator, translator_quiet

__all__ = ["GoalOrders", "goal_orders", "mutex_masks"]


@dataclass(frozen=True)
class GoalOrders:
    """`before[a]`: the mask of goal conditions (atom bits) that come before goal condition `a`, directly or
    through others (the orders chain: a condition between two, true now, is undone again too)."""

    before: dict[int, int]

    def ready(self, open_mask: int) -> int:
        """The conditions of `open_mask` that no other condition of it comes before; all of `open_mask`
        when every one has one (orders that form a cycle give no advice)."""
        ready = 0
        for a in set_bits(open_mask):
            if not self.before.get(a, 0) & open_mask & ~(1 << a):
                ready |= 1 << a
        return ready or open_mask


def mutex_masks(task: GroundTask) -> dict[int, int]:
    """Each atom's mutex partners (a mask over `task.atoms`; atoms without any are absent), from the
    translator's invariants instantiated on the reachable atoms, as its `fact_groups` does."""
    from fast_downward.translate import fact_groups, instantiate, invariant_finder, normalize

    translator()
    with translator_quiet():
        fd = fd_task(task.lifted.source)
        normalize.normalize(fd)
        _, atoms, _, _, _, params = instantiate.explore(fd)
        groups = fact_groups.instantiate_groups(invariant_finder.get_groups(fd, params), fd, atoms)
    index = task.atom_index
    out: dict[int, int] = {}
    for group in groups:
        bits = [index[key] for key in ((a.predicate, tuple(a.args)) for a in group) if key in index]
        mask = sum(1 << b for b in set(bits))
        for b in set(bits):
            out[b] = out.get(b, 0) | mask & ~(1 << b)
    return out


def goal_orders(task: GroundTask, mutexes: dict[int, int] | None = None) -> GoalOrders:
    """The reasonable orders among `task`'s positive goal atoms (derived atoms, made true by rules rather
    than actions, take part in none)."""
    mutexes = mutex_masks(task) if mutexes is None else mutexes
    goals = task.goal_pos & ~task.derived
    # for each goal atom b: the atoms every achiever of b leaves false (an AND over its achievers)
    false_at: dict[int, int] = {}
    for action in task.actions:
        effects = [(action.add, 0, 0, 0)] + [(c.add, c.pos, c.neg, c.delete) for c in action.conditional]
        added = action.add
        for c in action.conditional:
            added |= c.add
        options = [(action.pre_pos, action.pre_neg), *action.alternatives]  # any one makes it applicable
        for add, pos, neg, delete in effects:
            made = add & goals
            if not made:
                continue
            false = -1  # what every precondition option leaves false
            for pre_pos, pre_neg in options:
                leaves = pre_neg | neg
                for p in set_bits(pre_pos | pos):
                    leaves |= mutexes.get(p, 0)
                false &= leaves
            false = (false | action.delete | delete) & ~added
            for b in set_bits(made):
                false_at[b] = false_at.get(b, false) & false
    before: dict[int, int] = {}
    for b, false in false_at.items():
        for a in set_bits(false & goals & ~(1 << b)):
            before[a] = before.get(a, 0) | 1 << b
    changed = True
    while changed:  # the transitive closure
        changed = False
        for a, mask in before.items():
            wider = mask
            for b in set_bits(mask):
                wider |= before.get(b, 0)
            wider &= ~(1 << a)
            if wider != mask:
                before[a], changed = wider, True
    return GoalOrders(before)
