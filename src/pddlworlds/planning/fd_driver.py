"""Fast Downward's own driver on the task the worlds engine read: every domain the engine plays, plans.

unified-planning's reader refuses derived predicates and files over 128 KiB, so the driver bundled with
up-fast-downward (`up_fast_downward/downward/fast-downward.py`: translator, then the `downward` search
binary) runs directly on PDDL written back from the very lists the engine's parser read
(`LiftedTask.source`), in a process group of its own under `run_killable` (nice, address-space cap, group
killed at the deadline, nothing left behind). Solving from another state writes a problem whose `:init`
is those atoms plus the original numeric facts (`(= (road-length a b) 5)`), which action costs need.

The admissible search follows the features Fast Downward supports (`admissible_search`).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..worlds.grounding import Atom, GroundTask
from ..worlds.pddl import LiftedTask
from .store import parse_plan
from .worker import run_killable

__all__ = ["ADMISSIBLE", "admissible_search", "bundled_downward", "driver_path", "problem_lists", "run_driver", "without_costs",
           "write_sexpr"]

#: The `search` parameter of a driver configuration that asks for `admissible_search`'s choice.
ADMISSIBLE = "admissible"

#: The driver's exit codes (driver/returncodes.py) and what they mean for a call.
_STATUS = {0: "SOLVED", 10: "UNSOLVABLE_PROVEN", 11: "UNSOLVABLE_PROVEN", 12: "UNSOLVABLE_INCOMPLETELY",
           20: "MEMOUT", 22: "MEMOUT", 24: "MEMOUT", 21: "TIMEOUT", 23: "TIMEOUT"}
_COST_LINE = re.compile(r";\s*cost\s*=\s*(\d+)")


def bundled_downward() -> Path:
    """The `downward` folder of the Fast Downward build bundled with up-fast-downward, found without importing
    that package (its import loads unified-planning, ConfigSpace and scipy: seconds for every process that
    plans)."""
    spec = importlib.util.find_spec("up_fast_downward")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("up-fast-downward is not installed: Fast Downward's driver comes with it "
                                "(scripts/setup.sh installs it)")
    return Path(next(iter(spec.submodule_search_locations))).resolve() / "downward"


def driver_path() -> Path:
    """`fast-downward.py` of the Fast Downward build bundled with up-fast-downward."""
    path = bundled_downward() / "fast-downward.py"
    if not path.is_file():
        raise FileNotFoundError(f"Fast Downward's driver is missing: {path} (reinstall up-fast-downward)")
    return path


def admissible_search(task: GroundTask) -> tuple[str, str]:
    """(search, why): an admissible A* that Fast Downward accepts for the task's features.

    LM-cut handles action costs but neither conditional effects nor axioms; h^max handles conditional
    effects; with axioms (derived predicates, and the translator's own for quantified or disjunctive
    conditions) no heuristic of Fast Downward is safe, so blind search. The ground task is the
    translator's own normalisation, so its axioms and conditional effects are the ones the search sees.
    """
    if task.axioms:
        return "astar(blind())", "axioms (derived predicates or complex conditions): blind search"
    if any(action.conditional for action in task.actions):
        return "astar(hmax())", "conditional effects: h^max (LM-cut does not support them)"
    return "astar(lmcut())", "STRIPS with negation and costs: LM-cut"


def without_costs(lists: Any) -> Any:
    """A domain's or problem's lists with action costs taken out: `(increase (total-cost) ...)` effects and
    `(:metric ...)` dropped (numeric facts in `:init` stay: harmless without the metric). Fast Downward's
    LM-cut has no unit-cost transform in this build, so the shortest plan of a costed task is found on
    this copy."""
    if not isinstance(lists, list):
        return lists
    out = []
    for item in lists:
        if isinstance(item, list) and item and isinstance(item[0], str):
            head = item[0].lower()
            if head == ":metric" or (head == "increase" and len(item) > 1 and item[1] == ["total-cost"]):
                continue
        out.append(without_costs(item))
    return out


def write_sexpr(expr: Any) -> str:
    """PDDL text of nested lists of words."""
    if isinstance(expr, list):
        return "(" + " ".join(write_sexpr(e) for e in expr) + ")"
    return str(expr)


def problem_lists(task: LiftedTask, atoms: Iterable[Atom]) -> list:
    """The problem's lists with `:init` replaced by `atoms` plus the original numeric facts (`(= ...)`).

    Atoms of derived predicates and of predicates the domain does not declare (the engine's hidden helper
    atoms) are left out: a problem may not state them, and the translator derives them again.
    """
    declared = {name for name, _ in task.predicates} - set(task.derived)
    problem = list(task.source[1])
    for i, section in enumerate(problem):
        if isinstance(section, list) and section and section[0] == ":init":
            numeric = [fact for fact in section[1:] if isinstance(fact, list) and fact and fact[0] == "="]
            facts = [[name, *args] for name, args in sorted(set(atoms)) if name in declared]
            problem[i] = [":init", *numeric, *facts]
            return problem
    problem.append([":init", *[[name, *args] for name, args in sorted(set(atoms)) if name in declared]])
    return problem


def _limits(nice: int, memory_mb: int | None) -> Callable[[], None]:
    def limit() -> None:
        if nice:
            os.nice(nice)
        if memory_mb:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 1024 * 1024,) * 2)

    return limit


def run_driver(
    task: LiftedTask,
    search: Sequence[str],
    timeout: float,
    *,
    initial_atoms: Iterable[Atom] | None = None,
    nice: int = 0,
    memory_mb: int | None = None,
    on_start: Callable[[int, str], None] | None = None,
    unit_cost: bool = False,
    cpu_seconds: float | None = None,
) -> dict[str, Any]:
    """Run the driver with `search` (its arguments, e.g. `["--search", "astar(lmcut())"]`) on `task`;
    with `unit_cost`, on the task with its action costs taken out (`without_costs`), so an optimal search
    finds the shortest plan; with `cpu_seconds`, the search stops after that much CPU time (a limit that
    does not depend on the machine's load, unlike `timeout`, the wall-clock limit of the whole run).

    Returns what the worker returns for unified-planning's engines (`engine_status`, `actions`, `log_tail`,
    `engine_time_s`), plus `plan_cost` (the `sas_plan` cost line), `timed_out`, `pid`, `token`.
    """
    tmp = Path(tempfile.mkdtemp(prefix="pddlworlds-fd-"))
    try:
        domain = without_costs(task.source[0]) if unit_cost else task.source[0]
        (tmp / "domain.pddl").write_text(write_sexpr(domain) + "\n")
        problem = task.source[1] if initial_atoms is None else problem_lists(task, initial_atoms)
        if unit_cost:
            problem = without_costs(problem)
        (tmp / "problem.pddl").write_text(write_sexpr(problem) + "\n")
        search = list(search)
        before = search[:2] if search[:1] == ["--alias"] else []  # the driver's own option: before the files
        if cpu_seconds is not None:  # the search's CPU time, whatever else the machine runs (exit code 23)
            before += ["--search-time-limit", f"{max(1, round(cpu_seconds))}s"]
        cmd = [sys.executable, str(driver_path()), "--plan-file", "sas_plan", *before, "domain.pddl",
               "problem.pddl", *search[2 if search[:1] == ["--alias"] else 0:]]
        env = dict(os.environ, TMPDIR=str(tmp), PYTHONUNBUFFERED="1")
        start = time.perf_counter()
        with open(tmp / "driver.log", "wb") as log:
            run = run_killable(cmd, timeout, cwd=tmp, stdout=log, env=env, preexec_fn=_limits(nice, memory_mb),
                               on_start=on_start)
        out: dict[str, Any] = {
            "engine_status": "TIMEOUT" if run.timed_out else _STATUS.get(run.returncode or 0, "INTERNAL_ERROR"),
            "engine_time_s": time.perf_counter() - start,
            "log_tail": (tmp / "driver.log").read_text(errors="replace")[-4000:],
            "actions": None, "plan_cost": None, "up_valid": None, "timed_out": run.timed_out,
            "pid": run.pid, "token": run.token, "returncode": run.returncode,
        }
        plan_path = tmp / "sas_plan"
        if not run.timed_out and run.returncode == 0 and plan_path.is_file():
            text = plan_path.read_text()
            out["actions"] = [[s, list(a)] for s, a in parse_plan(text)]
            costs = _COST_LINE.findall(text)
            out["plan_cost"] = int(costs[-1]) if costs else None
        elif out["engine_status"] == "SOLVED":
            out["engine_status"] = "INTERNAL_ERROR"  # exit 0 without a plan file
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
