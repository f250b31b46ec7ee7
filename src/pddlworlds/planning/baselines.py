"""Optimal plan baselines for domains of one's own (`--domains-root`), computed by the planner and kept per run.

The shipped domains' optimal lengths are stored with the package (`planners/`); a folder of domains of one's
own has none. `ensure_baselines` plans each problem with an admissible configuration (`fd-opt` by default)
under a time limit and keeps the answers in one CSV file, `optimal_plans.csv` in the run's folder: length,
cost, whether they are proven optimal, and why not when they are not (no plan within the limit, unsolvable,
an error). On a domain with action costs the length is the shortest plan's and the cost the cheapest plan's,
each proven by its own search (`optimum.shortest_and_cheapest`), so that an agent's steps are measured
against the shortest plan and its cost against the cheapest. A resumed run reads the file and plans only the
problems it lacks (and, on a costed domain, those whose row predates the shortest plan's own proof).

    rows = ensure_baselines(run_dir / BASELINES_FILE, "my_domains", {"roads": ["p01", "p02"]}, "agentboard")
    fill_optimal(episode_line, rows)   # optimal_length (and optimal_cost) from a proven row
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..files import atomic_write
from .optimum import shortest_and_cheapest
from .results import Plan
from .solving import solve

__all__ = [
    "BASELINES_FILE",
    "BASELINE_COLUMNS",
    "BASELINE_TIMEOUT",
    "Baseline",
    "ensure_baselines",
    "fill_optimal",
    "plan_baseline",
    "read_baselines",
    "write_baselines",
]

#: The file a run keeps its computed baselines in, in the run's folder.
BASELINES_FILE = "optimal_plans.csv"
#: Seconds the planner gets per problem by default.
BASELINE_TIMEOUT = 60.0
BASELINE_COLUMNS = ["domain", "split", "problem", "length", "cost", "action_costs", "proven", "status", "planner",
                    "timeout_s", "time_s", "message", "length_proven"]

Key = tuple[str, str, str]  # (domain, split, problem)


@dataclass(frozen=True)
class Baseline:
    """One problem's baseline: the shortest plan's length and the cheapest plan's cost, each with whether the
    planner proved it (on a unit-cost domain one plan, both at once)."""

    domain: str
    split: str
    problem: str
    length: int | None
    cost: int | None
    action_costs: bool
    proven: bool  # an admissible search found the plan `cost` is of: optimal (cost-optimal with action costs)
    status: str  # the planner's status ("solved_optimally", "timeout", "unsolvable", "error", ...)
    planner: str
    timeout_s: float
    time_s: float
    message: str = ""
    #: `length` is the proven shortest plan's (by its own search on a domain with action costs).
    length_proven: bool = False

    @property
    def key(self) -> Key:
        return (self.domain, self.split, self.problem)

    def to_row(self) -> dict[str, str]:
        values = {
            "domain": self.domain, "split": self.split, "problem": self.problem,
            "length": "" if self.length is None else str(self.length),
            "cost": "" if self.cost is None else str(self.cost),
            "action_costs": str(self.action_costs).lower(), "proven": str(self.proven).lower(),
            "status": self.status, "planner": self.planner, "timeout_s": f"{self.timeout_s:g}",
            "time_s": f"{self.time_s:.2f}", "message": self.message,
            "length_proven": str(self.length_proven).lower(),
        }
        return values

    @classmethod
    def from_row(cls, row: Mapping[str, str], where: str = "") -> Baseline:
        """A row of the CSV file; a malformed one raises ValueError naming `where` (the file and line)."""
        try:
            return cls(
                row["domain"], row["split"], row["problem"],
                int(row["length"]) if row["length"] else None, int(row["cost"]) if row["cost"] else None,
                row["action_costs"] == "true", row["proven"] == "true", row["status"], row["planner"],
                float(row["timeout_s"]), float(row["time_s"]), row.get("message") or "",
                row.get("length_proven", "false") == "true",
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: not a baseline row ({type(exc).__name__}: {exc})") from None


def plan_baseline(domains_root: str | os.PathLike, domain: str, problem: str, split: str, *,
                  planner: str = "fd-opt", timeout: float = BASELINE_TIMEOUT) -> Baseline:
    """Plan one problem of `domains_root` and say what the answer is worth (never raises for planner
    failures: they are rows whose `proven` is false and whose message says why). On a domain with action
    costs, the shortest plan is proven by a second search (`timeout` each)."""
    shortest, cheapest = shortest_and_cheapest(
        lambda name: solve(domain, problem, planner=name, timeout=timeout, split=split, domains_root=domains_root),
        planner)
    plan = cheapest or shortest  # the plan whose cost is the baseline's
    costs = cheapest is not None
    proven = bool(plan.solved and plan.optimal)
    length_proven = bool(shortest.solved and shortest.optimal)
    if proven:
        message = "proven optimal by an admissible search" + (" (cost-optimal)" if costs else "")
        if costs:
            message += ("; the shortest plan by another" if length_proven
                        else f"; the shortest plan not proven: {_why(shortest)}")
    elif plan.solved:
        message = f"a plan, not proven optimal ({planner} is not admissible)"
    else:
        message = f"not proven: {_why(plan)}"
    return Baseline(plan.domain, split, plan.problem, shortest.length if length_proven or not costs else None,
                    plan.cost, costs, proven, plan.status.value, plan.planner, float(timeout),
                    round(plan.time_s + (shortest.time_s if costs else 0.0), 2), message.splitlines()[0][:300],
                    length_proven)


def _why(plan: Plan) -> str:
    return plan.message or plan.status.value


def read_baselines(path: str | os.PathLike) -> dict[Key, Baseline]:
    """The baselines kept in `path` ({} when there is no such file)."""
    path = Path(path)
    if not path.is_file():
        return {}
    out: dict[Key, Baseline] = {}
    with open(path, newline="") as handle:
        for line_no, row in enumerate(csv.DictReader(handle), start=2):
            baseline = Baseline.from_row(row, f"{path}, line {line_no}")
            out[baseline.key] = baseline
    return out


def write_baselines(path: str | os.PathLike, baselines: Mapping[Key, Baseline]) -> None:
    """Write every baseline to `path` atomically, in (domain, split, problem) order."""

    def write(handle: IO[str]) -> None:
        writer = csv.DictWriter(handle, fieldnames=BASELINE_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for key in sorted(baselines):
            writer.writerow(baselines[key].to_row())

    atomic_write(path, write)


def ensure_baselines(
    path: str | os.PathLike,
    domains_root: str | os.PathLike,
    problems: Mapping[str, Sequence[str]],
    split: str,
    *,
    planner: str = "fd-opt",
    timeout: float = BASELINE_TIMEOUT,
    note: Callable[[str], None] | None = None,
) -> dict[Key, Baseline]:
    """The baselines of every (domain, problem) of `problems`: those in `path` read back, the others
    planned now (one `timeout` each) and added to `path` as each ends, so a stopped run keeps them."""
    # a costed row written before the shortest plan had its own proof holds the cheapest plan's length
    baselines = {key: b for key, b in read_baselines(path).items() if b.length_proven or not b.action_costs
                 or not b.proven}
    for domain, names in problems.items():
        for problem in names:
            if (domain, split, problem) in baselines:
                continue
            baseline = plan_baseline(domains_root, domain, problem, split, planner=planner, timeout=timeout)
            baselines[baseline.key] = baseline
            write_baselines(path, baselines)
            if note is not None:
                said = f"length {baseline.length}" + (f", cost {baseline.cost}" if baseline.action_costs else "")
                note(f"optimal plan of {domain}/{problem}: "
                     + (said if baseline.proven else baseline.message))
    return baselines


def fill_optimal(line: dict[str, Any], baselines: Mapping[Key, Baseline]) -> dict[str, Any]:
    """`line` (an episode's stored line) with its `optimal_length` (the proven shortest plan's) and, in a
    domain with action costs, its `optimal_cost` (the proven cheapest plan's), each from a baseline that
    proves it where the line has none; what no baseline proves is left unknown."""
    baseline = baselines.get((line.get("domain"), line.get("split"), line.get("problem")))
    if baseline is None:
        return line
    shortest_proven = baseline.length_proven or (baseline.proven and not baseline.action_costs)
    if shortest_proven and line.get("optimal_length") is None:
        line["optimal_length"] = baseline.length
    if baseline.action_costs and baseline.proven and line.get("optimal_cost") is None:
        line["optimal_cost"] = baseline.cost
    return line
