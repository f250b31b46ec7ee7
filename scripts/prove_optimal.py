#!/usr/bin/env python3
"""Compute and prove optimal (unit-cost) plan lengths for the public PDDL problems.

For every problem under ``pddl_domains/<domain>/problems/<split>/*.pddl`` this script
runs the Fast Downward build bundled with ``up-fast-downward`` directly (translator,
then the ``downward`` search binary) with an optimal configuration, under a wall-clock
timeout that kills the whole process group, and records the result in
``planners/index.csv`` plus one IPC-format plan file ``planners/<domain>/<problem>.plan``.

A length is marked ``optimal=true`` only if the configuration is admissible (A* with an
admissible heuristic, optionally with optimality-preserving stubborn-set pruning), the
search finished with "Solution found", and the plan was validated against the original
task with unified-planning.

Only the ``agentboard`` split runs unless ``--splits`` says otherwise. The index is
updated after every problem (locked read-modify-write under ``index.csv.lock``, atomic
replace; rows of other problems and splits are kept), so partial results survive an
interruption; rows already in the index are skipped (``--retry-unproven`` reruns rows
with ``optimal=false``, ``--force`` reruns all).  ``--check-satisficing`` instead runs ``lama-first`` and checks
that its plan is never shorter than the recorded optimum (``planners/lama_first_check.csv``).

Examples::

    nice -n 15 python scripts/prove_optimal.py --config lmcut --timeout 60
    nice -n 15 python scripts/prove_optimal.py --config lmcut-acss --timeout 900 \\
        --retry-unproven --only tyreworld/p04
    nice -n 15 python scripts/prove_optimal.py --check-satisficing --timeout 60
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import resource
import signal
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import up_fast_downward

from pddlworlds.planning import (
    PLANNERS,
    get_planner,
    parse_plan,
    planner_version,
    read_index,
    update_index,
    validate_plan,
    write_plan_file,
)
from pddlworlds.planning.configs import DRIVER
from pddlworlds.planning.store import index_file
from pddlworlds.planning.worker import run_killable
from pddlworlds.worlds.catalogue import DEFAULT_SPLIT, domains
from pddlworlds.worlds.pddl import domain_constants, normalise_domain, normalise_problem

OUT_DIR = index_file().parent
INDEX = index_file()
CHECK_FILE = OUT_DIR / "lama_first_check.csv"
FD_ROOT = Path(up_fast_downward.__file__).resolve().parent / "downward"
FD_BIN = FD_ROOT / "builds" / "release" / "bin"
DOWNWARD = FD_BIN / "downward"

CHECK_COLUMNS = [
    "domain", "split", "problem", "lama_first_length", "index_length", "index_optimal", "consistent",
    "solve_time_s",
]

@dataclasses.dataclass(frozen=True)
class Config:
    """A planner configuration of `pddlworlds.planning` (the one table of them) as this script runs it: its
    arguments to the search binary itself, under this script's short name."""

    name: str
    search_args: tuple[str, ...]
    admissible: bool
    proof: str  # why a finished run proves optimality (empty if it does not)

    @property
    def label(self) -> str:
        """Human-readable configuration string as stored in the index."""
        return " ".join(" ".join(self.search_args).split())


def from_planner(planner: str, name: str) -> Config:
    """The registered configuration `planner` for the search binary: its search string, or its alias
    expanded by the bundled driver (so ``lama-first`` matches the driver's exactly)."""
    config = get_planner(planner)
    if config.engine != DRIVER:
        raise ValueError(f"{planner}: this script runs Fast Downward's own configurations, not {config.engine}")
    if "alias" in config.params:
        sys.path.insert(0, str(FD_ROOT))
        try:
            from driver import aliases  # type: ignore[import-not-found]
        finally:
            sys.path.pop(0)
        args = tuple(aliases.ALIASES[str(config.params["alias"])])
    else:
        args = tuple(config.driver_args(None))
    return Config(name, args, config.admissible, config.proof)


#: `--config`: the admissible searches `planning.configs` registers for proofs ("fd-opt-lmcut" is "lmcut").
CONFIGS: dict[str, Config] = {
    name.removeprefix("fd-opt-"): from_planner(name, name.removeprefix("fd-opt-"))
    for name in PLANNERS if name.startswith("fd-opt-") and PLANNERS[name].proof
}


def _lama_first() -> Config:
    """The upper bound when a proof fails: the registry's ``fd-sat`` (lama-first)."""
    return from_planner("fd-sat", "lama-first")


@dataclasses.dataclass(frozen=True)
class Task:
    """One public problem."""

    domain: str
    split: str
    problem: str
    domain_file: Path
    problem_file: Path

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.domain, self.split, self.problem)


@dataclasses.dataclass
class Outcome:
    """Result of one planner run (translator + search)."""

    status: str  # solved | unsolvable | timeout | memout | error
    plan: list[str]
    elapsed_s: float  # wall-clock seconds
    cpu_s: float = 0.0  # user+system CPU seconds of the planner processes
    expanded: int | None = None
    f_bound: int | None = None  # last f-layer A* reached (lower bound on the optimum)
    peak_kb: int | None = None
    message: str = ""


def discover_tasks(domain_names: Sequence[str] | None) -> list[Task]:
    """Every shipped problem, in the catalogue's order (domains, splits, problems in natural order)."""
    return [Task(name, split, problem, d.domain_file, d.problem_file(problem, split))
            for name, d in domains().items() if not domain_names or name in domain_names
            for split in d.splits() for problem in d.problems(split)]


# ----------------------------------------------------------------------------- processes

def run_limited(cmd: Sequence[str], timeout_s: float, cwd: Path, stdin_path: Path | None, log_path: Path,
                env: dict[str, str] | None = None, memory_mb: int | None = None) -> tuple[int | None, float, float]:
    """``cmd`` niced and memory-capped under the library's killable runner: (exit code or None, wall s, cpu s)."""
    def limit() -> None:
        os.nice(15)
        if memory_mb:
            resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 1024 * 1024,) * 2)

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_before = usage.ru_utime + usage.ru_stime
    start = time.monotonic()
    with open(log_path, "w") as log, (open(stdin_path) if stdin_path else open(os.devnull)) as stdin:
        run = run_killable(cmd, max(timeout_s, 0.1), cwd=cwd, stdout=log, stdin=stdin, env=env, preexec_fn=limit)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return run.returncode, time.monotonic() - start, usage.ru_utime + usage.ru_stime - cpu_before


def _last_int(pattern: str, text: str) -> int | None:
    found = re.findall(pattern, text)
    return int(found[-1]) if found else None


def solve(task: Task, config: Config, timeout_s: float, memory_mb: int) -> Outcome:
    """Translate and search one task with ``config`` within ``timeout_s`` in all; parse the result."""
    with tempfile.TemporaryDirectory(prefix="prove_optimal_") as tmp:
        work = Path(tmp)
        domain, problem = work / "domain.pddl", work / "problem.pddl"
        domain_text, _ = normalise_domain(task.domain_file.read_text(), task.domain_file)
        domain.write_text(domain_text)
        problem.write_text(normalise_problem(task.problem_file.read_text(),
                                             domain_constants(domain_text, task.domain_file), task.problem_file)[0])
        env = dict(os.environ, PYTHONPATH=str(FD_BIN))
        code, wall, cpu = run_limited(
            [sys.executable, "-m", "fast_downward.translate", str(domain), str(problem),
             "--sas-file", "output.sas"],
            timeout_s, work, None, work / "translate.log", env, memory_mb)
        if code is None:
            return Outcome("timeout", [], wall, cpu, message="translator timed out")
        if code != 0:
            tail = (work / "translate.log").read_text()[-300:]
            return Outcome("error", [], wall, cpu, message=f"translate exit {code}: {tail}")
        code, s_wall, s_cpu = run_limited(
            [str(DOWNWARD), *config.search_args, "--internal-plan-file", "plan"],
            timeout_s - wall, work, work / "output.sas", work / "search.log", None, memory_mb)
        log = (work / "search.log").read_text(errors="replace")
        plan_file = work / "plan"
        plan = [line.strip() for line in plan_file.read_text().splitlines()
                if line.strip() and not line.startswith(";")] if plan_file.exists() else []
        outcome = Outcome("error", [], wall + s_wall, cpu + s_cpu,
                          expanded=_last_int(r"Expanded (\d+) state", log),
                          f_bound=_last_int(r"\] f = (\d+)", log),
                          peak_kb=_last_int(r"Peak memory: (\d+) KB", log))
        if code is None:
            outcome.status, outcome.message = "timeout", "wall-clock timeout"
        elif "Solution found" in log and code == 0 and plan:
            outcome.status, outcome.plan = "solved", plan
        elif "Completely explored state space" in log or code in (10, 11):
            outcome.status, outcome.message = "unsolvable", "no solution exists"
        elif code in (22, 24) or "Failed to allocate memory" in log or "bad_alloc" in log:
            outcome.status, outcome.message = "memout", f"out of memory ({memory_mb} MB)"
        elif "Search stopped without finding a solution" in log:
            outcome.message = "search stopped without a solution"
        else:
            outcome.message = f"exit {code}: {log[-300:]}"
        return outcome


# ----------------------------------------------------------------------------- validation & output

def validate(task: Task, plan: list[str]) -> bool:
    """The library's check: the plan replays as text on the problem's world and unified-planning accepts it."""
    return validate_plan(task.domain, task.problem, "\n".join(plan), task.split).valid


def write_plan(task: Task, plan: list[str], comments: Sequence[str]) -> Path:
    """``planners/<domain>/<problem>.plan`` in IPC format, by the library's plan writer."""
    return write_plan_file(task.domain, task.problem, parse_plan("\n".join(plan)), comments)


def read_rows(path: Path) -> dict[tuple[str, str, str], dict[str, str]]:
    """Rows of an index-like CSV keyed by (domain, split, problem)."""
    return {(r["domain"], r["split"], r["problem"]): r for r in read_index(path)}


def planner_name() -> str:
    """Name and version of the Fast Downward build used, as the index's ``planner`` column has it."""
    return planner_version("fd-opt")


def describe_failure(config: Config, timeout_s: float, outcome: Outcome) -> str:
    """A note on what an unsuccessful optimal run established."""
    note = (f"{config.name}: {outcome.status} after {outcome.elapsed_s:.0f}s wall / "
            f"{outcome.cpu_s:.0f}s cpu (limit {timeout_s:.0f}s wall)")
    if config.admissible and outcome.f_bound is not None:
        note += f", lower bound >= {outcome.f_bound} (last A* f-layer)"
    return note


# ----------------------------------------------------------------------------- main loops

def _row(task: Task, length: int | None, optimal: bool, method: str, time_s: float, notes: str) -> dict[str, str]:
    return {"domain": task.domain, "split": task.split, "problem": task.problem,
                "length": "" if length is None else str(length), "optimal": str(optimal).lower(),
                "planner": planner_name(), "method": method, "solve_time_s": f"{time_s:.1f}", "notes": notes}


def prove(tasks: Iterable[Task], config: Config, timeout_s: float, memory_mb: int,
          retry_unproven: bool, force: bool, fallback: Config | None) -> None:
    """Run ``config`` on every task not yet settled in the index, updating it after each."""
    from tqdm import tqdm

    rows = read_rows(INDEX)
    todo = [t for t in tasks if force or t.key not in rows
            or (retry_unproven and rows[t.key]["optimal"] != "true")]
    bar = tqdm(todo, unit="problem")
    for task in bar:
        bar.set_description(f"{task.domain}/{task.problem} [{config.name}]")
        outcome = solve(task, config, timeout_s, memory_mb)
        old = read_rows(INDEX).get(task.key)
        earlier = old["notes"] if old and old["optimal"] != "true" and old["notes"] else ""
        if outcome.status == "solved":
            if not validate(task, outcome.plan):
                raise RuntimeError(f"invalid plan for {task.key} with {config.name}")
            if config.admissible:
                how = (f"{config.proof}; expanded {outcome.expanded} states, cpu {outcome.cpu_s:.1f}s, "
                       f"peak {outcome.peak_kb} KB; plan validated")
            else:
                how = f"{config.name} (satisficing): upper bound only"
            if earlier:
                how += f"; earlier: {earlier}"
            write_plan(task, outcome.plan, ["optimal" if config.admissible else "not proven optimal",
                                            f"{planner_name()}: {config.label}"])
            row = _row(task, len(outcome.plan), config.admissible, config.label, outcome.elapsed_s, how)
        else:
            note = describe_failure(config, timeout_s, outcome)
            tqdm.write(f"{task.domain}/{task.problem}: {note}")
            if old and old["length"]:  # keep the earlier (unproven) result, remember what was tried
                row = dict(old, notes=f"{earlier}; {note}" if earlier else note)
            else:
                plan: list[str] = []
                fb_time = 0.0
                if fallback:
                    fb = solve(task, fallback, timeout_s, memory_mb)
                    if fb.status == "solved" and validate(task, fb.plan):
                        plan, fb_time = fb.plan, fb.elapsed_s
                        write_plan(task, plan, ["not proven optimal", f"{planner_name()}: {fallback.label}"])
                        note += f"; length is an upper bound from {fallback.name}"
                method = fallback.label if plan and fallback else config.label
                row = _row(task, len(plan) if plan else None, False, method, fb_time, note)
        update_index([row], INDEX)


def check_satisficing(tasks: Iterable[Task], timeout_s: float, memory_mb: int, force: bool) -> bool:
    """Run lama-first and check its plan length is >= the optimum in the index."""
    from tqdm import tqdm

    lama = _lama_first()
    index = read_rows(INDEX)
    done = read_rows(CHECK_FILE)
    all_ok = True
    for task in tqdm(list(tasks), unit="problem", desc="lama-first check"):
        if task.key in done and not force:
            all_ok &= done[task.key]["consistent"] == "true"
            continue
        outcome = solve(task, lama, timeout_s, memory_mb)
        ref = index.get(task.key, {})
        length = len(outcome.plan) if outcome.status == "solved" and validate(task, outcome.plan) else None
        consistent = length is not None and ref.get("length", "") != "" and length >= int(ref["length"])
        all_ok &= consistent
        if not consistent:
            tqdm.write(f"INCONSISTENT {task.key}: lama-first {length}, index {ref.get('length')}")
        update_index([{
            "domain": task.domain, "split": task.split, "problem": task.problem,
            "lama_first_length": "" if length is None else str(length),
            "index_length": ref.get("length", ""), "index_optimal": ref.get("optimal", ""),
            "consistent": str(consistent).lower(), "solve_time_s": f"{outcome.elapsed_s:.1f}"}],
            CHECK_FILE, columns=CHECK_COLUMNS)
    return all_ok


def _exit_on_signal(signum: int, _frame: object) -> None:
    """Turn SIGTERM/SIGHUP into SystemExit so that ``run_killable`` still kills its group."""
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="lmcut", choices=sorted(CONFIGS),
                        help="optimal Fast Downward configuration (default: lmcut)")
    parser.add_argument("--timeout", type=float, default=60.0, help="wall-clock seconds per problem")
    parser.add_argument("--memory-mb", type=int, default=8000, help="address-space limit per process")
    parser.add_argument("--domains", nargs="*", help="restrict to these domains")
    parser.add_argument("--splits", nargs="*", default=[DEFAULT_SPLIT],
                        help="problem splits to run (default: agentboard, the public problems)")
    parser.add_argument("--only", nargs="*", metavar="DOMAIN/PROBLEM", help="restrict to these problems")
    parser.add_argument("--retry-unproven", action="store_true",
                        help="rerun problems whose index row is not proven optimal")
    parser.add_argument("--force", action="store_true", help="rerun problems already in the index")
    parser.add_argument("--no-fallback", action="store_true",
                        help="do not run lama-first for an upper bound when the optimal run fails")
    parser.add_argument("--check-satisficing", action="store_true",
                        help="run lama-first and check its lengths against the index")
    parser.add_argument("--list-configs", action="store_true", help="print the configurations and exit")
    args = parser.parse_args(argv)

    if args.list_configs:
        for cfg in CONFIGS.values():
            print(f"{cfg.name:16} {cfg.label}")
        return 0
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _exit_on_signal)
    tasks = [t for t in discover_tasks(args.domains) if t.split in args.splits]
    if args.only:
        wanted = set(args.only)
        tasks = [t for t in tasks if f"{t.domain}/{t.problem}" in wanted]
    if args.check_satisficing:
        ok = check_satisficing(tasks, args.timeout, args.memory_mb, args.force)
        print("lama-first lengths consistent with index:", ok)
        return 0 if ok else 1
    fallback = None if args.no_fallback else _lama_first()
    prove(tasks, CONFIGS[args.config], args.timeout, args.memory_mb, args.retry_unproven, args.force,
          fallback)
    return 0


if __name__ == "__main__":
    sys.exit(main())
