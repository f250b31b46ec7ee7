"""Named planner configurations: the registry (name -> `PlannerConfig`) every planner call resolves through.

Like unified-planning's engine table, a configuration names an engine and fixed parameters; it also says
what a finished run proves (an admissible search proves its plan optimal, a complete one proves "no plan"
means unsolvable), because the engines' own statuses cannot be trusted for that (see `solving`).
A new planner is one `register_planner(PlannerConfig(...))` call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..registry import Registry

__all__ = ["DRIVER", "PLANNERS", "PlannerConfig", "get_planner", "planner_version", "register_planner"]


@dataclass(frozen=True)
class PlannerConfig:
    """An engine with fixed parameters, and what a finished run of it proves.

    `engine` is a unified-planning engine name, or `DRIVER` for Fast Downward's own driver on the files
    (params `search`: `"admissible"` for an A* chosen by the task's features, or a search string; or
    `alias`), which reads every domain the worlds engine reads.
    """

    name: str
    engine: str  # unified-planning engine name, or DRIVER
    params: dict[str, Any] = field(default_factory=dict)
    admissible: bool = False  # a plan it finds is optimal (cost-optimal where the task has action costs)
    complete: bool = True  # "no plan found" after a finished search means unsolvable
    description: str = ""
    proof: str = ""  # why a finished run proves its plan optimal, in the plan index's notes (admissible ones)

    @property
    def label(self) -> str:
        """How the configuration is written in the plan index's `method` column."""
        params = self.params
        if self.engine == DRIVER:
            return " ".join(self.driver_args(None))
        if "fast_downward_search_config" in params:  # as scripts/prove_optimal.py writes it
            return f"--search {params['fast_downward_search_config']}"
        if "fast_downward_alias" in params:
            return f"--alias {params['fast_downward_alias']}"
        if params:
            return f"{self.engine}(" + ", ".join(f"{k}={v}" for k, v in sorted(params.items())) + ")"
        return self.engine

    def driver_args(self, admissible_search: str | None) -> list[str]:
        """The driver's search arguments; `admissible_search` is the A* chosen for the task (None: unknown)."""
        if "alias" in self.params:
            return ["--alias", str(self.params["alias"])]
        search = str(self.params.get("search", "admissible"))
        if search == "admissible":
            search = admissible_search or "astar(lmcut()|hmax()|blind() by the task's features)"
        return ["--search", search]


#: The `engine` of configurations that run Fast Downward's driver directly (`fd_driver`), not unified-planning.
DRIVER = "fast-downward-driver"

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
    from .fd_driver import bundled_downward

    try:
        version_file = bundled_downward() / "driver" / "version.py"
    except FileNotFoundError:
        return "?"
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


# The default, "fd-opt", runs Fast Downward's driver on the files the worlds engine read (any classical PDDL
# it reads: derived predicates, conditional effects, action costs, large files), with an admissible A*
# chosen by the task's features; "fd-sat" runs lama-first there. "fd-opt-up" and "fd-sat-up" are the same
# searches through unified-planning (whose validator then checks the plan too), for the domains it reads.
register_planner(PlannerConfig(
    "fd-opt", DRIVER, {"search": "admissible"}, admissible=True,
    description="Fast Downward's driver, A* with LM-cut, h^max (conditional effects) or blind (axioms): "
                "optimal plans, cost-optimal with action costs, any domain the engine reads",
))
# The unified-planning configuration goes through the plain "fast-downward" engine with an explicit search
# string rather than the "fast-downward-opt" engine. That engine runs the same A* with LM-cut, but on a copy of
# the problem with an artificial goal action, which it builds in unified-planning's global environment
# (so it fails on problems read into a private one) and strips from the plan by line position.
register_planner(PlannerConfig(
    "fd-opt-up", "fast-downward", {"fast_downward_search_config": "astar(lmcut())"}, admissible=True,
    description="Fast Downward through unified-planning, A* with LM-cut (admissible: optimal plans)",
))
register_planner(PlannerConfig(
    "fd-opt-length", DRIVER, {"search": "admissible", "unit_cost": True}, admissible=True,
    description="fd-opt on the task with its action costs taken out (every action counts 1): the shortest "
                "plan, its length proven minimal, which on a domain with action costs need not be the cheapest",
    proof="A* with an admissible heuristic over unit costs finished: no shorter plan exists",
))
register_planner(PlannerConfig(
    "fd-sat", DRIVER, {"alias": "lama-first"}, admissible=False,
    description="Fast Downward's driver, lama-first (greedy search with FF and landmarks: fast, not optimal), "
                "any domain the engine reads",
))
register_planner(PlannerConfig(
    "fd-sat-up", "fast-downward", {"fast_downward_alias": "lama-first"}, admissible=False,
    description="Fast Downward through unified-planning, lama-first (fast, not optimal)",
))
register_planner(PlannerConfig(
    "pyperplan-opt", "pyperplan-opt", {"search": "astar", "heuristic": "lmcut"}, admissible=True,
    description="pyperplan, A* with LM-cut (admissible; pure Python, for small problems)",
))
register_planner(PlannerConfig(
    "pyperplan-sat", "pyperplan", {"search": "gbf", "heuristic": "hff"}, admissible=False,
    description="pyperplan, greedy best-first search with h_FF (pure Python, not optimal)",
))

# The optimal searches `scripts/prove_optimal.py` proves the shipped optimal lengths with (its `--config` is
# the name without "fd-opt-"): A* with one admissible heuristic each, some with a partial-order reduction
# that keeps an optimal plan. They run through the driver as any configuration does (`pddlworlds plan
# --planner fd-opt-ms-bisim`); the script runs the same search strings on the search binary itself.
_MERGE_AND_SHRINK = (
    "merge_and_shrink(shrink_strategy=shrink_bisimulation(greedy=false),"
    "merge_strategy=merge_sccs(order_of_sccs=topological,"
    "merge_selector=score_based_filtering(scoring_functions=[goal_relevance(),dfp(),total_order()])),"
    "label_reduction=exact(before_shrinking=true,before_merging=false),"
    "max_states=50k,threshold_before_merge=1)"
)


def _register_proof_searches() -> None:
    stubborn = ",pruning=atom_centric_stubborn_sets()"
    stubborn_proof = ("; atom-centric stubborn sets keep an optimal plan from every state "
                      "(optimality-preserving partial-order reduction)")
    for name, heuristic, words in [
        ("lmcut", "lmcut()", "LM-cut"),
        ("ms-bisim", _MERGE_AND_SHRINK, "merge-and-shrink (bisimulation, 50k states)"),
        ("ipdb", "ipdb()", "iPDB"),
        ("cegar", "cegar()", "additive Cartesian CEGAR"),
        ("max-lmcut-cegar", "max([lmcut(),cegar()])", "max(LM-cut, CEGAR)"),
        ("blind", "blind()", "blind"),
    ]:
        for pruned in (False, True) if name in ("lmcut", "ms-bisim") else (False,):
            register_planner(PlannerConfig(
                f"fd-opt-{name}{'-acss' if pruned else ''}", DRIVER,
                {"search": f"astar({heuristic}{stubborn if pruned else ''})"}, admissible=True,
                description=f"Fast Downward's driver, A* with {words}{' and stubborn sets' if pruned else ''}: "
                            "optimal plans (scripts/prove_optimal.py)",
                proof=f"A* with admissible heuristic {words} finished" + (stubborn_proof if pruned else ""),
            ))


_register_proof_searches()
