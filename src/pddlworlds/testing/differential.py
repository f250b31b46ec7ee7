"""The engine against independent readers on random small tasks (`random_domains.random_task`).

`check(seed)` loads our spelling with the engine (`read_task` + `ground`) and the plain one with pymimir,
then walks both with one seeded random choice per step, comparing at every state the applicable actions,
the successor state (every declared predicate, derived ones included), whether the goal holds, and each
action's cost; with `fast_downward`, Fast Downward's `lama-first` plans the plain spelling, and its plan must
replay on our task to the goal at the cost it reports, while "no plan" must agree with our own
breadth-first search. `scripts/differential_check.py` runs thousands; `tests/testing/test_differential.py`
a seeded few.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .random_domains import random_task

__all__ = ["Verdict", "check"]


@dataclass
class Verdict:
    """What `check` found: `disagreement` None when every comparison agreed; `steps` compared with pymimir."""

    seed: int
    features: frozenset[str]
    steps: int = 0
    disagreement: str | None = None
    fast_downward: str = "not run"  # "plan replayed", "no plan: agreed", or why it was not compared


def _ours(task: Any, state: int, declared: set[str]) -> frozenset[str]:
    return frozenset("(" + " ".join((n, *a)) + ")" for n, a in task.true_atoms(state) if n in declared)


def _theirs(state: Any, declared: set[str]) -> frozenset[str]:
    return frozenset("(" + " ".join([a.get_predicate().get_name().lower(), *(o.get_name().lower() for o in a.get_terms())]) + ")"
                     for a in state.get_atoms() if a.get_predicate().get_name().lower() in declared)


def _name(action: Any) -> str:
    return "(" + " ".join(str(action).lower().strip("()").split()) + ")"


def check(seed: int, *, walks: int = 3, steps: int = 15, fast_downward: bool = False,
          fd_timeout: float = 20.0, folder: Path | None = None) -> Verdict:
    """Compare our engine with pymimir (and Fast Downward) on `random_task(seed)`; see the module docstring."""
    import warnings

    import pymimir

    from ..worlds.grounding import ground
    from ..worlds.pddl import read_task

    spec = random_task(seed)
    verdict = Verdict(seed, spec.features)
    with tempfile.TemporaryDirectory(prefix="pddlworlds-diff-") as tmp:
        where = folder or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        files = {}
        for name, text in (("domain", spec.domain), ("problem", spec.problem), ("plain-domain", spec.plain_domain),
                           ("plain-problem", spec.plain_problem)):
            files[name] = where / f"{name}.pddl"
            files[name].write_text(text + "\n")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            task = ground(read_task(files["domain"], files["problem"]))
        mproblem = pymimir.Problem(pymimir.Domain(str(files["plain-domain"])), str(files["plain-problem"]))
        declared = {n for n, _ in task.lifted.predicates}
        goal = mproblem.get_goal_condition()
        for walk in range(walks):
            rng = random.Random(seed * 1000 + walk)
            state, mstate = task.init, mproblem.get_initial_state()
            for step in range(steps):
                ours, theirs = _ours(task, state, declared), _theirs(mstate, declared)
                if ours != theirs:
                    verdict.disagreement = (f"walk {walk} step {step}: states differ: only ours {sorted(ours - theirs)[:3]}, "
                                            f"only pymimir {sorted(theirs - ours)[:3]}")
                    return verdict
                if task.is_goal(state) != bool(goal.holds(mstate)):
                    verdict.disagreement = f"walk {walk} step {step}: the goal holds for one reader only"
                    return verdict
                names = {task.actions[i].pddl: i for i in task.applicable(state)}
                mactions = {_name(a): a for a in mstate.generate_applicable_actions()}
                if set(names) != set(mactions):
                    verdict.disagreement = (f"walk {walk} step {step}: applicable actions differ: only ours "
                                            f"{sorted(set(names) - set(mactions))[:3]}, only pymimir "
                                            f"{sorted(set(mactions) - set(names))[:3]}")
                    return verdict
                if not names:
                    break
                chosen = rng.choice(sorted(names))
                state = task.apply(state, names[chosen])
                mstate, mcost = mactions[chosen].apply(mstate, return_cost=True)
                if task.costs and task.actions[names[chosen]].cost != int(mcost):
                    verdict.disagreement = (f"walk {walk} step {step} {chosen}: cost {task.actions[names[chosen]].cost}, "
                                            f"pymimir's {mcost}")
                    return verdict
                verdict.steps += 1
        if fast_downward:
            verdict.fast_downward, verdict.disagreement = _against_fast_downward(task, files, fd_timeout)
    return verdict


def _against_fast_downward(task: Any, files: dict[str, Path], timeout: float) -> tuple[str, str | None]:
    """Fast Downward's lama-first on the plain files: its plan replayed on our task at its cost, or its "no
    plan" matched by our breadth-first search."""
    from ..planning.fd_driver import driver_path
    from ..worlds.search import breadth_first_search

    folder = files["domain"].parent
    plan_file = folder / "sas_plan"
    try:
        run = subprocess.run([sys.executable, str(driver_path()), "--plan-file", str(plan_file), "--alias", "lama-first",
                              str(files["plain-domain"]), str(files["plain-problem"])], cwd=folder,
                             capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return "timed out", None
    if run.returncode in (10, 11, 12) or (run.returncode == 0 and not plan_file.is_file()):
        found = breadth_first_search(task, 200_000)
        if found.status == "solvable":
            return "no plan", f"Fast Downward found no plan (exit {run.returncode}); our search found {found.plan_length} steps"
        return "no plan: agreed", None
    if run.returncode != 0:
        return f"Fast Downward failed (exit {run.returncode})", None
    lines = plan_file.read_text().splitlines()
    reported = int(re.search(r"cost = (\d+)", lines[-1]).group(1))  # type: ignore[union-attr]
    state, cost = task.init, 0
    for number, line in enumerate((x for x in lines if x.startswith("(")), start=1):
        schema, *args = line.strip("()").split()
        index = task.action_index.get((schema, tuple(args)))
        if index is None or not task.is_applicable(state, index):
            return "plan", f"Fast Downward's step {number} {line} is not applicable on our task"
        cost += task.actions[index].cost if task.costs else 1
        state = task.apply(state, index)
    if not task.is_goal(state):
        return "plan", "Fast Downward's plan does not reach our goal"
    if cost != reported:
        return "plan", f"Fast Downward's plan costs {reported}, ours {cost}"
    return "plan replayed", None
