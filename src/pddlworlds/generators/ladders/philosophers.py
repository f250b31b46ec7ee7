"""Dining philosophers ladder: the IPC 2004 Promela model of philosophers round a table, started from a state
the protocol reaches, with the IPC's goal of a deadlock (every philosopher blocked).

The IPC has one problem per table size, all starting where no philosopher has acted yet (its optimum is 9
steps a philosopher). Here a problem is drawn as `philosophers` philosophers round a table (the model of the
IPC files: philosopher i's left fork lies in channel `forks-i`, its right fork in the next philosopher's
channel), then `steps` random actions taken from that start, the protocol's own moves (`Protocol.moves`: no
read from a channel holding no fork, no write into a full one, after which nothing could settle again); the
walk stops early rather than step into the deadlock, and the state reached is the problem's start. Easy:
2-3 philosophers, 8-40 random steps; medium: 2-4 philosophers, 4-30; hard: 3-5 philosophers, 0-24 (the
IPC's start among them, with no step taken). Object names follow the IPC files (`philosopher-<i>`,
channel type `queue-1` with its one cell `qs-0`, messages `empty` and `fork`, sizes `zero` and `one`, the
program `philosopher`, its local states `state-1`, `state-6`, `state-3`, `state-4`, `state-5`), except the
channels (`forks-<i>`, the IPC's `forks-<i>-`) and the four transitions, named for what they do
(`put-left-fork`, `take-left-fork`, `take-right-fork`, `put-right-fork`; the IPC's `forks--pid-Wfork`,
`forks--pid-Rfork`, `forks-__-pidp1__<n>_-Rfork`, `forks-__-pidp1__<n>_-Wfork`).
"""

from __future__ import annotations

import random

from ._protocol import Protocol
from .base import LadderGenerator

__all__ = ["GENERATOR", "table"]

#: The philosopher program: put the left fork down, take it, take the right one, put both back, and again.
PROGRAM = [("put-left-fork", "state-1", "state-6"), ("take-left-fork", "state-6", "state-3"),
           ("take-right-fork", "state-3", "state-4"), ("put-left-fork", "state-4", "state-5"),
           ("put-right-fork", "state-5", "state-6")]


def table(n: int) -> Protocol:
    """The model of `n` philosophers round a table, as the IPC files state it."""
    people = [f"philosopher-{i}" for i in range(n)]
    forks = [f"forks-{i}" for i in range(n)]
    reads, writes = [], []
    for i, p in enumerate(people):
        left, right = forks[i], forks[(i + 1) % n]
        writes += [(p, left, "put-left-fork"), (p, right, "put-right-fork")]
        reads += [(p, left, "take-left-fork"), (p, right, "take-right-fork")]
    carries = {t: "fork" for t in ("put-left-fork", "take-left-fork", "take-right-fork", "put-right-fork")}
    return Protocol("protocol", [(p, "philosopher", "state-1") for p in people], forks, {"philosopher": PROGRAM},
                    reads, writes, carries, ["empty", "fork"], ["state-1", "state-6", "state-3", "state-4", "state-5"])


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    model = table(p["philosophers"])
    state, taken = model.walk(rng, p["steps"])
    return model.problem(name, state, f"the state after {len(taken)} random steps from the start")


GENERATOR = LadderGenerator(
    world="philosophers",
    bands={
        "easy": {"philosophers": (2, 3), "steps": (8, 40)},
        "medium": {"philosophers": (2, 4), "steps": (4, 30)},
        "hard": {"philosophers": (3, 5), "steps": (0, 24)},
    },
    build=build,
)
