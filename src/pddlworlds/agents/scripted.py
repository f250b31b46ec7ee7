"""Scripted baselines that need no model: the planner expert and a uniformly random player.

`ExpertAgent` follows the stored plan of the problem (`planners/<domain>/<problem>.plan`) and, whenever
the episode's state is not one the plan passes through (someone else acted, or there is no stored plan),
plans again from the current state with unified-planning (fd-opt for a short while, then fd-sat) and
follows that plan. `RandomAgent` picks uniformly among the valid actions with a generator seeded from
(agent seed, episode seed, domain, problem), so its episodes are reproducible and differ between seeds.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from ..env import StepInfo
from ..unsolvable.claim import IMPOSSIBLE_ACTION
from .base import Agent
from .unsolvable_rule import offers_impossible

__all__ = ["ExpertAgent", "RandomAgent"]

#: Where the expert turns when it must plan: each (planner, timeout in seconds) in turn until one solves.
DEFAULT_REPLANNERS: tuple[tuple[str, float], ...] = (("fd-opt", 10.0), ("fd-sat", 120.0))

_STUCK = "look around"  # what an agent says when it has nothing better (costs a step, changes nothing)
#: The random agent's chance, per step, of claiming `impossible` where it is offered: a floor for the F1.
CLAIM_PROBABILITY = 0.02


class ExpertAgent(Agent):
    """Plays the stored (optimal where proven) plan; replans from the current state when off it.

    On a problem with a stored proof of unsolvability it claims `impossible` at once where offered.
    """

    name = "expert"

    def __init__(self, replanners: Sequence[tuple[str, float]] = DEFAULT_REPLANNERS, nice: int = 0,
                 use_stored: bool = True):
        self.replanners = tuple((str(p), float(t)) for p, t in replanners)
        self.nice = nice
        self.use_stored = use_stored
        self._env: Any = None
        self._texts: list[str] = []
        self._states: list[int] = []  # _states[i] is the state before _texts[i]; one more at the end
        self._events: list[dict[str, Any]] = []
        self._steps = 0
        self._failed: set[int] = set()  # states no planner could plan from (not retried)

    def flags(self) -> dict[str, Any]:
        return {"replanners": [list(r) for r in self.replanners], "use_stored": self.use_stored}

    def memory(self) -> list[dict[str, Any]]:
        """Where the plans came from: the stored plan, and every replanning (step, planner, length)."""
        return list(self._events)

    @property
    def replans(self) -> int:
        return sum(1 for e in self._events if e["event"] == "replan")

    def reset(self, observation: str, info: StepInfo, env: gym.Env, seed: int | None = None) -> None:
        from ..planning import replay, stored_plan

        self._env = env.unwrapped
        self._events = []
        self._steps = 0
        self._failed = set()
        self._texts, self._states = [], []
        self._unsolvable = False
        world = self._env.world
        if self._env.shipped:
            from ..artefacts.proofs import is_unsolvable

            self._unsolvable = is_unsolvable(self._env.domain_name, world.name)
        if self._unsolvable:  # proven: no plan to follow or look for; claim it where the action is offered
            self._events.append({"event": "stored proof: unsolvable", "step": 0})
            return
        actions = stored_plan(self._env.domain_name, world.name) if self.use_stored and self._env.shipped else None
        if actions is not None:
            played = replay(world, actions, self._env.state)
            if played.goal and played.indices is not None:
                self._follow(played.indices, played.states)
                self._events.append({"event": "stored plan", "step": 0, "length": len(played.indices)})
            else:
                self._events.append({"event": "stored plan rejected", "step": 0,
                                     "reason": played.reason or "goal not reached"})

    def _follow(self, indices: list[int], states: list[int]) -> None:
        world = self._env.world
        self._texts = [world.action_text(i) for i in indices]
        self._states = states

    def _replan(self) -> bool:
        from pathlib import Path

        from ..planning import Target, replay, solve_target

        env = self._env
        world = env.world
        atoms = world.task.true_atoms(env.state)
        target = Target(env.domain_name, world.name, env.split, Path(env.domain_file),
                        Path(env.problem_files[world.name]), env.text_file, env.shipped)
        for planner, timeout in self.replanners:
            plan = solve_target(target, planner, timeout, initial_atoms=atoms, nice=self.nice)
            event = {"event": "replan", "step": self._steps, "planner": planner, "status": plan.status.value,
                     "length": plan.length, "time_s": round(plan.time_s, 3)}
            self._events.append(event)
            if plan.solved:
                played = replay(world, plan.actions, env.state)
                if played.indices is not None:  # solve_target has replayed it already; this cannot fail
                    self._follow(played.indices, played.states)
                    return True
            if plan.status.value == "unsolvable":
                break  # no planner will do better
        self._texts, self._states = [], []
        self._failed.add(env.state)
        return False

    def act(self, observation: str, info: StepInfo) -> str:
        state = self._env.state
        self._steps += 1
        if self._unsolvable:
            return IMPOSSIBLE_ACTION if offers_impossible(self._env) else _STUCK
        # Where on the plan are we? (Usually at its head; elsewhere if someone else moved us along it.)
        position = next((i for i, s in enumerate(self._states[:-1]) if s == state), None)
        if position is None:
            if self._env.world.task.is_goal(state) or state in self._failed:
                return _STUCK
            if not self._replan():
                return _STUCK
            position = 0
        self._texts, self._states = self._texts[position:], self._states[position:]
        text = self._texts.pop(0)
        self._states.pop(0)
        return text


class RandomAgent(Agent):
    """Uniformly random among the valid actions; reproducible per (agent seed, episode seed, domain, problem).

    Where `impossible` is offered it claims it with probability `CLAIM_PROBABILITY` each step.
    """

    name = "random"

    def __init__(self, seed: int = 0):
        self.seed = seed
        self._env: Any = None
        self._rng = random.Random(seed)

    def flags(self) -> dict[str, Any]:
        return {"seed": self.seed}

    def reset(self, observation: str, info: StepInfo, env: gym.Env, seed: int | None = None) -> None:
        self._env = env.unwrapped
        # Several episode seeds on one problem must give several random episodes (the floor of a table is
        # averaged over them), and the same seeds the same episodes in any process or order.
        self._rng = random.Random(f"{self.seed}:{seed}:{info.get('domain')}:{info.get('problem')}")

    def act(self, observation: str, info: StepInfo) -> str:
        if offers_impossible(self._env):
            if self._rng.random() < CLAIM_PROBABILITY:
                return IMPOSSIBLE_ACTION
            actions = [a for a in self._env.valid_actions() if a != IMPOSSIBLE_ACTION]
        else:
            actions = self._env.valid_actions()
        return self._rng.choice(actions) if actions else _STUCK
