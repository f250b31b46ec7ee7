"""Unsolvable variants of solvable problems, each kept only with a proof that no plan exists.

A variant is a shipped problem with one domain-meaningful removal: Tyreworld without the pump or without
a spare wheel, Barman with an ingredient that no dispenser provides, Blocksworld with a goal block that is
not in the world or a goal that needs a block in two places, Gripper with a ball that is in no room.
`REMOVALS` maps each removal's name to the function that proposes variants of a parent task; a new
removal is one entry. `derive` picks parents and removals with a seeded generator.

A variant counts only when proven unsolvable (`prove`): an exhaustive breadth-first search over our own
grounded task that enumerates every reachable state without meeting the goal, or, when that search hits
its state cap, Fast Downward's unsolvability result through `pddlworlds.planning.solve` (a timeout is not
a proof, and neither is a capped search). `trivial_reason` says whether a variant is unsolvable at a
glance (a goal object absent from the first observation, or a goal fact contradicting a static fact),
so those are reported apart from the ones that need search to see.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..registry import Registry
from ..worlds.grounding import ground, natural_key
from ..worlds.pddl import LiftedTask
from ..worlds.search import breadth_first_search

__all__ = [
    "DEFAULT_SEED",
    "DEFAULT_STATE_CAP",
    "REMOVALS",
    "ProofOutcome",
    "Variant",
    "candidates",
    "derive",
    "problem_text",
    "prove",
    "trivial_reason",
    "write_variant",
]

DEFAULT_SEED = 0
#: States the exhaustive search may enumerate before it gives up without a proof.
DEFAULT_STATE_CAP = 300_000



@dataclass(frozen=True)
class Variant:
    """A candidate unsolvable problem: the parent's task with its init (or goal) changed."""

    name: str
    removal: str
    description: str
    task: LiftedTask
    parent: str = ""


def trivial_reason(task: LiftedTask) -> str:
    """Why the goal is visibly unreachable from the first observation, or "" when it takes search to see.

    Trivial: a goal fact names an object that is declared nowhere or that no fact of the initial state
    mentions (the first observation never shows it), or a goal fact over a static predicate (one no action
    changes) disagrees with the initial state.
    """
    declared = {name for name, _ in task.objects}
    present = {arg for _, args in task.init for arg in args}
    dynamic = {lit.predicate for s in task.schemas for lit in (*s.add, *s.delete)}
    for name, args, positive in task.goal:
        fact = f"({' '.join((name, *args))})"
        for arg in args:
            if arg not in declared:
                return f"goal {fact} names {arg}, which does not exist"
            if arg not in present:
                return f"goal {fact} names {arg}, which the initial state never mentions"
        if name not in dynamic and ((name, args) in task.init) != positive:
            return f"goal {'' if positive else 'not '}{fact} contradicts a static fact of the initial state"
    return ""


# --------------------------------------------------------------------------------------------------
# Writing a variant as PDDL.


def problem_text(task: LiftedTask, constants: set[str], header: list[str]) -> str:
    """The task's problem file: objects (minus the domain's constants), init and goal, one fact a line."""
    typed: dict[str, list[str]] = {}
    for name, type_name in task.objects:
        if name not in constants:
            typed.setdefault(type_name, []).append(name)
    lines = [f"; {h}" for h in header]
    lines += [f"(define (problem {task.problem_name})", f"  (:domain {task.domain_name})", "  (:objects"]
    for type_name, names in typed.items():
        suffix = "" if type_name == "object" else f" - {type_name}"
        lines.append("    " + " ".join(names) + suffix)
    lines += ["  )", "  (:init"]
    for name, args in sorted(task.init, key=lambda a: (a[0], tuple(map(natural_key, a[1])))):
        lines.append(f"    ({' '.join((name, *args))})")
    lines += ["  )", "  (:goal", "    (and"]
    for name, args, positive in task.goal:
        fact = f"({' '.join((name, *args))})"
        lines.append(f"      {fact if positive else f'(not {fact})'}")
    lines += ["    )", "  )", ")", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# Removals: parent task -> candidate variants (deterministic order; `derive` picks among them).


def _with(task: LiftedTask, name: str, *, init=None, goal=None) -> LiftedTask:
    return replace(task, problem_name=name, init=frozenset(init if init is not None else task.init),
                   goal=tuple(goal if goal is not None else task.goal))


def _goal_objects(task: LiftedTask) -> list[str]:
    seen: list[str] = []
    for _, args, _ in task.goal:
        seen += [a for a in args if a not in seen]
    return seen


def _blocksworld_missing_block(task: LiftedTask, parent: str) -> list[Variant]:
    """A goal block taken out of the world: it is on nothing, not clear, and nothing can move it."""
    out = []
    for block in _goal_objects(task):
        if ("clear", (block,)) not in task.init:
            continue  # only a top block can leave without lifting others
        init = {a for a in task.init if block not in a[1]}
        below = [a[1][1] for a in task.init if a[0] == "on" and a[1][0] == block]
        init |= {("clear", (b,)) for b in below}
        name = f"{parent}-missing-{block}"
        out.append(Variant(name, "missing-block", f"block {block}, named by the goal, is not in the world",
                           _with(task, name, init=init)))
    return out


def _blocksworld_two_places(task: LiftedTask, parent: str) -> list[Variant]:
    """The goal also puts a block that the goal stacks somewhere on a second block: one block, two places."""
    blocks = sorted({n for n, _ in task.objects}, key=natural_key)
    out = []
    for name_, args, positive in task.goal:
        if name_ != "on" or not positive:
            continue
        top, under = args
        other = next((b for b in blocks if b not in (top, under)), None)
        if other is None:
            continue
        goal = (*task.goal, ("on", (top, other), True))
        name = f"{parent}-{top}-on-{under}-and-{other}"
        out.append(Variant(name, "two-places", f"the goal needs {top} on both {under} and {other}",
                           _with(task, name, goal=goal)))
    return out


def _gripper_ball_in_no_room(task: LiftedTask, parent: str) -> list[Variant]:
    """A ball the goal moves starts in no room, so no arm can pick it up."""
    out = []
    for ball in _goal_objects(task):
        if ("ball", (ball,)) not in task.init:
            continue
        init = {a for a in task.init if not (a[0] == "at" and a[1][0] == ball)}
        name = f"{parent}-nowhere-{ball}"
        out.append(Variant(name, "ball-in-no-room", f"{ball} starts in no room", _with(task, name, init=init)))
    return out


def _tyreworld_no_pump(task: LiftedTask, parent: str) -> list[Variant]:
    """The pump is not in the boot (nor anywhere), and the goal inflates a wheel."""
    if not any(n == "inflated" and p for n, _, p in task.goal):
        return []
    init = {a for a in task.init if not (a[0] in ("in", "have") and a[1][0] == "pump")}
    if init == set(task.init):
        return []
    name = f"{parent}-no-pump"
    return [Variant(name, "no-pump", "there is no pump in the boot", _with(task, name, init=init))]


def _tyreworld_no_spare(task: LiftedTask, parent: str) -> list[Variant]:
    """A spare wheel the goal needs (to put on or inflate) is not in the boot."""
    out = []
    wanted = [args[0] for n, args, p in task.goal if p and n in ("on", "inflated")]
    for wheel in dict.fromkeys(wanted):
        if ("in", (wheel, "boot")) not in task.init:
            continue
        init = set(task.init) - {("in", (wheel, "boot"))}
        name = f"{parent}-no-spare-{wheel}"
        out.append(Variant(name, "no-spare", f"spare wheel {wheel} is not in the boot", _with(task, name, init=init)))
    return out


def _barman_no_dispenser(task: LiftedTask, parent: str) -> list[Variant]:
    """An ingredient the goal needs (directly or in a cocktail) is served by no dispenser."""
    parts = {}
    for n, args in task.init:
        if n in ("cocktail-part1", "cocktail-part2"):
            parts.setdefault(args[0], []).append(args[1])
    needed: list[str] = []
    for n, args, p in task.goal:
        if n == "contains" and p:
            needed += parts.get(args[1], [args[1]])
    out = []
    for ingredient in dict.fromkeys(sorted(needed, key=natural_key)):
        served = {a for a in task.init if a[0] == "dispenses" and a[1][1] == ingredient}
        if not served:
            continue
        name = f"{parent}-no-{ingredient}"
        out.append(Variant(name, "no-dispenser", f"no dispenser provides {ingredient}",
                           _with(task, name, init=set(task.init) - served)))
    return out


#: Removal name -> (domain, proposer(parent task, parent name) -> candidate variants).
REMOVALS: Registry[tuple[str, Callable[[LiftedTask, str], list[Variant]]]] = Registry("removal", {
    "missing-block": ("blocksworld", _blocksworld_missing_block),
    "two-places": ("blocksworld", _blocksworld_two_places),
    "ball-in-no-room": ("gripper", _gripper_ball_in_no_room),
    "no-pump": ("tyreworld", _tyreworld_no_pump),
    "no-spare": ("tyreworld", _tyreworld_no_spare),
    "no-dispenser": ("barman", _barman_no_dispenser),
})


def candidates(domain: str, task: LiftedTask, parent: str) -> list[Variant]:
    """Every variant the domain's removals propose for one parent, in registry order."""
    out: list[Variant] = []
    for for_domain, propose in REMOVALS.values():
        if for_domain == domain:
            out += [replace(v, parent=parent) for v in propose(task, parent)]
    return out


def derive(
    domain: str,
    parents: dict[str, LiftedTask],
    count: int,
    seed: int = DEFAULT_SEED,
    *,
    accept: Callable[[Variant], bool] = lambda v: True,
    salt: str = "",
) -> list[Variant]:
    """`count` accepted variants from distinct parents, picked by a generator seeded from (seed, domain, salt).

    Parents are shuffled, and each parent's candidates too; the first candidate `accept`s (the caller's
    proof) is kept, and the removals are taken in turn so a domain with two removals gets both.
    """
    rng = random.Random(f"{seed}:{domain}:{salt}")
    order = sorted(parents, key=natural_key)
    rng.shuffle(order)
    kinds = [name for name, (d, _) in REMOVALS.items() if d == domain]
    out: list[Variant] = []
    for parent in order:
        if len(out) >= count:
            break
        options = candidates(domain, parents[parent], parent)
        rng.shuffle(options)
        preferred = kinds[len(out) % len(kinds)] if kinds else None
        options.sort(key=lambda v: v.removal != preferred)  # stable: the turn's removal first
        for variant in options:
            if accept(variant):
                out.append(variant)
                break
    return out


# --------------------------------------------------------------------------------------------------
# Proving a variant.


@dataclass(frozen=True)
class ProofOutcome:
    """What `prove` found: `status` "unsolvable" (proven), "solvable" or "unknown" (no proof either way)."""

    status: str
    method: str
    time_s: float
    states: int
    notes: str


_EXPANDED = re.compile(r"Expanded (\d+) state")
_EVIDENCE = re.compile(r"dead end\.|no plan exists|provably unsolvable|Completely explored|Evaluated \d+ state")


def prove(
    task: LiftedTask,
    domain_file: str | Path,
    problem_file: str | Path,
    *,
    cap: int = DEFAULT_STATE_CAP,
    planner: str = "fd-opt",
    timeout: float = 120.0,
) -> ProofOutcome:
    """Exhaustive search first; past its cap, Fast Downward on the written problem file.

    Fast Downward counts only with its own evidence of unsolvability (see `planning.solve`); a timeout or
    an error leaves the status "unknown".
    """
    search = breadth_first_search(ground(task), cap)
    if search.status == "unsolvable":
        return ProofOutcome("unsolvable", "exhaustive-bfs", search.time_s, search.states,
                            f"breadth-first search enumerated all {search.states} reachable states; none is a goal")
    if search.status == "solvable":
        return ProofOutcome("solvable", "exhaustive-bfs", search.time_s, search.states,
                            f"a plan of {search.plan_length} steps exists")
    from ..planning import solve

    plan = solve(domain_file, problem_file, planner=planner, timeout=timeout)
    log = str(plan.details.get("log_tail", ""))
    expanded = _EXPANDED.findall(log)
    states = int(expanded[-1]) if expanded else 0
    capped = f"breadth-first search stopped at its cap of {cap} states after {search.time_s:.1f} s; "
    status = plan.status.value
    if status == "unsolvable":
        evidence = [line.split("] ", 1)[-1].strip() for line in log.splitlines() if _EVIDENCE.search(line)]
        said = "; ".join(dict.fromkeys(evidence)) or plan.message
        return ProofOutcome("unsolvable", f"fast-downward:{planner}", plan.time_s, states,
                            capped + f"Fast Downward ({planner}) says: {said}")
    if plan.solved:
        return ProofOutcome("solvable", f"fast-downward:{planner}", plan.time_s, states,
                            capped + f"Fast Downward found a plan of {plan.length} steps")
    return ProofOutcome("unknown", f"fast-downward:{planner}", plan.time_s, states,
                        capped + f"Fast Downward: {status}: {plan.message}")


def write_variant(path: Path, variant: Variant, constants: set[str], header: list[str]) -> None:
    from ..files import atomic_write

    atomic_write(path, problem_text(variant.task, constants, header))
