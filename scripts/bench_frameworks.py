"""Environment steps per second through the OpenEnv server beside in-process Gymnasium, in one run.

    python scripts/bench_frameworks.py [--domain gripper] [--steps 300] [--sessions 1,16]

Starts `pddlworlds env-server` on 127.0.0.1 (a process of this script, ended with it), then for each
session count plays the same seeded action sequences (valid actions mostly, some listings and invalid
texts, a new episode whenever one ends) two ways: in process on `gym.make` environments (one after
another, step by step), and through the server with that many OpenEnv clients at once (asyncio, one
WebSocket session each). Reports steps per second of all sessions together. Both sides first reset every
problem of the split once, untimed: a process grounds each problem once, on first use.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import gymnasium as gym

import pddlworlds  # noqa: F401  (registers the ids)
from pddlworlds.registration import env_id
from pddlworlds.testing.servers import free_port, pddlworlds_command, started
from pddlworlds.worlds.catalogue import get_domain

RESETS = "reset"  # the marker of a new episode in a script of actions


@dataclass
class Script:
    """One session's work: (problem, seed) of each episode and its actions, in order."""

    episodes: list[tuple[str, int, list[str]]]

    @property
    def steps(self) -> int:
        return sum(len(actions) for _, _, actions in self.episodes)


def make_script(domain: str, steps: int, session: int) -> Script:
    """Seeded actions for `steps` steps, the episodes cut where Gymnasium ends them."""
    rng = random.Random(f"bench:{domain}:{session}")
    problems = get_domain(domain).problems()
    env = gym.make(env_id(domain))
    episodes: list[tuple[str, int, list[str]]] = []
    total = 0
    while total < steps:
        problem, seed = problems[rng.randrange(len(problems))], rng.randrange(1000)
        env.reset(seed=seed, options={"problem": problem})
        actions: list[str] = []
        done = False
        while not done and total < steps:
            roll = rng.random()
            action = rng.choice(env.unwrapped.valid_actions()) if roll < 0.85 else "check valid actions" if roll < 0.95 else "jump"
            _, _, terminated, truncated, _ = env.step(action)
            actions.append(action)
            total += 1
            done = terminated or truncated
        episodes.append((problem, seed, actions))
    env.close()
    return Script(episodes)


def in_process(domain: str, scripts: list[Script]) -> float:
    """Seconds to play every script on its own environment, the sessions interleaved step by step."""
    envs = [gym.make(env_id(domain)) for _ in scripts]
    queues = [[(problem, seed, action) for problem, seed, actions in s.episodes for action in [RESETS, *actions]] for s in scripts]
    start = time.perf_counter()
    for items in itertools.zip_longest(*queues):
        for env, item in zip(envs, items, strict=True):
            if item is None:  # this session has finished
                continue
            problem, seed, action = item
            if action == RESETS:
                env.reset(seed=seed, options={"problem": problem})
            else:
                env.step(action)
    return time.perf_counter() - start


async def _session(url: str, domain: str, script: Script) -> None:
    from pddlworlds.frameworks.openenv_client import PDDLWorldsClient

    async with PDDLWorldsClient(base_url=url) as client:
        for problem, seed, actions in script.episodes:
            await client.reset(domain=domain, problem=problem, seed=seed)
            for action in actions:
                await client.step(action)


async def _warm(url: str, domain: str) -> None:
    from pddlworlds.frameworks.openenv_client import PDDLWorldsClient

    async with PDDLWorldsClient(base_url=url) as client:
        for problem in get_domain(domain).problems():
            await client.reset(domain=domain, problem=problem)


def warm(url: str, domain: str) -> None:
    """Ground every problem once in this process and in the server's (their first reset builds the world)."""
    env = gym.make(env_id(domain))
    for problem in get_domain(domain).problems():
        env.reset(options={"problem": problem})
    env.close()
    asyncio.run(_warm(url, domain))


def served(url: str, domain: str, scripts: list[Script]) -> float:
    async def everyone() -> None:
        await asyncio.gather(*(_session(url, domain, s) for s in scripts))

    start = time.perf_counter()
    asyncio.run(everyone())
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domain", default="gripper", help="shipped domain (default: gripper)")
    parser.add_argument("--steps", type=int, default=300, help="steps per session (default: 300)")
    parser.add_argument("--sessions", default="1,16", help="session counts, comma-separated (default: 1,16)")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.sessions.split(",")]
    if args.steps < 1 or not counts or min(counts) < 1 or max(counts) > 64:
        parser.error("--steps must be at least 1 and each session count from 1 to 64")
    domain = get_domain(args.domain).name
    scripts = [make_script(domain, args.steps, i) for i in range(max(counts))]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = pddlworlds_command("env-server", "--port", str(port), "--max-sessions", str(max(counts)), "--domain", domain)
    rows: list[tuple[str, int, int, float]] = []
    with started(command, f"{url}/health"):
        warm(url, domain)
        ways: list[tuple[str, Callable[[list[Script]], float]]] = [
            ("in-process Gymnasium", lambda s: in_process(domain, s)),
            ("OpenEnv server (WebSocket)", lambda s: served(url, domain, s)),
        ]
        for n in counts:
            chosen = scripts[:n]
            steps = sum(s.steps for s in chosen)
            for name, play in ways:
                rows.append((name, n, steps, play(chosen)))
    print(f"{domain}, {args.steps} steps per session (agentboard split, seeded actions; resets not counted as steps)")
    print(f"{'way':<28} {'sessions':>8} {'steps':>7} {'seconds':>8} {'steps/s':>9}")
    for name, n, steps, seconds in rows:
        print(f"{name:<28} {n:>8} {steps:>7} {seconds:>8.2f} {steps / seconds:>9,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
