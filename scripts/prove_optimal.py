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

The index is rewritten atomically after every problem, so partial results survive an
interruption; rows already in the index are skipped (``--retry-unproven`` reruns rows
with ``optimal=false``).  ``--check-satisficing`` instead runs ``lama-first`` and checks
that its plan is never shorter than the recorded optimum (``planners/lama_first_check.csv``).

Examples::

    nice -n 15 python scripts/prove_optimal.py --config lmcut --timeout 60
    nice -n 15 python scripts/prove_optimal.py --config lmcut-acss --timeout 900 \\
        --retry-unproven --only tyreworld/p04
    nice -n 15 python scripts/prove_optimal.py --check-satisficing --timeout 60
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterable, Sequence

import up_fast_downward

REPO = Path(__file__).resolve().parent.parent
DOMAINS_DIR = REPO / "pddl_domains"
OUT_DIR = REPO / "planners"
INDEX = OUT_DIR / "index.csv"
CHECK_FILE = OUT_DIR / "lama_first_check.csv"
FD_ROOT = Path(up_fast_downward.__file__).resolve().parent / "downward"
FD_BIN = FD_ROOT / "builds" / "release" / "bin"
DOWNWARD = FD_BIN / "downward"

INDEX_COLUMNS = [
    "domain", "split", "problem", "length", "optimal", "planner", "method", "solve_time_s", "notes",
]
CHECK_COLUMNS = [
    "domain", "split", "problem", "lama_first_length", "index_length", "index_optimal", "consistent",
    "solve_time_s",
]

MERGE_AND_SHRINK = (
    "merge_and_shrink(shrink_strategy=shrink_bisimulation(greedy=false),"
    "merge_strategy=merge_sccs(order_of_sccs=topological,"
    "merge_selector=score_based_filtering(scoring_functions=[goal_relevance(),dfp(),total_order()])),"
    "label_reduction=exact(before_shrinking=true,before_merging=false),"
    "max_states=50k,threshold_before_merge=1)"
)


@dataclasses.dataclass(frozen=True)
class Config:
    """A named Fast Downward search configuration."""

    name: str
    search_args: tuple[str, ...]
    admissible: bool
    proof: str  # why a finished run proves optimality (empty if it does not)

    @property
    def label(self) -> str:
        """Human-readable configuration string as stored in the index."""
        return " ".join(" ".join(self.search_args).split())


def _astar(name: str, search: str, proof: str) -> Config:
    return Config(name, ("--search", search), True, proof)


_ASTAR_PROOF = "A* with admissible heuristic {h} finished"
_ACSS = ("; atom-centric stubborn sets prune only non-optimal interleavings "
         "(optimality-preserving partial-order reduction)")

CONFIGS: dict[str, Config] = {c.name: c for c in [
    _astar("lmcut", "astar(lmcut())", _ASTAR_PROOF.format(h="LM-cut")),
    _astar("lmcut-acss", "astar(lmcut(),pruning=atom_centric_stubborn_sets())",
           _ASTAR_PROOF.format(h="LM-cut") + _ACSS),
    _astar("ms-bisim", f"astar({MERGE_AND_SHRINK})",
           _ASTAR_PROOF.format(h="merge-and-shrink (bisimulation, 50k states)")),
    _astar("ms-bisim-acss", f"astar({MERGE_AND_SHRINK},pruning=atom_centric_stubborn_sets())",
           _ASTAR_PROOF.format(h="merge-and-shrink (bisimulation, 50k states)") + _ACSS),
    _astar("ipdb", "astar(ipdb())", _ASTAR_PROOF.format(h="iPDB")),
    _astar("cegar", "astar(cegar())", _ASTAR_PROOF.format(h="additive Cartesian CEGAR")),
    _astar("max-lmcut-cegar", "astar(max([lmcut(),cegar()]))",
           _ASTAR_PROOF.format(h="max(LM-cut, CEGAR)")),
    _astar("blind", "astar(blind())", _ASTAR_PROOF.format(h="blind")),
]}


def _lama_first() -> Config:
    """The ``lama-first`` alias, taken from the bundled driver so that it matches exactly."""
    sys.path.insert(0, str(FD_ROOT))
    try:
        from driver import aliases  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    return Config("lama-first", tuple(aliases.ALIASES["lama-first"]), False, "")


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
    """Result of one planner run."""

    status: str  # solved | unsolvable | timeout | memout | error
    plan: list[str]
    elapsed_s: float
    expanded: int | None = None
    f_bound: int | None = None  # last f-layer A* reached (lower bound on the optimum)
    message: str = ""


def natural_key(text: str) -> list[object]:
    """Sort key that orders ``p2`` before ``p10``."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def discover_tasks(domains: Sequence[str] | None) -> list[Task]:
    """All problems under ``pddl_domains``, in a stable natural order."""
    tasks: list[Task] = []
    for domain_dir in sorted(DOMAINS_DIR.iterdir()):
        if not (domain_dir / "domain.pddl").is_file():
            continue
        if domains and domain_dir.name not in domains:
            continue
        for split_dir in sorted((domain_dir / "problems").iterdir()):
            for pfile in sorted(split_dir.glob("*.pddl"), key=lambda p: natural_key(p.stem)):
                tasks.append(Task(domain_dir.name, split_dir.name, pfile.stem,
                                  domain_dir / "domain.pddl", pfile))
    return tasks


# ----------------------------------------------------------------------------- PDDL helpers

def _strip_comments(text: str) -> str:
    return re.sub(r";[^\n]*", "", text)


def domain_constants(domain_text: str) -> set[str]:
    """Names declared in the domain's ``(:constants ...)`` block."""
    match = re.search(r"\(:constants(.*?)\)", _strip_comments(domain_text), re.S | re.I)
    if not match:
        return set()
    tokens = match.group(1).split()
    names, skip_next = set(), False
    for tok in tokens:
        if skip_next:
            skip_next = False
        elif tok == "-":
            skip_next = True
        else:
            names.add(tok.lower())
    return names


def normalise_problem(domain_text: str, problem_text: str) -> str:
    """Drop object declarations that repeat domain constants (FD and UP reject them).

    Tyreworld's public problems declare ``wrench jack pump - tool`` although the domain
    declares them as constants; dropping the duplicate declaration leaves the task unchanged.
    """
    constants = domain_constants(domain_text)
    text = _strip_comments(problem_text)
    match = re.search(r"\(:objects(.*?)\)", text, re.S | re.I)
    if not constants or not match:
        return text
    groups: list[tuple[list[str], str | None]] = []
    current: list[str] = []
    tokens = iter(match.group(1).split())
    for tok in tokens:
        if tok == "-":
            groups.append((current, next(tokens)))
            current = []
        else:
            current.append(tok)
    if current:
        groups.append((current, None))
    lines = []
    for names, typ in groups:
        kept = [n for n in names if n.lower() not in constants]
        if kept:
            lines.append(" ".join(kept) + (f" - {typ}" if typ else ""))
    body = "\n  ".join(lines)
    return text[:match.start()] + f"(:objects\n  {body}\n)" + text[match.end():]


# ----------------------------------------------------------------------------- processes

def run_killable(cmd: Sequence[str], timeout_s: float, cwd: Path, stdin_path: Path | None,
                 log_path: Path, env: dict[str, str] | None = None,
                 memory_mb: int | None = None) -> tuple[int | None, float]:
    """Run ``cmd`` in its own process group; SIGKILL the whole group at the timeout.

    Returns ``(returncode, elapsed_s)``; ``returncode`` is ``None`` on timeout.
    """
    def limit() -> None:
        os.nice(15)
        if memory_mb:
            limit_b = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit_b, limit_b))

    start = time.monotonic()
    with open(log_path, "w") as log, \
            (open(stdin_path) if stdin_path else open(os.devnull)) as stdin:
        proc = subprocess.Popen(list(cmd), cwd=cwd, stdin=stdin, stdout=log, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True, preexec_fn=limit)
        try:
            code: int | None = proc.wait(timeout=max(timeout_s, 0.1))
        except subprocess.TimeoutExpired:
            code = None
        finally:
            try:  # no child may outlive its run, whatever happened
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    return code, time.monotonic() - start


def _last_int(pattern: str, text: str) -> int | None:
    found = re.findall(pattern, text)
    return int(found[-1]) if found else None


def solve(task: Task, config: Config, timeout_s: float, memory_mb: int) -> Outcome:
    """Translate and search one task with ``config``; parse the result."""
    with tempfile.TemporaryDirectory(prefix="prove_optimal_") as tmp:
        work = Path(tmp)
        problem = work / "problem.pddl"
        problem.write_text(normalise_problem(task.domain_file.read_text(),
                                             task.problem_file.read_text()))
        env = dict(os.environ, PYTHONPATH=str(FD_BIN))
        code, t_translate = run_killable(
            [sys.executable, "-m", "fast_downward.translate", str(task.domain_file), str(problem),
             "--sas-file", "output.sas"],
            timeout_s, work, None, work / "translate.log", env, memory_mb)
        if code is None:
            return Outcome("timeout", [], t_translate, message="translator timed out")
        if code != 0:
            tail = (work / "translate.log").read_text()[-300:]
            return Outcome("error", [], t_translate, message=f"translate exit {code}: {tail}")
        code, t_search = run_killable(
            [str(DOWNWARD), *config.search_args, "--internal-plan-file", "plan"],
            timeout_s - t_translate, work, work / "output.sas", work / "search.log", None, memory_mb)
        elapsed = t_translate + t_search
        log = (work / "search.log").read_text(errors="replace")
        expanded = _last_int(r"Expanded (\d+) state", log)
        f_bound = _last_int(r"\] f = (\d+)", log)
        plan_file = work / "plan"
        plan = [line.strip() for line in plan_file.read_text().splitlines()
                if line.strip() and not line.startswith(";")] if plan_file.exists() else []
        if code is None:
            return Outcome("timeout", [], elapsed, expanded, f_bound, "wall-clock timeout")
        if "Solution found" in log and code == 0 and plan:
            return Outcome("solved", plan, elapsed, expanded, f_bound)
        if "Completely explored state space" in log or code in (10, 11):
            return Outcome("unsolvable", [], elapsed, expanded, f_bound, "no solution exists")
        if code in (22, 24) or "Memory limit" in log or "bad_alloc" in log:
            return Outcome("memout", [], elapsed, expanded, f_bound, f"out of memory ({memory_mb} MB)")
        if "Search stopped without finding a solution" in log:
            return Outcome("error", [], elapsed, expanded, f_bound, "search stopped without a solution")
        return Outcome("error", [], elapsed, expanded, f_bound, f"exit {code}: {log[-300:]}")


# ----------------------------------------------------------------------------- validation & output

def validate(task: Task, plan: list[str]) -> bool:
    """Check the plan on the original task with unified-planning's validator."""
    import unified_planning as up
    from unified_planning.shortcuts import PlanValidator
    from unified_planning.io import PDDLReader

    up.shortcuts.get_environment().credits_stream = None
    with tempfile.TemporaryDirectory(prefix="prove_optimal_val_") as tmp:
        problem_path = Path(tmp) / "problem.pddl"
        problem_path.write_text(normalise_problem(task.domain_file.read_text(),
                                                  task.problem_file.read_text()))
        reader = PDDLReader()
        problem = reader.parse_problem(str(task.domain_file), str(problem_path))
        up_plan = reader.parse_plan_string(problem, "\n".join(plan))
        with PlanValidator(problem_kind=problem.kind) as validator:
            return bool(validator.validate(problem, up_plan).status.name == "VALID")


def write_plan(task: Task, plan: list[str], config: Config, optimal: bool) -> Path:
    """Write ``planners/<domain>/<problem>.plan`` in IPC format."""
    path = OUT_DIR / task.domain / f"{task.problem}.plan"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [line.lower() for line in plan]
    tag = "optimal" if optimal else "not proven optimal"
    tmp = path.with_suffix(".plan.tmp")
    tmp.write_text("\n".join(lines) + f"\n; cost = {len(lines)} (unit cost)\n"
                   f"; {tag}; fast downward {config.label}\n")
    os.replace(tmp, path)
    return path


def read_csv(path: Path) -> dict[tuple[str, str, str], dict[str, str]]:
    """Rows of an index-like CSV keyed by (domain, split, problem)."""
    if not path.exists():
        return {}
    with open(path, newline="") as fh:
        return {(r["domain"], r["split"], r["problem"]): r for r in csv.DictReader(fh)}


def write_csv(path: Path, columns: list[str], rows: dict[tuple[str, str, str], dict[str, str]]) -> None:
    """Atomically rewrite a CSV, rows in natural order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for key in sorted(rows, key=lambda k: (k[0], k[1], natural_key(k[2]))):
            writer.writerow({c: rows[key].get(c, "") for c in columns})
    os.replace(tmp, path)


def planner_name() -> str:
    """Name and version of the Fast Downward build used."""
    version = re.search(r'__version__ = "([^"]+)"', (FD_ROOT / "driver" / "version.py").read_text())
    return f"fast-downward {version.group(1) if version else '?'} (up-fast-downward)"


def describe_failure(config: Config, timeout_s: float, outcome: Outcome) -> str:
    """A note on what an unsuccessful optimal run established."""
    note = f"{config.name}: {outcome.status} after {outcome.elapsed_s:.0f}s (limit {timeout_s:.0f}s)"
    if config.admissible and outcome.f_bound is not None:
        note += f", lower bound >= {outcome.f_bound} (last A* f-layer)"
    return note


# ----------------------------------------------------------------------------- main loops

def prove(tasks: Iterable[Task], config: Config, timeout_s: float, memory_mb: int,
          retry_unproven: bool, fallback: Config | None) -> None:
    """Run ``config`` on every task not yet settled in the index, updating it after each."""
    from tqdm import tqdm

    rows = read_csv(INDEX)
    todo = [t for t in tasks
            if t.key not in rows or (retry_unproven and rows[t.key]["optimal"] != "true")]
    bar = tqdm(todo, unit="problem")
    for task in bar:
        bar.set_description(f"{task.domain}/{task.problem} [{config.name}]")
        outcome = solve(task, config, timeout_s, memory_mb)
        old = rows.get(task.key)
        if outcome.status == "solved":
            if not validate(task, outcome.plan):
                raise RuntimeError(f"invalid plan for {task.key} with {config.name}")
            optimal = config.admissible
            how = (f"{config.proof}; expanded {outcome.expanded} states; plan validated"
                   if optimal else f"{config.name} (satisficing): upper bound only")
            if old and old["notes"] and old["optimal"] != "true":
                how += f"; earlier: {old['notes']}"
            write_plan(task, outcome.plan, config, optimal)
            rows[task.key] = dict(domain=task.domain, split=task.split, problem=task.problem,
                                  length=str(len(outcome.plan)), optimal=str(optimal).lower(),
                                  planner=planner_name(), method=config.label,
                                  solve_time_s=f"{outcome.elapsed_s:.1f}", notes=how)
        else:
            note = describe_failure(config, timeout_s, outcome)
            tqdm.write(f"{task.domain}/{task.problem}: {note}")
            if old:  # keep the earlier (unproven) row, remember what was tried
                old["notes"] = f"{old['notes']}; {note}" if old["notes"] else note
            else:
                plan: list[str] = []
                fb_time = 0.0
                if fallback:
                    fb = solve(task, fallback, timeout_s, memory_mb)
                    if fb.status == "solved" and validate(task, fb.plan):
                        plan, fb_time = fb.plan, fb.elapsed_s
                        write_plan(task, plan, fallback, False)
                        note += f"; length is an upper bound from {fallback.name}"
                rows[task.key] = dict(domain=task.domain, split=task.split, problem=task.problem,
                                      length=str(len(plan)) if plan else "", optimal="false",
                                      planner=planner_name(),
                                      method=fallback.label if plan and fallback else config.label,
                                      solve_time_s=f"{fb_time:.1f}", notes=note)
        write_csv(INDEX, INDEX_COLUMNS, rows)


def check_satisficing(tasks: Iterable[Task], timeout_s: float, memory_mb: int) -> bool:
    """Run lama-first and check its plan length is >= the optimum in the index."""
    from tqdm import tqdm

    lama = _lama_first()
    index = read_csv(INDEX)
    rows = read_csv(CHECK_FILE)
    all_ok = True
    for task in tqdm(list(tasks), unit="problem", desc="lama-first check"):
        if task.key in rows:
            all_ok &= rows[task.key]["consistent"] == "true"
            continue
        outcome = solve(task, lama, timeout_s, memory_mb)
        ref = index.get(task.key, {})
        length = len(outcome.plan) if outcome.status == "solved" and validate(task, outcome.plan) else None
        consistent = (length is not None and ref.get("length", "") != ""
                      and length >= int(ref["length"]))
        all_ok &= consistent
        rows[task.key] = dict(domain=task.domain, split=task.split, problem=task.problem,
                              lama_first_length="" if length is None else str(length),
                              index_length=ref.get("length", ""), index_optimal=ref.get("optimal", ""),
                              consistent=str(consistent).lower(),
                              solve_time_s=f"{outcome.elapsed_s:.1f}")
        if not consistent:
            tqdm.write(f"INCONSISTENT {task.key}: lama-first {length}, index {ref.get('length')}")
        write_csv(CHECK_FILE, CHECK_COLUMNS, rows)
    return all_ok


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="lmcut", choices=sorted(CONFIGS),
                        help="optimal Fast Downward configuration (default: lmcut)")
    parser.add_argument("--timeout", type=float, default=60.0, help="wall-clock seconds per problem")
    parser.add_argument("--memory-mb", type=int, default=8000, help="address-space limit per process")
    parser.add_argument("--domains", nargs="*", help="restrict to these domains")
    parser.add_argument("--only", nargs="*", metavar="DOMAIN/PROBLEM", help="restrict to these problems")
    parser.add_argument("--retry-unproven", action="store_true",
                        help="rerun problems whose index row is not proven optimal")
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
    tasks = discover_tasks(args.domains)
    if args.only:
        wanted = set(args.only)
        tasks = [t for t in tasks if f"{t.domain}/{t.problem}" in wanted]
    if args.check_satisficing:
        ok = check_satisficing(tasks, args.timeout, args.memory_mb)
        print("lama-first lengths consistent with index:", ok)
        return 0 if ok else 1
    fallback = None if args.no_fallback else _lama_first()
    prove(tasks, CONFIGS[args.config], args.timeout, args.memory_mb, args.retry_unproven, fallback)
    return 0


if __name__ == "__main__":
    sys.exit(main())
