"""Optical telegraphs ladder: the IPC 2004 Promela model of telegraph stations in a ring, started from a state
the protocol reaches, with the IPC's goal of a deadlock (every process blocked).

Each of the `stations` stations runs two processes that share its control channel, a down station
(`down_station-<j>`) and an up station (`up_station-<stations + j>`); the up station of station j talks to
the down station of the next one, writing into that one's down channel and reading from its up channel,
with the handshake start, attention, data ... and stop. The IPC has one problem per number of stations, all
starting where no process has acted yet (its optimum is 14 steps a station). Here a problem is the model of
the IPC files for `stations` stations, then `steps` random actions taken from that start, the protocol's own
moves (the walk stops early rather than step into the deadlock); the state reached is the problem's start.
Out of its first local state a process may wait for start or take its station's control channel, and a
random mix of the two choices often leaves no deadlock ahead, so the walk keeps to one of the two ways there
(`pattern`, see `follows`): 1, the IPC's (the down stations wait, the up stations send), or 2, the reverse;
every other move is drawn at random. Easy: 2 stations, 18-27 random steps; medium: 2-3 stations, 8-31;
hard: 2-3 stations, 2-21. Object names follow the IPC files (`down_station-<j>`, `up_station-<k>`, the programs `down_station` and `up_station` with their local states
`state-25` ... `state-24`, channel type `queue-1` with its one cell `qs-0`, the messages, sizes `zero` and
`one`), except the channels (`down-<j>`, `control-<j>` and `up-<j>`, the IPC's `down-<j>-`,
`station-control-<j>-` and `up-<j>-`) and the transitions, named for what they do: `down-read-start` reads
start from the process's own down channel (the IPC's `down-_-pid_<n>_-Rstart`), `next-down-write-start`
writes it into the next station's (`down-__-pidp1__<n>_-Wstart`), `control-write` and `control-read` use the
station's control channel (`station-control-_-pid_<n>_-Wcontrol`, `...-Rcontrol`).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ._protocol import Protocol
from .base import LadderGenerator

__all__ = ["GENERATOR", "ring"]

#: The two programs, edge for edge as the IPC files list them: (transition, from, to).
DOWN = [("down-read-start", "state-25", "state-2"), ("control-write", "state-25", "state-14"),
        ("control-write", "state-2", "state-3"), ("up-write-attention", "state-3", "state-8"),
        ("down-read-data", "state-8", "state-5"), ("down-read-stop", "state-8", "state-11"),
        ("up-write-data", "state-5", "state-8"), ("up-write-stop", "state-11", "state-12"),
        ("control-read", "state-12", "state-25"), ("up-write-start", "state-14", "state-15"),
        ("down-read-attention", "state-15", "state-20"), ("up-write-data", "state-20", "state-17"),
        ("up-write-stop", "state-20", "state-23"), ("down-read-data", "state-17", "state-20"),
        ("down-read-stop", "state-23", "state-24"), ("control-read", "state-24", "state-25")]
#: The up station's program is the down station's with the channels turned round (it reads from the next
#: station's up channel and writes into its down channel).
_TURNED = {"down-read-start": "next-up-read-start", "up-write-attention": "next-down-write-attention",
           "down-read-data": "next-up-read-data", "down-read-stop": "next-up-read-stop",
           "up-write-data": "next-down-write-data", "up-write-stop": "next-down-write-stop",
           "up-write-start": "next-down-write-start", "down-read-attention": "next-up-read-attention",
           "control-write": "control-write", "control-read": "control-read"}
UP = [(_TURNED[t], s1, s2) for t, s1, s2 in DOWN]
STATES = ["state-25", "state-2", "state-14", "state-3", "state-8", "state-5", "state-11", "state-12", "state-15",
          "state-20", "state-17", "state-23", "state-24"]
MESSAGES = ["empty", "start", "control", "attention", "data", "stop"]


def ring(n: int) -> Protocol:
    """The model of `n` telegraph stations, as the IPC files state it."""
    downs = [f"down_station-{j}" for j in range(n)]
    ups = [f"up_station-{n + j}" for j in range(n)]
    queues = [f"{kind}-{j}" for j in range(n) for kind in ("down", "control", "up")]
    reads, writes, carries = [], [], {}
    for j in range(n):
        for p, program in ((downs[j], DOWN), (ups[j], UP)):
            for t in dict.fromkeys(t for t, _, _ in program):
                words = t.split("-")  # [next-]<channel>-<read|write>-<message>, or control-<read|write>
                if words[0] == "control":
                    q, verb, message = f"control-{j}", words[1], "control"
                else:
                    q = f"{words[-3]}-{(j + 1) % n if words[0] == 'next' else j}"
                    verb, message = words[-2], words[-1]
                carries[t] = message
                (reads if verb == "read" else writes).append((p, q, t))
    processes = [(p, "down_station", "state-25") for p in downs] + [(p, "up_station", "state-25") for p in ups]
    return Protocol("protocol", processes, queues, {"down_station": DOWN, "up_station": UP}, reads, writes,
                    carries, MESSAGES, STATES)


def follows(pattern: int) -> Callable[[tuple[str, ...]], bool]:
    """The moves a walk of `pattern` takes: all but the choices out of the first local state (`state-25`)
    that stray from it. In pattern 1 every down station chooses to wait for start there and every up station
    to take its station's control channel (the deadlock of the IPC's optimal plans); pattern 2 turns the
    roles round. A walk that mixes the two soon reaches states with no deadlock ahead."""
    def allow(action: tuple[str, ...]) -> bool:
        if action[0] != "activate-trans" or action[4] != "state-25":
            return True
        waits = (action[2] == "down_station") == (pattern == 1)
        return action[3].endswith("read-start") == waits
    return allow


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    model = ring(p["stations"])
    state, taken = model.walk(rng, p["steps"], follows(p["pattern"]))
    return model.problem(name, state, f"the state after {len(taken)} random steps from the start")


GENERATOR = LadderGenerator(
    world="opticaltelegraphs",
    bands={
        "easy": {"pattern": (1, 2), "stations": (2, 2), "steps": (18, 27)},
        "medium": {"pattern": (1, 2), "stations": (2, 3), "steps": (8, 31)},
        "hard": {"pattern": (1, 2), "stations": (2, 3), "steps": (2, 21)},
    },
    build=build,
)
