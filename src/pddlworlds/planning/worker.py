"""One planner call in a child process that can always be killed: `python -m pddlworlds.planning.worker REQUEST RESULT`.

The parent (`run_worker`) starts the worker in a session of its own and waits until the deadline, then
kills the whole process group with SIGKILL, so no planner process (Fast Downward's driver, translator or
`downward` search binary) outlives its timeout, whatever the engine does with timeouts (unified-planning
issue #681). unified-planning starts the planner in a new session of its own, out of the group's reach;
the worker keeps it in its group, and every process of a call also carries a random token in its
environment, by which the parent finds and kills anything that got away. The worker also watches its
deadline and its parent, and kills its group if either is gone.

`run_killable` is that parent side for any command (the scripts run Fast Downward's own binaries with it).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..files import atomic_write

__all__ = ["TOKEN_VARIABLE", "KillableRun", "WorkerRun", "run_killable", "run_worker", "tagged_pids"]

#: The environment variable every process of one call inherits, with the call's random token.
TOKEN_VARIABLE = "PDDLWORLDS_PLAN_TOKEN"


# ---- the child side --------------------------------------------------------------------------------


def _watchdog(deadline: float | None, parent: int) -> None:
    """Kill our own process group when the deadline has passed (with grace) or the parent is gone."""
    while True:
        time.sleep(0.25)
        late = deadline is not None and time.time() > deadline + 2.0
        if late or os.getppid() != parent:
            os.killpg(os.getpgrp(), signal.SIGKILL)


def _solve(request: dict[str, Any]) -> dict[str, Any]:
    from .up_adapter import read_problem, up_validate

    initial = request.get("initial_atoms")
    atoms = None if initial is None else [(n, tuple(a)) for n, a in initial]
    problem = read_problem(Path(request["domain_file"]), Path(request["problem_file"]), atoms)
    factory = problem.environment.factory
    start = time.perf_counter()
    with factory.OneshotPlanner(name=request["engine"], params=request["params"]) as planner:
        result = planner.solve(problem)
    engine_time = time.perf_counter() - start
    log = "\n".join(m.message for m in (result.log_messages or []) if m.message)
    out: dict[str, Any] = {
        "engine_status": result.status.name,
        "engine_time_s": engine_time,
        "log_tail": log[-4000:],
        "actions": None,
        "up_valid": None,
        "up_message": "",
    }
    if result.plan is not None:
        actions = [
            (ai.action.name, tuple(p.object().name for p in ai.actual_parameters)) for ai in result.plan.actions
        ]
        out["actions"] = [[s, list(a)] for s, a in actions]
        out["up_valid"], out["up_message"] = up_validate(problem, actions)
    return out


class _SameSessionPopen(subprocess.Popen):
    """`Popen` that keeps children in the worker's session and process group.

    unified-planning (since its fix of #681) starts the planner with `start_new_session=True`, which takes
    it out of the worker's process group, out of reach of the group kill at the deadline. The worker never
    passes a timeout to unified-planning, so unified-planning never signals that group itself.
    """

    def __init__(self, *args, **kwargs):
        kwargs["start_new_session"] = False
        kwargs.pop("process_group", None)
        super().__init__(*args, **kwargs)


def _defer_configspace() -> None:
    """Put off importing ConfigSpace (with scipy.stats, over half of unified-planning's import time).

    unified-planning's engine base class imports `ConfigurationSpace` only to describe engines' parameter
    spaces for algorithm configuration, which solving never asks for. The stand-in imports the real
    package the first time a `ConfigurationSpace` is actually made.
    """
    import types

    if "ConfigSpace" in sys.modules:
        return

    class ConfigurationSpace:
        def __new__(cls, *args, **kwargs):
            sys.modules.pop("ConfigSpace", None)
            import ConfigSpace

            return ConfigSpace.ConfigurationSpace(*args, **kwargs)

    stand_in = types.ModuleType("ConfigSpace")
    stand_in.ConfigurationSpace = ConfigurationSpace
    sys.modules["ConfigSpace"] = stand_in


def main(argv: Sequence[str] | None = None) -> int:
    """The worker: read the request, solve, write the result (an error too) as JSON."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 2:
        print("usage: python -m pddlworlds.planning.worker REQUEST.json RESULT.json", file=sys.stderr)
        return 2
    request = json.loads(Path(argv[0]).read_text())
    subprocess.Popen = _SameSessionPopen  # this process only: it exists for this one planner call
    _defer_configspace()
    if request.get("nice"):
        os.nice(int(request["nice"]))
    if request.get("memory_mb"):
        import resource

        limit = int(request["memory_mb"]) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))  # inherited by the planner processes
    threading.Thread(target=_watchdog, args=(request.get("deadline"), os.getppid()), daemon=True).start()
    try:
        out = _solve(request)
    except Exception as exc:  # noqa: BLE001  (reported to the parent as an ERROR plan)
        import traceback

        out = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-4000:]}
    atomic_write(argv[1], json.dumps(out))
    return 0


# ---- the parent side -------------------------------------------------------------------------------


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def tagged_pids(token: str) -> list[int]:
    """Processes (any session, any parent) whose environment carries this call's token."""
    needle = f"{TOKEN_VARIABLE}={token}".encode() + b"\0"
    pids = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if needle in handle.read() + b"\0":
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


def _sweep(token: str) -> None:
    """Kill every process that inherited the token, also ones that left the worker's process group."""
    for _ in range(5):
        pids = tagged_pids(token)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)


def _exited(proc: subprocess.Popen) -> bool:
    """Whether the worker has exited, without reaping it where the platform allows: while the exited
    worker is a zombie its pid stays reserved, so the group kill that follows cannot hit an unrelated
    process that reused the number."""
    if hasattr(os, "waitid"):
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    return proc.poll() is not None


@dataclass(frozen=True)
class KillableRun:
    """How a `run_killable` command ended: its exit status (None when killed at the deadline)."""

    returncode: int | None
    timed_out: bool
    pid: int
    token: str


def run_killable(
    cmd: Sequence[str],
    timeout: float,
    *,
    cwd: str | os.PathLike,
    stdout: IO,
    stdin: IO | int = subprocess.DEVNULL,
    env: dict[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
    on_start: Callable[[int, str], None] | None = None,
) -> KillableRun:
    """Run `cmd` in a session of its own until it exits or `timeout` seconds pass; nothing of it survives.

    Every process it starts carries a random token in its environment; on return the whole process group
    has been killed and every tagged process swept, whatever happened. `on_start(pid, token)` is called
    once the process runs.
    """
    token = uuid.uuid4().hex
    env = dict(os.environ if env is None else env, **{TOKEN_VARIABLE: token})
    timed_out = False
    proc = subprocess.Popen(
        list(cmd), cwd=cwd, stdin=stdin, stdout=stdout, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        preexec_fn=preexec_fn,  # noqa: PLW1509  (callers pass only os.nice and setrlimit)
    )
    try:
        if on_start is not None:
            on_start(proc.pid, token)
        deadline = time.monotonic() + timeout
        delay = 0.005
        while not _exited(proc):
            if time.monotonic() >= deadline:
                timed_out = True
                break
            time.sleep(delay)
            delay = min(delay * 1.5, 0.05)
    finally:
        _kill_group(proc.pid)  # whatever happened, nothing of this call survives it
        _sweep(token)
        code = proc.wait()
    return KillableRun(None if timed_out else code, timed_out, proc.pid, token)


@dataclass(frozen=True)
class WorkerRun:
    """One worker call: its result (None if it wrote none), whether it timed out, its log tail, pid, token."""

    result: dict[str, Any] | None
    timed_out: bool
    log_tail: str
    pid: int
    token: str


def run_worker(
    request: dict[str, Any], timeout: float, on_start: Callable[[int, str], None] | None = None
) -> WorkerRun:
    """Solve `request` in a worker process; nothing the worker started is alive on return."""
    tmp = tempfile.mkdtemp(prefix="pddlworlds-plan-")
    try:
        request_path = os.path.join(tmp, "request.json")
        result_path = os.path.join(tmp, "result.json")
        log_path = os.path.join(tmp, "worker.log")
        request = dict(request, deadline=time.time() + timeout)
        Path(request_path).write_text(json.dumps(request))
        env = dict(os.environ, TMPDIR=tmp, PYTHONUNBUFFERED="1")
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmd = [sys.executable, "-m", "pddlworlds.planning.worker", request_path, result_path]
        with open(log_path, "wb") as log:
            run = run_killable(cmd, timeout, cwd=tmp, stdout=log, env=env, on_start=on_start)
        result = None
        if not run.timed_out and os.path.isfile(result_path):
            result = json.loads(Path(result_path).read_text())
        log_tail = Path(log_path).read_text(errors="replace")[-2000:]
        return WorkerRun(result, run.timed_out, log_tail, run.pid, run.token)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
