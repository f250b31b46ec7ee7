"""The catalogue's ladder generators: one module a world, found by name.

A module here named after a world's folder (`logistics.py` for `pddl_domains/logistics/`) that defines
`GENERATOR`, a `LadderGenerator`, is that world's generator; its docstring says how problems are drawn and
what each parameter means. Adding a world's generator is adding its module.
"""

from __future__ import annotations

import pkgutil

from ...registry import Registry
from .base import HEADER_MARK, Candidate, LadderGenerator, draw_candidate

__all__ = ["HEADER_MARK", "Candidate", "LadderGenerator", "draw_candidate", "ladder_generators"]


def ladder_generators() -> Registry[LadderGenerator]:
    """World name -> its generator, every module of this package but `base` (imported when looked up)."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name != "base" and not m.name.startswith("_"))
    return Registry("ladder generator", {n: f"{__name__}.{n}:GENERATOR" for n in names}, plural="ladder generators")
