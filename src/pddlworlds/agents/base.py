"""What every agent is: something that maps an observation (and info) to an action text.

`Agent.run` plays one episode and returns its `EpisodeRecord`; agents that call a model fill the
per-step model fields by overriding `step_details`.
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym

from ..env import StepInfo
from ..records import EpisodeRecord, StepRecord

__all__ = ["Agent"]


class Agent:
    """Base class: override `act`; `reset` is called at the start of each episode."""

    name: str = "agent"
    model: str | None = None

    def flags(self) -> dict[str, Any]:
        return {}

    def reset(self, observation: str, info: StepInfo, env: gym.Env, seed: int | None = None) -> None:
        """Called once per episode after `env.reset`; `env` lets scripted agents read the problem, and `seed` is
        the episode's seed (the one given to `env.reset`), for agents whose choices are random."""

    def act(self, observation: str, info: StepInfo) -> str:
        raise NotImplementedError

    def observe(self, action: str, observation: str, info: StepInfo) -> None:
        """Called after each `env.step(action)` with its result, so the agent's memory holds the last
        step too (the next `act` would not see it at the end of an episode)."""

    def step_details(self) -> dict[str, Any]:
        """Model-side facts about the last `act` call (tokens, latency, raw output, memory view)."""
        return {}

    def memory(self) -> list[dict[str, Any]]:
        return []

    def run(
        self, env: gym.Env, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> EpisodeRecord:
        """Play one episode to termination or truncation."""
        start = time.perf_counter()
        observation, info = env.reset(seed=seed, options=options)
        first_observation, first_info = observation, info
        self.reset(observation, info, env, seed)
        trajectory: list[StepRecord] = []
        terminated = truncated = False
        while not (terminated or truncated):
            action = self.act(observation, info)
            details = self.step_details()
            observation, _, terminated, truncated, info = env.step(action)
            self.observe(action, observation, info)
            trajectory.append(StepRecord.of_step(action, observation, info, **details))
        return EpisodeRecord.of_episode(
            self.name, seed, (first_observation, first_info), info, trajectory, time.perf_counter() - start,
            flags=self.flags(), model=self.model, memory=self.memory(),
            costed=bool(getattr(getattr(env, "unwrapped", env), "action_costs", False)),
        )
