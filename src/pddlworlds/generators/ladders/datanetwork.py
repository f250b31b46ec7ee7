"""Data-network ladder: servers joined in a network, raw data items saved on their disks, scripts that combine
two items into a new one, memory limits, and a goal asking some derived items to be saved on given servers.

Parameters: `servers` (joined as a random tree: each server after the first connects both ways to one drawn
before it); `raw` (layer-0 data items, each saved on a server drawn uniformly); `layers` (how many layers of
derived items: layer i has one item fewer than layer i-1, at least one, and each derived item has one or two
scripts, each reading two distinct items of the layer below); `capacity` (memory units of every server; sizes
of items are 1 or 2 units, drawn uniformly, and no server is given less than the largest three items need);
`goals` (how many items of the top layer, or of the layer below if the top has too few, must be saved on a
server drawn uniformly, other than one already holding them). Costs are small whole numbers: reading or
writing an item costs its size times the server's disk speed (1 or 2), sending it its size times the link's
cost (1 or 2), running a script 1 to 4 by script and server. Object names follow the IPC 2018 problems:
`data-<layer>-<k>`, `script<i>`, `server<i>`, `number<i>` (the memory counter's values, with the `SUM` and
`LESS-EQUAL` tables the domain reads).
"""

from __future__ import annotations

import random

from .base import LadderGenerator

__all__ = ["GENERATOR"]


def build(rng: random.Random, p: dict[str, int], name: str) -> str:
    servers = [f"server{i}" for i in range(1, p["servers"] + 1)]
    links = [(servers[rng.randrange(i)], servers[i]) for i in range(1, len(servers))]
    layers = [[f"data-0-{k}" for k in range(1, p["raw"] + 1)]]
    for depth in range(1, p["layers"] + 1):
        layers.append([f"data-{depth}-{k}" for k in range(1, max(1, len(layers[-1]) - 1) + 1)])
    items = [d for layer in layers for d in layer]
    size = {d: rng.randint(1, 2) for d in items}
    biggest = sorted(size.values(), reverse=True)[:3]
    capacity = max(p["capacity"], sum(biggest))
    scripts: list[tuple[str, str, str, str]] = []
    for depth in range(1, len(layers)):
        for out in layers[depth]:
            for _ in range(rng.randint(1, 2)):
                a, b = rng.sample(layers[depth - 1], 2)
                scripts.append((f"script{len(scripts) + 1}", a, b, out))
    numbers = [f"number{i}" for i in range(capacity + 1)]
    init = [f"(SCRIPT-IO {s} {a} {b} {out})" for s, a, b, out in scripts]
    for a, b in links:
        init += [f"(CONNECTED {a} {b})", f"(CONNECTED {b} {a})"]
    init += [f"(DATA-SIZE {d} number{size[d]})" for d in items]
    init += [f"(CAPACITY {s} number{capacity})" for s in servers]
    sizes = sorted(set(size.values()))
    init += [f"(SUM number{a} number{z} number{a + z})"
             for a in range(capacity + 1) for z in sizes if a + z <= capacity]
    init += [f"(LESS-EQUAL number{n} number{capacity})" for n in range(1, capacity + 1)]
    init.append("(= (total-cost) 0)")
    disk = {s: rng.randint(1, 2) for s in servers}
    link_cost = {pair: rng.randint(1, 2) for pair in links}
    init += [f"(= (process-cost {sc} {s}) {rng.randint(1, 4)})" for sc, _, _, _ in scripts for s in servers]
    for (a, b), c in link_cost.items():
        for z in sizes:
            init += [f"(= (send-cost {a} {b} number{z}) {c * z})",
                     f"(= (send-cost {b} {a} number{z}) {c * z})"]
    init += [f"(= (io-cost {s} number{z}) {disk[s] * z})" for s in servers for z in sizes]
    home = {d: rng.choice(servers) for d in layers[0]}
    init += [f"(saved {d} {home[d]})" for d in layers[0]]
    init += [f"(usage {s} number0)" for s in servers]
    wanted = layers[-1] if len(layers[-1]) >= p["goals"] or len(layers) == 1 else layers[-1] + layers[-2]
    chosen = sorted(rng.sample(wanted, min(p["goals"], len(wanted))), key=items.index)
    goal = [f"(saved {d} {rng.choice([s for s in servers if s != home.get(d)])})" for d in chosen]
    objects = f"{' '.join(items)} - data "
    if scripts:
        objects += f"{' '.join(s for s, _, _, _ in scripts)} - script "
    objects += f"{' '.join(servers)} - server {' '.join(numbers)} - numbers"
    return (f"(define (problem {name}) (:domain data-network)\n  (:objects {objects})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)}))\n"
            "  (:metric minimize (total-cost)))\n")


GENERATOR = LadderGenerator(
    world="datanetwork",
    bands={
        "easy": {"servers": (2, 2), "raw": (2, 3), "layers": (0, 1), "capacity": (3, 4), "goals": (1, 1)},
        "medium": {"servers": (2, 3), "raw": (2, 3), "layers": (1, 1), "capacity": (3, 4), "goals": (1, 2)},
        "hard": {"servers": (3, 4), "raw": (3, 3), "layers": (2, 2), "capacity": (4, 5), "goals": (2, 2)},
    },
    build=build,
)
