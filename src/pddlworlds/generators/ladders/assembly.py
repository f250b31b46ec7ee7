"""Assembly ladder: one product to complete, made of parts and of smaller assemblies, with tools some
assemblies need, an order some parts must go in, and temporary parts, as in the AIPS-98 assembly problems.

The product is the first whole; each further whole is a part of a random earlier one, so the wholes form a
tree under the product, and every simple part (available from the start) belongs to a random whole, each
whole getting at least one. `needs` of the wholes, drawn at random, require a tool (a random one of
`tools`): it must be committed to that whole while its parts go in or come out, and released before it
serves another. In `ordered` of the wholes, drawn at random, the parts must go in one by one in a random
order (each after the one before it). `temporary` simple parts (at most one per whole) also serve a whole
other than their own for a while: such a part goes into that whole (never one that holds the part's own
whole, which could not be completed meanwhile) before a random one of its parts, and comes out once that
part is in. The goal is the product complete.

Parameters: `wholes`, `parts` (simple parts), `tools` (tools there are), `needs` (wholes needing a tool),
`ordered` (wholes whose parts go in a fixed order), `temporary` (temporary parts). Object names are the IPC
problems' nouns (`bracket`, `valve`, `widget`, ...; tools `charger`, `voltmeter`, ...).
"""

from __future__ import annotations

import itertools
import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]

NOUNS = ("bracket", "valve", "device", "frob", "fastener", "widget", "tube", "sprocket", "wire", "doodad",
         "gimcrack", "connector", "hack", "plug", "contraption", "mount", "socket", "unit", "hoozawhatsie",
         "kludge", "whatsis", "thingumbob", "foobar", "coil")
TOOLS = ("charger", "voltmeter", "hammer", "pliers", "scalpel", "clamp", "file")


def inside(x: str, parts: dict[str, list[str]]) -> set[str]:
    """`x` and every assembly within it."""
    out = {x}
    for y in parts.get(x, []):
        out |= inside(y, parts)
    return out


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    names = list(NOUNS)
    rng.shuffle(names)
    wholes = names[: p["wholes"]]
    simple = names[p["wholes"]: p["wholes"] + p["parts"]]
    tools = list(TOOLS[: p["tools"]])
    parts: dict[str, list[str]] = {w: [] for w in wholes}
    for i, whole in enumerate(wholes[1:], 1):
        parts[wholes[rng.randrange(i)]].append(whole)
    home = {}
    for i, part in enumerate(simple):
        # the first parts fill the wholes that have no part yet, the rest go anywhere
        empty = [w for w in wholes if not parts[w]]
        whole = empty[0] if empty else rng.choice(wholes)
        parts[whole].append(part)
        home[part] = whole
    init = [f"(available {x})" for x in simple + tools]
    for whole in sorted(rng.sample(wholes, min(p["needs"], len(wholes))), key=wholes.index):
        init.append(f"(requires {whole} {rng.choice(tools)})")
    init += [f"(part-of {x} {w})" for w in wholes for x in parts[w]]
    ranking = {w: rng.sample(parts[w], len(parts[w])) for w in wholes}
    orders: list[tuple[str, str, str]] = []
    for whole in sorted(rng.sample(wholes, min(p["ordered"], len(wholes))), key=wholes.index):
        chain = ranking[whole]
        orders += [(a, b, whole) for a, b in itertools.pairwise(chain)]
    used: set[str] = set()
    for part in rng.sample(simple, len(simple)):
        if len(used) >= p["temporary"]:
            break
        # not a whole holding this part's own whole: that one could not be completed while the part waits
        hosts = [w for w in wholes if home[part] not in inside(w, parts) and w not in used]
        if not hosts:
            continue
        host = rng.choice(hosts)
        then = rng.choice(parts[host])
        used.add(host)
        init.append(f"(transient-part {part} {host})")
        orders.append((part, then, host))
        init.append(f"(remove-order {then} {part} {host})")
    init += [f"(assemble-order {a} {b} {w})" for a, b, w in orders]
    return (f"(define (problem {name})\n  (:domain assembly)\n"
            f"  (:objects {' '.join(wholes + simple)} - assembly\n    {' '.join(tools)} - resource)\n"
            f"  (:init {' '.join(init)})\n  (:goal (complete {wholes[0]})))\n")


GENERATOR = LadderGenerator(
    world="assembly",
    bands={
        "easy": {"wholes": (1, 2), "parts": (2, 4), "tools": (1, 1), "needs": (0, 1), "ordered": (0, 1),
                 "temporary": (0, 1)},
        "medium": {"wholes": (3, 3), "parts": (5, 7), "tools": (1, 2), "needs": (1, 2), "ordered": (2, 3),
                   "temporary": (0, 1)},
        "hard": {"wholes": (5, 5), "parts": (9, 10), "tools": (1, 1), "needs": (3, 5), "ordered": (5, 5),
                 "temporary": (2, 2)},
    },
    build=build,
)
