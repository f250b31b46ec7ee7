"""The stored expert plans and optimal lengths under `planners/` (data made by the planner scripts)."""

from __future__ import annotations

import csv
from pathlib import Path

from ..worlds.catalogue import data_dir

__all__ = ["cheapest_plan_file", "index_file", "optimal_costs", "optimal_lengths", "plan_file", "read_index"]


def index_file() -> Path:
    return data_dir("planners") / "index.csv"


def read_index(path: str | Path | None = None) -> list[dict[str, str]]:
    """Rows of the plan index; empty when no plans are stored yet."""
    try:
        path = Path(path) if path is not None else index_file()
    except FileNotFoundError:
        return []
    if not path.is_file():
        return []
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def optimal_lengths(domain: str, split: str) -> dict[str, int]:
    """Problem -> stored plan length (optimal where the index says so) for one domain and split."""
    return {
        row["problem"]: int(row["length"])
        for row in read_index()
        if row.get("domain") == domain and row.get("split") == split and row.get("length", "").isdigit()
    }


def optimal_costs(domain: str, split: str) -> dict[str, int]:
    """Problem -> the cheapest plan's cost, for the problems of a domain with action costs (`:metric minimize
    (total-cost)`) whose index row has one (the `cost` column); a unit-cost domain has none, its length is
    its cost. `optimal_lengths` stays the shortest plan's length on every domain, so steps are compared
    with the shortest plan and cost with the cheapest one."""
    return {
        row["problem"]: int(row["cost"])
        for row in read_index()
        if row.get("domain") == domain and row.get("split") == split and (row.get("cost") or "").isdigit()
    }


def plan_file(domain: str, problem: str) -> Path:
    """Problem names are unique within a domain across splits, so one folder per domain holds them all."""
    return data_dir("planners") / domain / f"{problem}.plan"


def cheapest_plan_file(domain: str, problem: str) -> Path:
    """Where a domain with action costs keeps the cheapest plan, beside `plan_file`'s shortest one."""
    return data_dir("planners") / domain / f"{problem}.cheapest.plan"
