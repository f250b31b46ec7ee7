"""Renamings of a ground task's objects that no plan can tell apart from the task itself, at one state.

Why: a planner returns one optimal plan among many that differ only in interchangeable objects (which of
two balls in a room is carried first, which hand holds which). A renaming of the objects that maps the
state, the goal and the ground actions (preconditions, effects, costs) onto themselves maps every plan from
that state onto a plan of the same cost that reaches the goal, so an optimal plan onto an optimal plan. A
subgoal is then judged against the planner's up to such a renaming (`scripts/memory_use.py`) instead of
against the planner's tie-break.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from .ground_task import Atom, GroundTask, natural_key, set_bits

__all__ = ["MAX_NODES", "NodeCount", "Renaming", "find_renaming", "object_maps"]

#: Most partial assignments `find_renaming` tries before it gives up (and says None).
MAX_NODES = 20_000


@dataclass(frozen=True)
class Renaming:
    """A permutation of the task's objects (`mapping`: every object to its image) and what finding it took."""

    mapping: dict[str, str]
    nodes: int

    def atom(self, atom: Atom) -> Atom:
        return atom[0], tuple(self.mapping[a] for a in atom[1])


def find_renaming(
    task: GroundTask, state: int, sources: Collection[Atom], targets: Collection[Atom], *,
    max_nodes: int = MAX_NODES,
) -> Renaming | None:
    """A type-preserving permutation of `task`'s objects that maps the atoms true in `state`, the goal's
    positive and negative atoms, every atom, derived rule and ground action (with its masks and cost) onto
    themselves, and each atom of `sources` onto one of `targets`; None when there is none, or none was
    found within `max_nodes` partial assignments. The identity is tried first, so `sources` within
    `targets` needs no search."""
    objects = [name for name, _ in task.lifted.objects]
    kind = dict(task.lifted.objects)
    sets = [{task.atoms[i] for i in set_bits(mask)} for mask in (state, task.goal_pos, task.goal_neg)]
    checks = [(atom, atoms) for atoms in sets for atom in atoms]
    wanted = set(targets)
    checks += [(atom, wanted) for atom in sources]
    order = _order(objects, sources, checks)
    images = {name: [name, *sorted((o for o in objects if o != name and kind[o] == kind[name]), key=natural_key)]
              for name in objects}
    counter = NodeCount()
    for found in object_maps(order, images, checks, max_nodes=max_nodes, count=counter):
        if _keeps_actions(task, found):
            return Renaming(dict(found), counter.nodes)
    return None


@dataclass
class NodeCount:
    """How many partial maps `object_maps` tried (it stops at its limit)."""

    nodes: int = 0


def object_maps(
    order: Sequence[str], images: Mapping[str, Sequence[str]], checks: Iterable[tuple[Atom, Collection[Atom]]], *,
    max_nodes: int | None = None, count: NodeCount | None = None,
) -> Iterator[dict[str, str]]:
    """Every one-to-one map of the objects in `order` to their `images` (tried in the order given) under which
    each checked atom, renamed, is in the collection it comes with; each check runs as soon as its atom's
    objects are all mapped, so a wrong image fails early. Atoms naming an object outside `order` are not
    checked; an atom without objects that is not in its collection fails every map. The map yielded is live:
    copy it to keep it. Stops after `max_nodes` partial maps (counted in `count`)."""
    count = count if count is not None else NodeCount()
    rank = {name: i for i, name in enumerate(order)}
    by_last: dict[str, list[tuple[Atom, Collection[Atom]]]] = {name: [] for name in order}
    for atom, into in checks:
        if not atom[1]:
            if atom not in into:
                return
        elif all(a in rank for a in atom[1]):
            by_last[max(atom[1], key=rank.__getitem__)].append((atom, into))
    mapping: dict[str, str] = {}
    used: set[str] = set()

    def extend(depth: int) -> Iterator[dict[str, str]]:
        if depth == len(order):
            yield mapping
            return
        name = order[depth]
        for image in images[name]:
            if image in used:
                continue
            count.nodes += 1
            if max_nodes is not None and count.nodes > max_nodes:
                return
            mapping[name] = image
            used.add(image)
            if all((atom[0], tuple(mapping[a] for a in atom[1])) in into for atom, into in by_last[name]):
                yield from extend(depth + 1)
            del mapping[name]
            used.discard(image)

    yield from extend(0)


def _order(objects: list[str], sources: Collection[Atom], checks: list[tuple[Atom, set[Atom]]]) -> list[str]:
    """The objects of `sources` first (their images are the most constrained), then the others by how many
    checked atoms name them, most first, so that a wrong image fails early."""
    first = list(dict.fromkeys(a for atom in sources for a in atom[1]))
    counts = {name: 0 for name in objects}
    for atom, _ in checks:
        for a in atom[1]:
            counts[a] = counts.get(a, 0) + 1
    rest = sorted((o for o in objects if o not in first), key=lambda o: (-counts[o], natural_key(o)))
    return first + rest


def _keeps_actions(task: GroundTask, mapping: dict[str, str]) -> bool:
    """Whether the renaming maps every atom to an atom (hidden to hidden, derived to derived), every ground
    action to one with the renamed masks and the same cost, and every derived rule to a rule."""
    perm: list[int] = []
    for atom in task.atoms:
        j = task.atom_index.get((atom[0], tuple(mapping.get(a, a) for a in atom[1])))
        if j is None:
            return False
        perm.append(j)

    def image(mask: int) -> int:
        out = 0
        for i in set_bits(mask):
            out |= 1 << perm[i]
        return out

    if image(task.hidden) != task.hidden or image(task.derived) != task.derived:
        return False
    for action in task.actions:
        k = task.action_index.get((action.schema, tuple(mapping.get(a, a) for a in action.args)))
        if k is None:
            return False
        other = task.actions[k]
        if (other.cost, other.pre_pos, other.pre_neg, other.add, other.delete) != (
            action.cost, image(action.pre_pos), image(action.pre_neg), image(action.add), image(action.delete)
        ):
            return False
        if {(c.pos, c.neg, c.add, c.delete) for c in other.conditional} != {
            (image(c.pos), image(c.neg), image(c.add), image(c.delete)) for c in action.conditional
        }:
            return False
        if set(other.alternatives) != {(image(p), image(n)) for p, n in action.alternatives}:
            return False
    for stratum in task.axioms:
        if {(image(1 << h), image(p), image(n)) for h, p, n in stratum} != {(1 << h, p, n) for h, p, n in stratum}:
            return False
    return True
