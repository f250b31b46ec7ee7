"""Named planner configurations: the registry (name -> `PlannerConfig`) every planner call resolves through.

Like unified-planning's engine table, a configuration names an engine and fixed parameters; it also says
what a finished run proves (an admissible search proves its plan optimal, a complete one proves "no plan"
means unsolvable), because the engines' own statuses cannot be trusted for that (see `solving`).
A new planner is one `register_planner(PlannerConfig(...))` call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..registry import Registry

__all__ = ["PLANNERS", "PlannerConfig", "get_planner", "planner_version", "register_planner"]


@dataclass(frozen=True)
class PlannerConfig:
    """A unified-planning engine with fixed parameters, and what a finished run of it proves."""

    name: str
    engine: str  # unified-planning engine name
    params: dict[str, Any] = field(default_factory=dict)
    admissible: bool = False  # a plan it finds is optimal (unit cost)
    complete: bool = True  # "no plan found" after a finished search means unsolvable
    description: str = ""

    @property
    def label(self) -> str:
        """How the configuration is written in the plan index's `method` column."""
        params = self.params
        if "fast_downward_search_config" in params:  # as scripts/prove_optimal.py writes it
            return f"--search {params['fast_downward_search_config']}"
        if "fast_downward_alias" in params:
            return f"--alias {params['fast_downward_alias']}"
        if params:
            return f"{self.engine}(" + ", ".join(f"{k}={v}" for k, v in sorted(params.items())) + ")"
        return self.engine


PLANNERS: Registry[PlannerConfig] = Registry("planner")


def register_planner(config: PlannerConfig, *, replace: bool = False) -> PlannerConfig:
    """Add a named configuration (any unified-planning OneshotPlanner engine with its params); a taken
    name is refused unless `replace`."""
    if replace and config.name in PLANNERS:
        PLANNERS.remove(config.name)
    PLANNERS.register(config.name, config)
    return config


def get_planner(name: str | PlannerConfig) -> PlannerConfig:
    """The registered configuration of that name (a `PlannerConfig` passes through unchanged)."""
    if isinstance(name, PlannerConfig):
        return name
    return PLANNERS[name]


def fast_downward_version() -> str:
    """The version of the Fast Downward build bundled with up-fast-downward ("?" when not found)."""
    import up_fast_downward

    version_file = Path(up_fast_downward.__file__).resolve().parent / "downward" / "driver" / "version.py"
    match = re.search(r'__version__ = "([^"]+)"', version_file.read_text()) if version_file.is_file() else None
    return match.group(1) if match else "?"


def planner_version(config: PlannerConfig | str = "fd-opt") -> str:
    """Name and version of the engine behind a configuration, as the index's `planner` column has it."""
    config = get_planner(config)
    if config.engine.startswith("fast-downward"):
        return f"fast-downward {fast_downward_version()} (up-fast-downward)"
    if config.engine.startswith("pyperplan"):
        from importlib.metadata import version

        return f"pyperplan {version('pyperplan')} (up-pyperplan)"
    return config.engine


# The optimal configuration goes through the plain "fast-downward" engine with an explicit search string
# rather than the "fast-downward-opt" engine. That engine runs the same A* with LM-cut, but on a copy of
# the problem with an artificial goal action, which it builds in unified-planning's global environment
# (so it fails on problems read into a private one) and strips from the plan by line position.
register_planner(PlannerConfig(
    "fd-opt", "fast-downward", {"fast_downward_search_config": "astar(lmcut())"}, admissible=True,
    description="Fast Downward, A* with the LM-cut heuristic (admissible: optimal plans)",
))
register_planner(PlannerConfig(
    "fd-sat", "fast-downward", {"fast_downward_alias": "lama-first"}, admissible=False,
    description="Fast Downward, lama-first (greedy search with FF and landmarks: fast, not optimal)",
))
register_planner(PlannerConfig(
    "pyperplan-opt", "pyperplan-opt", {"search": "astar", "heuristic": "lmcut"}, admissible=True,
    description="pyperplan, A* with LM-cut (admissible; pure Python, for small problems)",
))
register_planner(PlannerConfig(
    "pyperplan-sat", "pyperplan", {"search": "gbf", "heuristic": "hff"}, admissible=False,
    description="pyperplan, greedy best-first search with h_FF (pure Python, not optimal)",
))
