"""Gymnasium registration: one id per shipped domain folder, and `pddlworlds/PDDL-v0` for any files, all
served by `PDDLTextEnv`.

Gymnasium 1.x has no plugin entry points; its `module:id` form imports a module before it looks an id up,
so `gym.make("pddlworlds:pddlworlds/PDDL-v0", domain_file=..., problem_file=...)` works in a program that
never imported pddlworlds.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec

from .worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS, domains
from .worlds.profiles import DEFAULT_PROFILE

__all__ = [
    "DEFAULT_MAX_EPISODE_STEPS",
    "ENTRY_POINT",
    "FILES_ID",
    "domain_env_kwargs",
    "env_id",
    "files_env",
    "make_domain_env",
    "make_env",
    "register_envs",
]

ENTRY_POINT = "pddlworlds.env:PDDLTextEnv"
#: The id that plays PDDL files of your own: `gym.make(FILES_ID, domain_file=..., problem_file=...)`.
FILES_ID = "pddlworlds/PDDL-v0"


def env_id(domain: str) -> str:
    """`blocksworld` -> `pddlworlds/Blocksworld-v0`."""
    return f"pddlworlds/{domain.capitalize()}-v0"


#: Gymnasium's `PassiveEnvChecker` wrapper is left out of `gym.make`: it checks an environment's spaces and
#: returns on the first reset and step, which the test suite does with `gymnasium.utils.env_checker.check_env`
#: on every world, and otherwise costs a call layer on every step (about a sixth of a listed action's step).
#: `gym.make(id, disable_env_checker=False)` puts it back.
CHECKED_BY_TESTS = True


def register_envs() -> list[str]:
    """Register every shipped domain (idempotent); returns the ids."""
    ids = []
    for name in domains():
        id_ = env_id(name)
        if id_ not in gym.registry:
            # no `TimeLimit`: the environment truncates at each problem's own budget (30 steps, or a ladder
            # band's), which a wrapper's fixed limit could not follow
            gym.register(id=id_, entry_point=ENTRY_POINT, kwargs={"domain": name}, max_episode_steps=None,
                         disable_env_checker=CHECKED_BY_TESTS)
        ids.append(id_)
    if FILES_ID not in gym.registry:
        gym.register(id=FILES_ID, entry_point="pddlworlds.registration:files_env", max_episode_steps=None,
                     disable_env_checker=CHECKED_BY_TESTS)
    ids.append(FILES_ID)
    return ids


#: The id of an environment over a domain of a `domains_root` (made from a spec, never registered).
ROOT_ID = "pddlworlds/Domain-v0"


def make_domain_env(domain: str, domains_root: str | Path | None = None, **kwargs) -> gym.Env:
    """`gym.make` of a domain by name: a shipped one by its registered id, or one of the domain folders
    under `domains_root` through a spec made here (same entry point, same wrappers), so a folder of your
    own never adds to or shadows the registry."""
    if domains_root is None:
        return gym.make(env_id(domain), **kwargs)
    spec = EnvSpec(id=ROOT_ID, entry_point=ENTRY_POINT, max_episode_steps=None,
                   kwargs={"domain": domain, "domains_root": str(domains_root)}, disable_env_checker=CHECKED_BY_TESTS)
    return gym.make(spec, **kwargs)


def domain_env_kwargs(
    split: str,
    max_steps: int,
    *,
    profile: str = DEFAULT_PROFILE,
    reward: str = "progress",
    observation_mode: str | None = None,
    allow_impossible: bool = False,
) -> dict[str, Any]:
    """`make_domain_env` keywords for an episode's choices (the problem is chosen at reset), the defaults
    left out: `pddlworlds eval` and the framework adapters both make their environments from these, so
    equal choices give equal keywords (and one environment kept for them)."""
    kwargs: dict[str, Any] = {"split": split, "step_budget": max_steps}
    if profile != DEFAULT_PROFILE:
        kwargs["profile"] = profile
    if reward != "progress":
        kwargs["reward"] = reward
    if observation_mode is not None:
        kwargs["observation_mode"] = observation_mode
    if allow_impossible:
        kwargs["allow_impossible"] = True
    return kwargs


def files_env(
    domain_file: str | Path,
    problem_file: str | Path | list[str | Path],
    *,
    text_file: str | Path | None = None,
    **kwargs,
) -> gym.Env:
    """What `gym.make(FILES_ID, ...)` builds: the environment over the files, truncating at 30 steps unless
    `step_budget` says otherwise."""
    return make_env(domain_file, problem_file, text_file=text_file, **kwargs)


def make_env(
    domain_file: str | Path,
    problem_file: str | Path | list[str | Path],
    *,
    text_file: str | Path | None = None,
    max_episode_steps: int | None = DEFAULT_MAX_EPISODE_STEPS,
    **kwargs,
) -> gym.Env:
    """An environment over classical PDDL of your own (ADL, derived predicates, action costs).

    Without `text_file`, the profile's text file lying beside `domain_file` is used (`text.toml`, or
    `agentboard.toml` with `profile="agentboard"`), else the bare PDDL form is the text.
    `problem_file` may be one file or a list (then `reset(seed=...)` picks among them).
    `max_episode_steps` is the step budget (None: no limit; `step_budget=` in `kwargs` says the same).
    """
    from .env import PDDLTextEnv

    files = [problem_file] if isinstance(problem_file, (str, Path)) else list(problem_file)
    if "step_budget" not in kwargs:
        kwargs["step_budget"] = math.inf if max_episode_steps is None else max_episode_steps
    return PDDLTextEnv(domain_file=domain_file, problem_files=files, text_file=text_file, **kwargs)
