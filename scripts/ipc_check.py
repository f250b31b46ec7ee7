#!/usr/bin/env python3
"""Check the PDDL engine on a folder of IPC problems: load, replay a Fast Downward plan, compare walks.

For each subfolder holding `domain.pddl` and `problem.pddl` (one problem per domain), in a subprocess of
its own, under time limits:

1. load: `read_task` + `ground` (within `--timeout` seconds);
2. plan: Fast Downward (the driver bundled with `up_fast_downward`), `--alias lama-first`, else
   `lazy_greedy([ff()])`, in a temporary folder, within `--plan-timeout`; its `sas_plan` is replayed on
   our `GroundTask`: every step applicable, the goal reached, the cost summed and compared with the one
   Fast Downward reports;
3. walks: seeded random walks (`--walks` x `--steps`), where at every state our applicable actions and,
   after each step, our successor state (atoms of the domain's declared predicates, derived ones
   included) are compared with pymimir's (an independent C++ implementation), where pymimir loads the
   problem.

One line per domain, then a summary; `--json OUT` writes every record.

    python scripts/ipc_check.py /work/ipc --json ipc.json
    python scripts/ipc_check.py /work/ipc --only airport-adl --only blocks
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FD_DRIVER = (Path(sys.executable).resolve().parent.parent / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
             / "site-packages" / "up_fast_downward" / "downward" / "fast-downward.py")
SEARCHES = (["--alias", "lama-first"], ["--search", "lazy_greedy([ff()])"])


# ---- the child: one problem ---------------------------------------------------------------------


def _emit(record: dict) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def _fd_driver() -> Path:
    try:
        import up_fast_downward

        path = Path(up_fast_downward.__file__).parent / "downward" / "fast-downward.py"
        if path.is_file():
            return path
    except ImportError:
        pass
    return FD_DRIVER


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill `proc` and every process it started (it leads a session of its own), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def fd_plan(domain: Path, problem: Path, timeout: float) -> tuple[list[str] | None, int | None, str]:
    """(plan steps, reported cost, note) from Fast Downward, or (None, None, why not)."""
    deadline = time.monotonic() + timeout
    notes = []
    for search in SEARCHES:
        left = deadline - time.monotonic()
        if left < 1:
            notes.append("out of time")
            break
        with tempfile.TemporaryDirectory(prefix="ipc_check_fd_") as tmp:
            cmd = [sys.executable, str(_fd_driver()), *search[:2 if search[0] == "--alias" else 0],
                   str(domain.resolve()), str(problem.resolve()),
                   *(search if search[0] == "--search" else [])]
            # its own session, so that a timeout ends the driver's translator and search too
            proc = subprocess.Popen(cmd, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    start_new_session=True)
            try:
                output, _ = proc.communicate(timeout=left)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                notes.append(f"{' '.join(search)}: timed out")
                break
            plan_file = Path(tmp) / "sas_plan"
            if not plan_file.is_file():
                tail = [line for line in output.splitlines() if line.strip()][-1:]
                notes.append(f"{' '.join(search)}: exit {proc.returncode}: {tail[0][:120] if tail else ''}")
                continue
            steps, cost = [], None
            for line in plan_file.read_text().splitlines():
                line = line.strip()
                if line.startswith(";"):
                    match = re.search(r"cost = (\d+)", line)
                    cost = int(match.group(1)) if match else None
                elif line:
                    steps.append(line)
            return steps, cost, " ".join(search)
    return None, None, "; ".join(notes)


def replay(task, steps: list[str]) -> tuple[bool, str, int]:
    """(ok, why not, cost) of replaying `steps` (as in `sas_plan`) on our `GroundTask`."""
    state, cost = task.init, 0
    for number, step in enumerate(steps, start=1):
        schema, *args = step.strip("()").split()
        index = task.action_index.get((schema, tuple(args)))
        if index is None:
            return False, f"step {number} {step}: no such ground action", cost
        if not task.is_applicable(state, index):
            return False, f"step {number} {step}: not applicable", cost
        cost += task.actions[index].cost if task.costs else 1
        state = task.apply(state, index)
    if not task.is_goal(state):
        return False, f"goal not reached after {len(steps)} steps (progress {task.progress(state):.2f})", cost
    return True, "", cost


def _ours(task, state: int, declared: set[str]) -> frozenset[str]:
    return frozenset("(" + " ".join((name, *args)) + ")" for name, args in task.true_atoms(state) if name in declared)


def _theirs(state, declared: set[str]) -> frozenset[str]:
    out = set()
    for atom in state.get_atoms():
        name = atom.get_predicate().get_name().lower()
        if name in declared:
            out.add("(" + " ".join([name, *(o.get_name().lower() for o in atom.get_terms())]) + ")")
    return frozenset(out)


def _diff(ours: frozenset[str], theirs: frozenset[str]) -> str:
    only_ours, only_theirs = sorted(ours - theirs), sorted(theirs - ours)
    return f"only ours {only_ours[:3]}{'...' if len(only_ours) > 3 else ''} ({len(only_ours)}), " \
           f"only pymimir {only_theirs[:3]}{'...' if len(only_theirs) > 3 else ''} ({len(only_theirs)})"


def walks(task, domain: Path, problem: Path, n_walks: int, n_steps: int, seed: int) -> dict:
    """Seeded random walks on our task, compared with pymimir's at every state."""
    import pymimir

    try:
        mdomain = pymimir.Domain(str(domain))
        mproblem = pymimir.Problem(mdomain, str(problem))
        initial = mproblem.get_initial_state()
    except Exception as exc:  # noqa: BLE001 - any failure of the other simulator is "could not load"
        text = (str(exc).strip() or type(exc).__name__).splitlines()
        return {"mimir_loaded": False, "mimir_error": (text[0] if text else type(exc).__name__)[:200]}
    declared = {name for name, _ in task.lifted.predicates}
    steps_done = 0
    for walk in range(n_walks):
        rng = random.Random(seed * 1000 + walk)
        state, mstate = task.init, initial
        ours, theirs = _ours(task, state, declared), _theirs(mstate, declared)
        if ours != theirs:
            return {"mimir_loaded": True, "agree": False, "steps": steps_done,
                    "why": f"walk {walk} initial state differs: {_diff(ours, theirs)}"}
        for step in range(n_steps):
            applicable = task.applicable(state)
            names = {task.actions[i].pddl: i for i in applicable}
            mactions = {"(" + " ".join(str(a).lower().strip("()").split()) + ")": a
                        for a in mstate.generate_applicable_actions()}
            if set(names) != set(mactions):
                return {"mimir_loaded": True, "agree": False, "steps": steps_done,
                        "why": f"walk {walk} step {step}: applicable actions differ: "
                               f"{_diff(frozenset(names), frozenset(mactions))}"}
            if not names:
                break
            name = rng.choice(sorted(names))
            state = task.apply(state, names[name])
            mstate, mcost = mactions[name].apply(mstate, return_cost=True)
            steps_done += 1
            ours, theirs = _ours(task, state, declared), _theirs(mstate, declared)
            if ours != theirs:
                return {"mimir_loaded": True, "agree": False, "steps": steps_done,
                        "why": f"walk {walk} step {step} after {name}: successors differ: {_diff(ours, theirs)}"}
            if task.costs and task.actions[names[name]].cost != int(mcost):
                return {"mimir_loaded": True, "agree": False, "steps": steps_done,
                        "why": f"walk {walk} step {step} {name}: cost {task.actions[names[name]].cost} "
                               f"vs pymimir's {mcost}"}
    return {"mimir_loaded": True, "agree": True, "steps": steps_done}


def check_one(folder: Path, args) -> None:
    """Run in the child: emit one JSON line per stage done."""
    import warnings

    warnings.simplefilter("ignore")
    from pddlworlds.worlds.grounding import ground
    from pddlworlds.worlds.pddl import PDDLError, read_task

    domain, problem = folder / "domain.pddl", folder / "problem.pddl"
    start = time.monotonic()
    try:
        task = ground(read_task(domain, problem))
    except PDDLError as exc:
        _emit({"stage": "load", "loaded": False, "why": str(exc).splitlines()[0][:300],
               "one_line": len(str(exc).splitlines()) == 1, "seconds": round(time.monotonic() - start, 2)})
        return
    _emit({"stage": "load", "loaded": True, "seconds": round(time.monotonic() - start, 2),
           "atoms": len(task.atoms), "actions": len(task.actions), "derived": bool(task.axioms),
           "costs": task.costs})
    if not args.no_plan:
        start = time.monotonic()
        steps, fd_cost, note = fd_plan(domain, problem, args.plan_timeout)
        record = {"stage": "plan", "planned": steps is not None, "note": note,
                  "seconds": round(time.monotonic() - start, 2)}
        if steps is not None:
            ok, why, cost = replay(task, steps)
            record.update(replayed=ok, why=why, length=len(steps), cost=cost, fd_cost=fd_cost)
            if ok and fd_cost is not None and fd_cost != cost:
                record.update(replayed=False, why=f"plan cost {cost} by our costs, {fd_cost} by Fast Downward's")
        _emit(record)
    if args.walks:
        start = time.monotonic()
        record = walks(task, domain, problem, args.walks, args.steps, args.seed)
        record.update(stage="walks", seconds=round(time.monotonic() - start, 2))
        _emit(record)


# ---- the parent: every problem, each in a subprocess ---------------------------------------------


def run_child(folder: Path, args) -> dict:
    """One problem's records merged, under per-stage deadlines (load and walks: `timeout`; plan: the
    planner's own limit plus a margin)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", str(folder), "--plan-timeout",
           str(args.plan_timeout), "--walks", str(args.walks), "--steps", str(args.steps), "--seed", str(args.seed)]
    if args.no_plan:
        cmd.append("--no-plan")
    result: dict = {"domain": folder.name}
    stages = ["load"] + ([] if args.no_plan else ["plan"]) + (["walks"] if args.walks else [])
    limits = {"load": args.timeout, "plan": args.plan_timeout + 30, "walks": args.timeout}
    errors = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - a file, not a pipe: chatter cannot block
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors, text=True, start_new_session=True,
                            env={**os.environ, "PYTHONWARNINGS": "ignore"})
    buffer = ""
    try:
        for stage in stages:
            deadline = time.monotonic() + limits[stage]
            line = None
            while line is None:
                if "\n" in buffer:
                    line, buffer = buffer.split("\n", 1)
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    result[f"{stage}_timeout"] = True
                    result.setdefault("failure", f"{stage}: timed out after {limits[stage]} s")
                    return result
                ready, _, _ = select.select([proc.stdout], [], [], left)
                if ready:
                    chunk = os.read(proc.stdout.fileno(), 65536).decode()
                    if not chunk:  # the child ended
                        break
                    buffer += chunk
            if line is None:
                proc.wait(timeout=10)
                errors.seek(0)
                err = [x for x in errors.read().splitlines() if x.strip()]
                result.setdefault("failure", f"{stage}: the check crashed (exit {proc.returncode}): "
                                             f"{err[-1][:200] if err else ''}")
                result[f"{stage}_crashed"] = True
                return result
            record = json.loads(line)
            name = record.pop("stage")
            result.update({f"{name}_{k}": v for k, v in record.items()})
            if stage == "load" and not result.get("load_loaded"):
                return result
        return result
    finally:
        _kill_group(proc)  # the child and any planner it left running
        proc.stdout.close()
        errors.close()


#: The checks after loading, each said the same way: (stage, key "it ran", key "it passed", words when it
#: could not run, words when it passed, words when it failed, followed by the record's `<stage>_why`).
STAGES = (
    ("plan", "planned", "replayed", lambda r: f"no plan ({r['plan_note']})",
     lambda r: f"plan replayed ({r['plan_length']} steps, cost {r['plan_cost']})", "PLAN FAILS"),
    ("walks", "mimir_loaded", "agree", lambda r: f"pymimir could not load ({r['walks_mimir_error'][:80]})",
     lambda r: f"walks agree ({r['walks_steps']} steps)", "WALKS DISAGREE"),
)


def verdict(r: dict) -> tuple[str, list[str]]:
    """(the domain's one line, its failures)."""
    failures = []
    if "failure" in r:
        failures.append(r["failure"])
    if r.get("load_loaded") is False:
        failures.append(f"load: {r.get('load_why')}")
        return f"REFUSED {r.get('load_why')}", failures
    if not r.get("load_loaded"):
        return "FAILED " + "; ".join(failures), failures
    parts = [f"loaded {r['load_seconds']}s ({r['load_atoms']} atoms, {r['load_actions']} actions)"]
    for stage, ran, passed, not_run, ok, fails in STAGES:
        if f"{stage}_{ran}" not in r:
            continue
        if not r[f"{stage}_{ran}"]:
            parts.append(not_run(r))
        elif r[f"{stage}_{passed}"]:
            parts.append(ok(r))
        else:
            parts.append(f"{fails}: {r[f'{stage}_why']}")
            failures.append(f"{stage}: {r[f'{stage}_why']}")
    if "failure" in r:
        parts.append("FAILED " + r["failure"])
    return "; ".join(parts), failures


#: The summary's counts: how many domains each test holds for.
SUMMARY = {
    "loaded": lambda r: r.get("load_loaded"),
    "planned": lambda r: r.get("plan_planned"),
    "replayed": lambda r: r.get("plan_replayed"),
    "mimir_loaded": lambda r: r.get("walks_mimir_loaded"),
    "walks_agree": lambda r: r.get("walks_agree"),
    "mimir_failed": lambda r: r.get("walks_mimir_loaded") is False,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, nargs="?", help="a folder of domains, one subfolder each")
    parser.add_argument("--timeout", type=float, default=60, help="seconds to load a problem, and for its walks")
    parser.add_argument("--plan-timeout", type=float, default=60, help="seconds for Fast Downward")
    parser.add_argument("--walks", type=int, default=3, help="random walks per problem (0: none)")
    parser.add_argument("--steps", type=int, default=30, help="steps per walk")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-plan", action="store_true", help="skip Fast Downward")
    parser.add_argument("--only", action="append", default=[], help="check only this domain (repeatable)")
    parser.add_argument("--json", type=Path, help="write every record here")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        check_one(args.one, args)
        return 0
    if args.folder is None:
        parser.error("the folder of domains is required")
    folders = sorted(p for p in args.folder.iterdir() if (p / "domain.pddl").is_file() and (p / "problem.pddl").is_file())
    if args.only:
        folders = [p for p in folders if p.name in args.only]
    results = []
    width = max((len(p.name) for p in folders), default=10)
    for folder in folders:
        record = run_child(folder, args)
        line, failures = verdict(record)
        record["failures"] = failures
        results.append(record)
        print(f"{folder.name:<{width}}  {'FAIL' if failures else 'ok  '}  {line}", flush=True)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    failed = [r for r in results if r["failures"]]
    s = {"domains": len(results)}
    s.update({name: sum(1 for r in results if test(r)) for name, test in SUMMARY.items()})
    s["failed"] = len(failed)
    print(f"\n{s['domains']} domains: {s['loaded']} loaded; {s['planned']} planned by Fast Downward, "
          f"{s['replayed']} plans replayed; walks agree on {s['walks_agree']} of {s['mimir_loaded']} pymimir "
          f"loads; pymimir could not load {s['mimir_failed']}; {s['failed']} with failures")
    for r in failed:
        print(f"  {r['domain']}: {' | '.join(r['failures'])}")
    if args.json:
        args.json.write_text(json.dumps({"summary": s, "results": results}, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
