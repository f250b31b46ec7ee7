"""The classical planner baseline: named planner configurations, killable solving, plan validation, experts.

Every planner call runs in a child process (`python -m pddlworlds.planning --worker ...`) started in a
session of its own. The parent waits until the deadline and then kills the whole process group with
SIGKILL, so no planner process (Fast Downward's driver, translator or `downward` search binary) outlives
its timeout, whatever the engine does with timeouts (unified-planning issue #681). unified-planning
starts the planner in a new session of its own, out of the group's reach; the worker keeps it in its
group, and every process of a call also carries a random token in its environment, by which the parent
finds and kills anything that got away. The worker also watches its deadline and its parent, and kills
its group if either is gone.

The engines' statuses are not trusted (up-fast-downward #37, #28): Fast Downward through
unified-planning calls an optimal plan "satisficing" when the problem has no quality metric, and
up-pyperplan calls every exhausted search "incomplete". A returned plan counts only when it replays on our
own grounded task to the goal *and* unified-planning's `PlanValidator` accepts it; "optimal" comes from
the configuration being admissible; "unsolvable" needs evidence from the engine's log (Fast Downward) or
a complete search (pyperplan); anything else is an ERROR.

    >>> plan = solve("blocksworld", "problem1", planner="fd-opt", timeout=60)
    >>> plan.status, plan.length, plan.text[0]
    (<PlanStatus.SOLVED_OPTIMALLY: 'solved_optimally'>, 8, 'unstack b2 from b3')
"""

from __future__ import annotations

import contextlib
import csv
import enum
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple

from .catalogue import DEFAULT_SPLIT, get_domain, load_task
from .files import atomic_write
from .grounding import Atom, natural_key
from .pddl import PDDLNormalisationWarning
from .plans import index_file, plan_file, read_index

__all__ = [
    "INDEX_COLUMNS",
    "PLANNERS",
    "ExpertStep",
    "Plan",
    "PlanCheck",
    "PlanStatus",
    "PlannerConfig",
    "expert_trajectory",
    "format_plan",
    "get_planner",
    "index_lock",
    "optimal_length",
    "parse_plan",
    "planner_version",
    "register_planner",
    "solve",
    "stored_plan",
    "update_index",
    "validate_plan",
    "write_plan_file",
]

Action = tuple[str, tuple[str, ...]]


# --------------------------------------------------------------------------------------------------
# Planner configurations.


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


PLANNERS: dict[str, PlannerConfig] = {}


def register_planner(config: PlannerConfig, *, replace: bool = False) -> PlannerConfig:
    """Add a named configuration (any unified-planning OneshotPlanner engine with its params)."""
    if config.name in PLANNERS and not replace:
        raise ValueError(f"planner {config.name!r} is already registered")
    PLANNERS[config.name] = config
    return config


def get_planner(name: str | PlannerConfig) -> PlannerConfig:
    if isinstance(name, PlannerConfig):
        return name
    try:
        return PLANNERS[name]
    except KeyError:
        raise ValueError(f"unknown planner {name!r}; planners: {', '.join(PLANNERS)}") from None


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


# --------------------------------------------------------------------------------------------------
# Results.


class PlanStatus(str, enum.Enum):
    SOLVED_OPTIMALLY = "solved_optimally"
    SOLVED_SATISFICING = "solved_satisficing"
    UNSOLVABLE = "unsolvable"
    TIMEOUT = "timeout"
    ERROR = "error"

    @property
    def solved(self) -> bool:
        return self in (PlanStatus.SOLVED_OPTIMALLY, PlanStatus.SOLVED_SATISFICING)


@dataclass
class Plan:
    """The outcome of one planner call; `actions` and `text` are empty unless solved."""

    domain: str
    problem: str
    planner: str
    status: PlanStatus
    actions: tuple[Action, ...] = ()
    text: tuple[str, ...] = ()  # the environment's text of each action
    length: int | None = None
    optimal: bool = False
    time_s: float = 0.0  # wall clock of the whole call, child process start-up included
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)  # engine, engine status, log tail, worker pid

    @property
    def solved(self) -> bool:
        return self.status.solved

    @property
    def pddl(self) -> list[str]:
        return [_pddl(a) for a in self.actions]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        d["actions"] = [[s, list(a)] for s, a in self.actions]
        d["text"] = list(self.text)
        return d


@dataclass
class PlanCheck:
    """What `validate_plan` found; `valid` needs both the environment replay and unified-planning."""

    valid: bool
    env_valid: bool  # every step was a valid action in the environment and the goal holds at the end
    up_valid: bool | None  # unified-planning's PlanValidator (None when not run)
    goal_reached: bool
    steps_valid: int  # how many steps replayed before the first invalid one
    message: str = ""

    def __bool__(self) -> bool:
        return self.valid


class ExpertStep(NamedTuple):
    observation: str
    action: str
    next_observation: str
    progress: float


# --------------------------------------------------------------------------------------------------
# Plans as text.

_ACTION_RE = re.compile(r"\(([^()]*)\)")


def _pddl(action: Action) -> str:
    schema, args = action
    return "(" + " ".join((schema, *args)) + ")"


def parse_plan(text: str) -> list[Action]:
    """Actions of an IPC plan (`(stack b1 b2)` lines; `;` comments and `0: ... [1]` decorations ignored)."""
    actions: list[Action] = []
    for line in text.splitlines():
        line = line.split(";", 1)[0].strip()
        if not line:
            continue
        match = _ACTION_RE.search(line)
        if match is None:
            raise ValueError(f"not a plan line: {line!r}")
        words = match.group(1).lower().split()
        if not words:
            raise ValueError(f"empty action in plan line: {line!r}")
        actions.append((words[0], tuple(words[1:])))
    return actions


def _as_actions(actions: Iterable[Action | str | Sequence]) -> list[Action]:
    out: list[Action] = []
    for a in actions:
        if isinstance(a, str):
            out.extend(parse_plan(a))
        else:
            schema, args = a
            out.append((str(schema).lower(), tuple(str(x).lower() for x in args)))
    return out


def format_plan(actions: Sequence[Action], comments: Sequence[str] = ()) -> str:
    """IPC format: one `(schema args)` per line, then `; cost = N (unit cost)` and comment lines."""
    lines = [_pddl(a) for a in actions]
    lines.append(f"; cost = {len(actions)} (unit cost)")
    lines.extend(f"; {c}" for c in comments)
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------
# What to plan for: a shipped domain's problem, or PDDL files of one's own.


@dataclass(frozen=True)
class _Target:
    domain: str
    problem: str
    split: str
    domain_file: Path
    problem_file: Path
    text_file: Path | None
    shipped: bool


def _looks_like_file(name: str | os.PathLike) -> bool:
    text = os.fspath(name)
    return text.endswith(".pddl") or os.sep in text or Path(text).is_file()


def _target(domain: str | os.PathLike, problem: str | os.PathLike, split: str = DEFAULT_SPLIT,
            text_file: str | os.PathLike | None = None) -> _Target:
    if _looks_like_file(domain):
        domain_file, problem_file = Path(domain).resolve(), Path(problem).resolve()
        for f in (domain_file, problem_file):
            if not f.is_file():
                raise FileNotFoundError(f"no such PDDL file: {f}")
        return _Target(domain_file.parent.name, problem_file.stem, "custom", domain_file, problem_file,
                       Path(text_file) if text_file else None, False)
    d = get_domain(str(domain))
    text = Path(text_file) if text_file else (d.text_file if d.text_file.is_file() else None)
    if _looks_like_file(problem):  # a problem file of one's own for a shipped domain
        problem_path = Path(problem).resolve()
        if not problem_path.is_file():
            raise FileNotFoundError(f"no such PDDL file: {problem_path}")
        return _Target(d.name, problem_path.stem, "custom", d.domain_file, problem_path, text, False)
    return _Target(d.name, os.fspath(problem), split, d.domain_file, d.problem_file(os.fspath(problem), split), text, True)


def _env_target(env) -> _Target:
    """The problem an environment is playing right now, as a planning target."""
    env = getattr(env, "unwrapped", env)
    name = env.world.name
    text_file = env.text_file
    return _Target(env.domain_name, name, env.split, Path(env.domain_file), Path(env.problem_files[name]),
                   text_file, env.split != "custom")


_WORLDS: dict[tuple, Any] = {}


def _world(target: _Target):
    """The grounded world of a target, as the environment builds it (same action order, same texts)."""
    from .text import load_templates
    from .world import World

    key = (str(target.domain_file), str(target.problem_file), str(target.text_file) if target.text_file else None,
           target.problem_file.stat().st_mtime_ns)
    if key not in _WORLDS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PDDLNormalisationWarning)
            task = load_task(target.domain_file, target.problem_file)
        _WORLDS[key] = World(task, load_templates(task, target.text_file), target.problem)
        if len(_WORLDS) > 64:
            _WORLDS.pop(next(iter(_WORLDS)))
    return _WORLDS[key]


def _env(target: _Target):
    from .env import PDDLTextEnv

    if target.shipped:
        return PDDLTextEnv(domain=target.domain, split=target.split, problem=target.problem)
    return PDDLTextEnv(domain_file=target.domain_file, problem_files=[target.problem_file],
                       text_file=target.text_file)


def _lookup(world, action: Action) -> int | None:
    index = world.task.action_index.get(action)
    if index is None:  # PDDL names are case-insensitive; our task keeps the case of the file
        folded = getattr(world, "_folded_index", None)
        if folded is None:
            folded = {(s.lower(), tuple(a.lower() for a in args)): i for (s, args), i in world.task.action_index.items()}
            world._folded_index = folded
        index = folded.get((action[0].lower(), tuple(a.lower() for a in action[1])))
    return index


def _replay(world, actions: Sequence[Action], state: int) -> tuple[list[int] | None, list[int], str]:
    """Indices of the actions and the states they visit (first = `state`); None and a reason if one fails."""
    states = [state]
    indices: list[int] = []
    for step, action in enumerate(actions, start=1):
        index = _lookup(world, action)
        if index is None:
            return None, states, f"step {step}: {_pddl(action)} is not an action of this problem"
        if not world.task.is_applicable(states[-1], index):
            return None, states, f"step {step}: {_pddl(action)} is not applicable"
        indices.append(index)
        states.append(world.task.apply(states[-1], index))
    return indices, states, ""


# --------------------------------------------------------------------------------------------------
# unified-planning side (used in the worker, and by validate_plan).


_DOMAIN_PARSES: dict[str, Any] = {}


def _read_up(domain_file: Path, problem_file: Path, initial_atoms: Iterable[Atom] | None = None):
    """The problem as `read_up_problem` reads it, but in unified-planning's *global* environment.

    In a private environment unified-planning 1.3's plan validator (its grounder builds actions without
    passing the environment on) and the "fast-downward-opt" engine fail with "Expression has a different
    environment". In a worker process the global environment is fresh anyway. The parsed domain text is
    remembered (parsing it is half the cost of reading a problem); on any surprise from the reader's
    internals this falls back to `read_up_problem`, which also gives the proper error messages.
    """
    from unified_planning.shortcuts import get_environment

    from .pddl import _normalised_texts, read_up_problem

    environment = get_environment()
    environment.credits_stream = None
    problem = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PDDLNormalisationWarning)
        try:
            from unified_planning.io import PDDLReader
            from unified_planning.io.utils import parse_string

            domain_text, problem_text = _normalised_texts(Path(domain_file), Path(problem_file))
            domain_text = domain_text.replace("\t", " ").lower()
            problem_text = problem_text.replace("\t", " ").lower()
            reader = PDDLReader(environment=environment)
            domain_parse = _DOMAIN_PARSES.get(domain_text)
            if domain_parse is None:
                domain_parse = parse_string(reader._pp_domain, domain_text, parse_all=True)
                if len(_DOMAIN_PARSES) > 16:
                    _DOMAIN_PARSES.clear()
                _DOMAIN_PARSES[domain_text] = domain_parse
            problem_parse = parse_string(reader._pp_problem, problem_text, parse_all=True)
            problem = reader._parse_problem(domain_parse, domain_text, problem_parse, problem_text)
        except Exception:  # noqa: BLE001  (the reader's internals changed, or bad PDDL: read it the documented way)
            problem = None
        if problem is None:
            problem = read_up_problem(domain_file, problem_file, environment=environment)
    if initial_atoms is not None:
        _set_initial_state(problem, initial_atoms)
    return problem


def _up_object(problem, name: str):
    try:
        return problem.object(name)
    except Exception:
        for obj in problem.all_objects:
            if obj.name.lower() == name.lower():
                return obj
        raise


def _up_action(problem, name: str):
    try:
        return problem.action(name)
    except Exception:
        for action in problem.actions:
            if action.name.lower() == name.lower():
                return action
        raise


def _up_fluent(problem, name: str):
    try:
        return problem.fluent(name)
    except Exception:
        for fluent in problem.fluents:
            if fluent.name.lower() == name.lower():
                return fluent
        raise


def _set_initial_state(problem, atoms: Iterable[Atom]) -> None:
    """Make exactly `atoms` true initially (every other Boolean fluent false, as in PDDL)."""
    for fluent_exp, value in list(problem.explicit_initial_values.items()):
        if value.is_true():
            problem.set_initial_value(fluent_exp, False)
    for name, args in atoms:
        fluent = _up_fluent(problem, name)
        problem.set_initial_value(fluent(*[_up_object(problem, a) for a in args]), True)


def _up_plan(problem, actions: Sequence[Action]):
    from unified_planning.plans import ActionInstance, SequentialPlan

    em = problem.environment.expression_manager
    return SequentialPlan(
        [ActionInstance(_up_action(problem, s), [em.ObjectExp(_up_object(problem, a)) for a in args])
         for s, args in actions],
        environment=problem.environment,
    )


def _up_validate(problem, actions: Sequence[Action]) -> tuple[bool, str]:
    from unified_planning.engines import ValidationResultStatus

    try:
        plan = _up_plan(problem, actions)
    except Exception as exc:  # noqa: BLE001  (an unknown action or object: the plan is invalid)
        return False, f"cannot build the plan: {type(exc).__name__}: {exc}"
    with problem.environment.factory.PlanValidator(problem_kind=problem.kind, plan_kind=plan.kind) as validator:
        result = validator.validate(problem, plan)
    ok = result.status == ValidationResultStatus.VALID
    reason = "" if ok else str(getattr(result, "reason", None) or getattr(result, "inapplicable_action", "") or "")
    return ok, reason


# --------------------------------------------------------------------------------------------------
# The worker: one planner call in a child process.


def _watchdog(deadline: float | None, parent: int) -> None:
    """Kill our own process group when the deadline has passed (with grace) or the parent is gone."""
    while True:
        time.sleep(0.25)
        late = deadline is not None and time.time() > deadline + 2.0
        if late or os.getppid() != parent:
            os.killpg(os.getpgrp(), signal.SIGKILL)


def _worker_solve(request: dict[str, Any]) -> dict[str, Any]:
    initial = request.get("initial_atoms")
    atoms = None if initial is None else [(n, tuple(a)) for n, a in initial]
    problem = _read_up(Path(request["domain_file"]), Path(request["problem_file"]), atoms)
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
        out["up_valid"], out["up_message"] = _up_validate(problem, actions)
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


def _worker_main(request_path: str, result_path: str) -> int:
    request = json.loads(Path(request_path).read_text())
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
        out = _worker_solve(request)
    except Exception as exc:  # noqa: BLE001  (reported to the parent as an ERROR plan)
        import traceback

        out = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-4000:]}
    atomic_write(result_path, json.dumps(out))
    return 0


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


_TOKEN_VARIABLE = "PDDLWORLDS_PLAN_TOKEN"


def _tagged_pids(token: str) -> list[int]:
    """Processes (any session, any parent) whose environment carries this call's token."""
    needle = f"{_TOKEN_VARIABLE}={token}".encode() + b"\0"
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
        pids = _tagged_pids(token)
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


def _run_worker(
    request: dict[str, Any], timeout: float, on_start: Callable[[int, str], None] | None = None
) -> tuple[dict[str, Any] | None, bool, str, int, str]:
    """(result or None, timed out, log tail, worker pid, token); nothing the worker started is alive on return.

    Every process of the call carries a random token in its environment; the group kill gets the worker
    and everything in its process group, the sweep anything that left the group.
    """
    tmp = tempfile.mkdtemp(prefix="pddlworlds-plan-")
    try:
        request_path = os.path.join(tmp, "request.json")
        result_path = os.path.join(tmp, "result.json")
        log_path = os.path.join(tmp, "worker.log")
        request = dict(request, deadline=time.time() + timeout)
        Path(request_path).write_text(json.dumps(request))
        token = uuid.uuid4().hex
        env = dict(os.environ, TMPDIR=tmp, PYTHONUNBUFFERED="1", **{_TOKEN_VARIABLE: token})
        package_root = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmd = [sys.executable, "-m", "pddlworlds.planning", "--worker", request_path, result_path]
        timed_out = False
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(cmd, cwd=tmp, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    env=env, start_new_session=True)
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
                proc.wait()
        result = None
        if not timed_out and os.path.isfile(result_path):
            result = json.loads(Path(result_path).read_text())
        log_tail = Path(log_path).read_text(errors="replace")[-2000:]
        return result, timed_out, log_tail, proc.pid, token
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------------------------------
# solve()

_FD_UNSOLVABLE = ("provably unsolvable", "exit code: 10", "exit code: 11", "Completely explored state space")
_FD_INCOMPLETE = ("exit code: 12",)


def _unsolvable_evidence(config: PlannerConfig, log: str) -> tuple[bool, str]:
    """Whether a 'no plan' answer is backed by the engine's own evidence, and how strongly."""
    if config.engine.startswith("fast-downward"):
        if any(marker in log for marker in _FD_UNSOLVABLE):
            return True, "proven unsolvable by Fast Downward"
        if any(marker in log for marker in _FD_INCOMPLETE) and config.complete:
            return True, "search space exhausted (Fast Downward exit code 12: unsolved, search incomplete)"
        return False, ""
    if config.engine.startswith("pyperplan") and config.complete:
        # up-pyperplan reports every failed search as UNSOLVABLE_INCOMPLETELY (it compares the search
        # function with its name), but A* and greedy best-first search with a closed list are complete.
        return True, "search space exhausted by pyperplan"
    return False, ""


def solve(
    domain: str | os.PathLike,
    problem: str | os.PathLike,
    planner: str | PlannerConfig = "fd-opt",
    timeout: float = 60,
    split: str = DEFAULT_SPLIT,
    *,
    initial_atoms: Iterable[Atom] | None = None,
    text_file: str | os.PathLike | None = None,
    nice: int = 0,
    memory_mb: int | None = None,
    _on_start: Callable[[int, str], None] | None = None,
) -> Plan:
    """Plan for a shipped problem (`solve("gripper", "prob01")`) or PDDL files (`solve(dom_path, prob_path)`).

    `initial_atoms` replaces the initial state (every atom that holds, static ones included), as the
    expert does to replan from where an episode stands. `nice` lowers the planner processes' priority,
    `memory_mb` caps their address space. Never raises for planner failures: they come back as a `Plan`
    with status TIMEOUT, UNSOLVABLE or ERROR (an unknown domain or problem name still raises ValueError).
    """
    return _solve_target(_target(domain, problem, split, text_file), planner, timeout,
                         initial_atoms=initial_atoms, nice=nice, memory_mb=memory_mb, on_start=_on_start)


def _solve_target(
    target: _Target,
    planner: str | PlannerConfig,
    timeout: float,
    *,
    initial_atoms: Iterable[Atom] | None = None,
    nice: int = 0,
    memory_mb: int | None = None,
    on_start: Callable[[int, str], None] | None = None,
) -> Plan:
    config = get_planner(planner)
    world = _world(target)
    atoms = None if initial_atoms is None else sorted((n, tuple(a)) for n, a in initial_atoms)
    state = world.initial_state if atoms is None else world.task.state_of(atoms)
    request = {
        "domain_file": str(target.domain_file),
        "problem_file": str(target.problem_file),
        "engine": config.engine,
        "params": config.params,
        "initial_atoms": None if atoms is None else [[n, list(a)] for n, a in atoms],
        "nice": nice,
        "memory_mb": memory_mb,
    }
    plan = Plan(target.domain, target.problem, config.name, PlanStatus.ERROR,
                details={"engine": config.engine, "method": config.label})
    start = time.perf_counter()
    result, timed_out, worker_log, pid, token = _run_worker(request, float(timeout), on_start)
    plan.time_s = time.perf_counter() - start
    plan.details.update(worker_pid=pid, worker_token=token)
    if timed_out:
        plan.status = PlanStatus.TIMEOUT
        plan.message = f"no plan within {timeout:g} s; the planner's process group was killed"
        return plan
    if result is None:
        plan.message = "the planner process ended without a result: " + worker_log[-500:]
        return plan
    if "error" in result:
        plan.message = result["error"]
        plan.details["traceback"] = result.get("traceback", "")
        return plan

    engine_status = result["engine_status"]
    log = result.get("log_tail", "")
    plan.details.update(engine_status=engine_status, engine_time_s=result.get("engine_time_s"), log_tail=log)
    actions = result.get("actions")
    if actions is not None:
        actions = [(s, tuple(a)) for s, a in actions]
        indices, states, problem_text = _replay(world, actions, state)
        goal = indices is not None and world.task.is_goal(states[-1])
        if indices is None or not goal or not result.get("up_valid"):
            reasons = []
            if indices is None:
                reasons.append(f"replay: {problem_text}")
            elif not goal:
                reasons.append("replay: the goal does not hold at the end")
            if not result.get("up_valid"):
                reasons.append(f"unified-planning validator: {result.get('up_message') or 'invalid'}")
            plan.message = f"the engine returned an invalid plan ({engine_status}): " + "; ".join(reasons)
            plan.details["invalid_actions"] = [_pddl(a) for a in actions]
            return plan
        plan.actions = tuple(actions)
        plan.text = tuple(world.action_text(i) for i in indices)
        plan.length = len(actions)
        plan.optimal = config.admissible
        plan.status = PlanStatus.SOLVED_OPTIMALLY if config.admissible else PlanStatus.SOLVED_SATISFICING
        plan.message = "plan validated (replay and unified-planning)" + (
            "; optimal: admissible search" if config.admissible else ""
        )
        return plan
    if engine_status.startswith("UNSOLVABLE"):
        ok, why = _unsolvable_evidence(config, log)
        if ok:
            plan.status = PlanStatus.UNSOLVABLE
            plan.message = why
        else:
            plan.message = f"the engine said {engine_status} without evidence of unsolvability: {log[-300:]}"
        return plan
    if engine_status == "TIMEOUT":
        plan.status = PlanStatus.TIMEOUT
        plan.message = "the engine timed out"
        return plan
    if engine_status == "MEMOUT":
        plan.message = "out of memory" + (f" ({memory_mb} MB)" if memory_mb else "")
        return plan
    plan.message = f"engine status {engine_status}: {log[-300:]}"
    return plan


# --------------------------------------------------------------------------------------------------
# Stored plans and lengths.


def optimal_length(domain: str, problem: str, split: str = DEFAULT_SPLIT, *, proven: bool = True) -> int | None:
    """The stored optimal plan length (no planning at run time); None if unknown.

    With `proven=False` the best stored length is returned even when not proven optimal (as the
    environment's `info["optimal_length"]` does).
    """
    for row in read_index():
        if row.get("domain") == domain and row.get("split") == split and row.get("problem") == problem:
            if not row.get("length", "").isdigit():
                return None
            if proven and row.get("optimal", "").lower() != "true":
                return None
            return int(row["length"])
    return None


def stored_plan(domain: str, problem: str) -> list[Action] | None:
    """The plan stored under `planners/<domain>/<problem>.plan`, or None."""
    try:
        path = plan_file(domain, problem)
    except FileNotFoundError:
        return None
    if not path.is_file():
        return None
    return parse_plan(path.read_text())


def expert_trajectory(
    domain: str, problem: str, split: str = DEFAULT_SPLIT, *, timeout: float = 120, nice: int = 0
) -> list[ExpertStep]:
    """The expert's episode: the stored plan (or, without one, an fd-sat plan) played in the environment."""
    target = _target(domain, problem, split)
    world = _world(target)
    actions = stored_plan(target.domain, target.problem) if target.shipped else None
    if actions is not None and _replay(world, actions, world.initial_state)[0] is None:
        actions = None  # stale; plan afresh
    if actions is None:
        plan = _solve_target(target, "fd-sat", timeout, nice=nice)
        if not plan.solved:
            raise RuntimeError(f"no expert plan for {target.domain}/{target.problem}: {plan.status.value}: {plan.message}")
        actions = list(plan.actions)
    env = _env(target)
    observation, info = env.reset(options={"problem": target.problem})
    steps: list[ExpertStep] = []
    for action in actions:
        text = env.world.action_text(_lookup(env.world, action))
        next_observation, _, _terminated, _, info = env.step(text)
        if not info["action_valid"]:
            raise RuntimeError(f"expert plan step {text!r} rejected: {next_observation}")
        steps.append(ExpertStep(observation, text, next_observation, float(info["progress"])))
        observation = next_observation
    if not env.world.task.is_goal(env.state):
        raise RuntimeError(f"expert plan for {target.domain}/{target.problem} does not reach the goal")
    return steps


def validate_plan(
    domain: str | os.PathLike,
    problem: str | os.PathLike,
    actions: Iterable[Action | str],
    split: str = DEFAULT_SPLIT,
    *,
    initial_atoms: Iterable[Atom] | None = None,
    use_up: bool = True,
) -> PlanCheck:
    """Replay `actions` ((schema, args) pairs or IPC plan text) in the environment and with unified-planning."""
    target = _target(domain, problem, split)
    actions = _as_actions([actions] if isinstance(actions, str) else actions)
    env = _env(target)
    env.reset(options={"problem": target.problem})
    if initial_atoms is not None:
        env.state = env.world.task.state_of(initial_atoms)
    steps_valid = 0
    message = ""
    for step, action in enumerate(actions, start=1):
        index = _lookup(env.world, action)
        if index is None:
            message = f"step {step}: {_pddl(action)} is not an action of this problem"
            break
        before = env.state
        observation, _, _, _, info = env.step(env.world.action_text(index))
        expected = env.world.task.apply(before, index)
        if not info["action_valid"]:
            message = f"step {step}: {_pddl(action)} invalid: {observation}"
            break
        if env.state != expected:
            message = f"step {step}: {_pddl(action)} parsed as {info['action']!r}, a different action"
            break
        steps_valid += 1
    goal = steps_valid == len(actions) and env.world.task.is_goal(env.state)
    if not message and not goal:
        message = "the goal does not hold at the end"
    env_valid = not message
    up_valid = None
    if use_up:
        problem_up = _read_up(target.domain_file, target.problem_file, initial_atoms)
        up_valid, up_message = _up_validate(problem_up, actions)
        if not up_valid:
            message = (message + "; " if message else "") + f"unified-planning: {up_message or 'invalid plan'}"
    return PlanCheck(env_valid and up_valid is not False, env_valid, up_valid, goal, steps_valid, message)


# --------------------------------------------------------------------------------------------------
# Writing plan files and index rows (used by the scripts).

INDEX_COLUMNS = ["domain", "split", "problem", "length", "optimal", "planner", "method", "solve_time_s", "notes"]


def planner_version(config: PlannerConfig | str = "fd-opt") -> str:
    """Name and version of the engine behind a configuration, as the index's `planner` column has it."""
    config = get_planner(config)
    if config.engine.startswith("fast-downward"):
        import up_fast_downward

        version_file = Path(up_fast_downward.__file__).resolve().parent / "downward" / "driver" / "version.py"
        match = re.search(r'__version__ = "([^"]+)"', version_file.read_text()) if version_file.is_file() else None
        return f"fast-downward {match.group(1) if match else '?'} (up-fast-downward)"
    if config.engine.startswith("pyperplan"):
        from importlib.metadata import version

        return f"pyperplan {version('pyperplan')} (up-pyperplan)"
    return config.engine


@contextlib.contextmanager
def index_lock(path: str | os.PathLike | None = None) -> Iterator[None]:
    """Exclusive `fcntl.flock` on `<index>.lock`; every writer of the index must hold it."""
    import fcntl

    path = Path(path) if path is not None else index_file()
    lock_path = path.with_name(path.name + ".lock")
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def update_index(
    rows: Iterable[dict[str, Any]], path: str | os.PathLike | None = None, columns: Sequence[str] = INDEX_COLUMNS
) -> None:
    """Add or replace rows (keyed by domain, split, problem): locked read-modify-write, atomic replace.

    `columns` come first in the file, then any other columns it already has; other CSVs keyed the same
    way (the scripts' check files) go through here too.
    """
    path = Path(path) if path is not None else index_file()
    with index_lock(path):
        current: dict[tuple[str, str, str], dict[str, str]] = {}
        fields = list(columns)
        if path.is_file():
            with open(path, newline="") as handle:
                reader = csv.DictReader(handle)
                fields += [c for c in (reader.fieldnames or []) if c not in fields]
                for row in reader:
                    current[(row["domain"], row["split"], row["problem"])] = row
        for row in rows:
            row = {k: "" if v is None else str(v) for k, v in row.items()}
            current[(row["domain"], row["split"], row["problem"])] = row

        def write(handle: IO[str]) -> None:
            writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
            writer.writeheader()
            for key in sorted(current, key=lambda k: (k[0], k[1], natural_key(k[2]))):
                writer.writerow({c: current[key].get(c, "") for c in fields})

        atomic_write(path, write)


def write_plan_file(domain: str, problem: str, actions: Sequence[Action], comments: Sequence[str] = ()) -> Path:
    """Write `planners/<domain>/<problem>.plan` atomically in IPC format."""
    path = plan_file(domain, problem)
    atomic_write(path, lambda handle: handle.write(format_plan(actions, comments)))
    return path


# --------------------------------------------------------------------------------------------------


def _main(argv: Sequence[str] | None = None) -> int:
    """The planner worker (`--worker REQUEST RESULT`); anything else is `planning_cli`'s commands."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"] and len(argv) == 3:
        return _worker_main(argv[1], argv[2])
    from .planning_cli import main

    return main(argv)


if __name__ == "__main__":
    sys.exit(_main())
