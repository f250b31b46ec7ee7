"""pddlworlds: long-horizon text environments backed by PDDL, and the agents that play them.

Importing the package registers `pddlworlds/<Domain>-v0` for every shipped domain.
"""

from __future__ import annotations

from .registration import make_env, register_envs
from .version import __version__

register_envs()

__all__ = ["__version__", "make_env", "register_envs"]
