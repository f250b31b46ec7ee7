"""Gymnasium registration: one id per shipped domain folder, all served by `PDDLTextEnv`."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
from gymnasium.wrappers import TimeLimit

from .worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS, domains

__all__ = ["ENTRY_POINT", "DEFAULT_MAX_EPISODE_STEPS", "env_id", "register_envs", "make_env"]

ENTRY_POINT = "pddlworlds.env:PDDLTextEnv"


def env_id(domain: str) -> str:
    """`blocksworld` -> `pddlworlds/Blocksworld-v0`."""
    return f"pddlworlds/{domain.capitalize()}-v0"


def register_envs() -> list[str]:
    """Register every shipped domain (idempotent); returns the ids."""
    ids = []
    for name in domains():
        id_ = env_id(name)
        if id_ not in gym.registry:
            gym.register(
                id=id_,
                entry_point=ENTRY_POINT,
                kwargs={"domain": name},
                max_episode_steps=DEFAULT_MAX_EPISODE_STEPS,
            )
        ids.append(id_)
    return ids


def make_env(
    domain_file: str | Path,
    problem_file: str | Path | list[str | Path],
    *,
    text_file: str | Path | None = None,
    max_episode_steps: int | None = DEFAULT_MAX_EPISODE_STEPS,
    **kwargs,
) -> gym.Env:
    """An environment over STRIPS PDDL of your own.

    Without `text_file`, the profile's text file lying beside `domain_file` is used (`text.toml`, or
    `agentboard.toml` with `profile="agentboard"`), else the bare PDDL form is the text.
    `problem_file` may be one file or a list (then `reset(seed=...)` picks among them).
    """
    from .env import PDDLTextEnv

    files = [problem_file] if isinstance(problem_file, (str, Path)) else list(problem_file)
    env = PDDLTextEnv(domain_file=domain_file, problem_files=files, text_file=text_file, **kwargs)
    return TimeLimit(env, max_episode_steps) if max_episode_steps else env
