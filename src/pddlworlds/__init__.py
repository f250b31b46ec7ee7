"""pddlworlds: long-horizon text environments backed by PDDL, and the agents that play them.

Importing the package registers `pddlworlds/<Domain>-v0` for every shipped domain. `load_environment` is
verifiers' door: `vf-eval pddlworlds` loads an environment by the package's name.
"""

from __future__ import annotations

from typing import Any

from .registration import make_env, register_envs
from .version import __version__

register_envs()

__all__ = ["__version__", "load_environment", "make_env", "register_envs"]


def load_environment(**env_args: Any) -> Any:
    """The verifiers environment (`frameworks.verifiers_env.load_environment`): verifiers imports an
    environment's module by its id and calls this, so `vf-eval pddlworlds -a '{"domain": "gripper"}'` plays
    the worlds. Needs the verifiers extra (pip install 'pddlworlds[verifiers]')."""
    from .frameworks.verifiers_env import load_environment as load

    return load(**env_args)
