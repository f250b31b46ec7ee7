"""Shared by the ladders of the IPC 2004 protocol worlds (`philosophers`, `opticaltelegraphs`): the
competition's "protocol" domain (Stefan Edelkamp's compilation of Promela models) played on ground facts, so
that a problem can start from a state the protocol reaches rather than from its one standard start.

A `Protocol` is one compiled model: processes, each running a program (its `proctype`) of local-state
transitions, and one-cell channels (`queue-1`, cell `qs-0`, sizes `zero` and `one`) the transitions read
from or write into, as the IPC files state it. `start()` is the IPC start (every process pending in its
first state, every channel settled, empty and showing the message `empty`); `successors(state)` applies
the domain's seven actions exactly as `domain.pddl` defines them (deletes before adds); `walk` takes seeded
random steps; `problem` writes the PDDL with the IPC's goal, every process blocked.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Protocol"]

Fact = tuple[str, ...]

#: The order the problem files state fluent facts in.
_ORDER = ["at-process", "pending", "activate", "enabled", "queue-head", "queue-tail", "queue-msg",
          "queue-head-msg", "queue-tail-msg", "queue-size", "settled", "advance-head", "advance-tail"]


@dataclass
class Protocol:
    """One compiled model. `programs[proctype]` lists its transitions as (transition, from, to);
    `processes` are (process, proctype, start state); `queues` the channels; `reads` and `writes` are
    (process, queue, transition); `carries[transition]` the message it reads or writes."""

    domain: str
    processes: list[tuple[str, str, str]]
    queues: list[str]
    programs: dict[str, list[tuple[str, str, str]]]
    reads: list[tuple[str, str, str]]
    writes: list[tuple[str, str, str]]
    carries: dict[str, str]
    messages: list[str]
    states: list[str] = field(default_factory=list)

    # ---- the facts no action changes ------------------------------------------------------------

    def static(self) -> list[Fact]:
        facts: list[Fact] = [("queue-next", "queue-1", "qs-0", "qs-0"), ("is-not-max", "queue-1", "zero"),
                             ("is-max", "queue-1", "one"), ("is-zero", "zero"), ("is-not-zero", "one"),
                             ("inc", "zero", "one"), ("dec", "one", "zero")]
        facts += [("is-a-process", p, pt) for p, pt, _ in self.processes]
        facts += [("is-a-queue", q, "queue-1") for q in self.queues]
        facts += [("reads", p, q, t) for p, q, t in self.reads]
        facts += [("writes", p, q, t) for p, q, t in self.writes]
        facts += [("trans-msg", t, m) for t, m in self.carries.items()]
        facts += [("trans", pt, t, s1, s2) for pt, edges in self.programs.items() for t, s1, s2 in edges]
        return facts

    def start(self) -> frozenset[Fact]:
        facts: set[Fact] = set()
        for p, _, s in self.processes:
            facts |= {("pending", p), ("at-process", p, s)}
        for q in self.queues:
            facts |= {("queue-head", q, "qs-0"), ("queue-tail", q, "qs-0"), ("queue-head-msg", q, "empty"),
                      ("queue-size", q, "zero"), ("settled", q)}
        return frozenset(facts)

    # ---- the seven actions ------------------------------------------------------------------------

    def successors(self, state: frozenset[Fact]) -> list[tuple[Fact, frozenset[Fact]]]:
        """Every applicable ground action and the state it leads to, in a fixed order."""
        out: list[tuple[Fact, frozenset[Fact]]] = []

        def apply(action: Fact, dels: list[Fact], adds: list[Fact]) -> None:
            out.append((action, frozenset((state - set(dels)) | set(adds))))

        proctype = {p: pt for p, pt, _ in self.processes}
        at = {f[1]: f[2] for f in state if f[0] == "at-process"}
        size = {f[1]: f[2] for f in state if f[0] == "queue-size"}
        all_settled = all(("settled", q) in state for q in self.queues)
        head_msgs = {q: sorted(f[2] for f in state if f[0] == "queue-head-msg" and f[1] == q) for q in self.queues}
        tail_msgs = {q: sorted(f[2] for f in state if f[0] == "queue-tail-msg" and f[1] == q) for q in self.queues}
        for p, q, t in self.writes:  # queue-write
            m = self.carries[t]
            if ("activate", p, t) in state and ("settled", q) in state:
                apply(("queue-write", p, t, q, m), [("activate", p, t), ("settled", q)],
                      [("enabled", p, t), ("advance-tail", q), ("queue-tail-msg", q, m)])
        for p, q, t in self.reads:  # queue-read
            m = self.carries[t]
            if ("activate", p, t) in state and ("settled", q) in state and m in head_msgs[q]:
                apply(("queue-read", p, t, q, m), [("activate", p, t), ("settled", q)],
                      [("advance-head", q), ("enabled", p, t)])
        for q in self.queues:  # one cell: qs1 = qs2 = qs-0
            n = size[q]
            cell = sorted(f[3] for f in state if f[0] == "queue-msg" and f[1] == q)
            if ("advance-head", q) in state and ("queue-head", q, "qs-0") in state and n == "one":
                for m in cell:
                    apply(("advance-queue-head", q, "queue-1", "qs-0", "qs-0", m, "one", "zero"),
                          [("advance-head", q), ("queue-head", q, "qs-0"), ("queue-size", q, "one")],
                          [("settled", q), ("queue-head", q, "qs-0"), ("queue-head-msg", q, m),
                           ("queue-size", q, "zero")])
            if ("advance-tail", q) in state and ("queue-tail", q, "qs-0") in state and n == "zero":
                for m in tail_msgs[q]:
                    for m1 in head_msgs[q]:
                        apply(("advance-empty-queue-tail", q, "queue-1", "qs-0", "qs-0", m, m1, "zero", "one"),
                              [("advance-tail", q), ("queue-tail", q, "qs-0"), ("queue-head-msg", q, m1),
                               ("queue-size", q, "zero")],
                              [("settled", q), ("queue-tail", q, "qs-0"), ("queue-msg", q, "qs-0", m),
                               ("queue-head-msg", q, m), ("queue-size", q, "one")])
            # advance-non-empty-queue-tail needs a count after a nonzero one (inc one ...): none here has one
        if all_settled:
            for p, _, _ in self.processes:  # perform-trans: any program with the edge, as the domain has it
                for pt in sorted(self.programs):
                    for t, s1, s2 in self.programs[pt]:
                        if s1 == at[p] and ("enabled", p, t) in state:
                            apply(("perform-trans", p, pt, t, s1, s2),
                                  [("at-process", p, s1), ("enabled", p, t)], [("at-process", p, s2), ("pending", p)])
            for p, _, _ in self.processes:  # activate-trans
                if ("pending", p) in state:
                    pt = proctype[p]
                    for t, s1, s2 in self.programs[pt]:
                        if s1 == at[p]:
                            apply(("activate-trans", p, pt, t, s1, s2), [("pending", p)], [("activate", p, t)])
        return out

    def moves(self, state: frozenset[Fact]) -> list[tuple[Fact, frozenset[Fact]]]:
        """`successors` less the reads from a channel holding no message and the writes into a full one:
        the domain allows both (a read checks only the message the head shows, a write nothing), but the
        channel then never settles again and no process can move, so no deadlock could be reached."""
        size = {f[1]: f[2] for f in state if f[0] == "queue-size"}
        return [(a, s) for a, s in self.successors(state)
                if not (a[0] == "queue-read" and size[a[3]] == "zero")
                and not (a[0] == "queue-write" and size[a[3]] == "one")]

    def walk(self, rng: random.Random, steps: int,
             allow: Callable[[Fact], bool] | None = None) -> tuple[frozenset[Fact], list[Fact]]:
        """The state after `steps` random `moves` from the start (those `allow` accepts, if given), and the
        moves taken. A move into a state with no move left (the deadlock itself) is never taken: the walk
        stops early where every move would be one."""
        state, taken = self.start(), []
        for _ in range(steps):
            options = [(a, s) for a, s in self.moves(state) if (allow is None or allow(a)) and self.moves(s)]
            if not options:
                break
            action, state = rng.choice(options)
            taken.append(action)
        return state, taken

    # ---- the problem file -----------------------------------------------------------------------

    def problem(self, name: str, state: frozenset[Fact], comment: str = "") -> str:
        kinds = [("process", [p for p, _, _ in self.processes]), ("queue", self.queues),
                 ("queuetype", ["queue-1"]), ("queue-state", ["qs-0"]), ("message", self.messages),
                 ("number_", ["zero", "one"]), ("proctype", sorted(self.programs)), ("state", self.states),
                 ("transition", list(dict.fromkeys(t for pt in sorted(self.programs)
                                                   for t, _, _ in self.programs[pt])))]
        objects = "\n".join(f"    {' '.join(names)} - {kind}" for kind, names in kinds)
        rank = {name: i for i, name in enumerate(_ORDER)}
        fluents = sorted(state, key=lambda f: (rank[f[0]], f[1:]))
        init = "\n".join(f"    ({' '.join(f)})" for f in [*fluents, *self.static()])
        goal = " ".join(f"(blocked {p})" for p, _, _ in self.processes)
        note = f"  ; {comment}\n" if comment else ""
        return (f"(define (problem {name}) (:domain {self.domain})\n{note}  (:objects\n{objects})\n"
                f"  (:init\n{init})\n  (:goal (and {goal})))\n")
