"""Running an evaluation: a plan of episodes, played in parallel, stored so that a killed run resumes.

One run lives in one folder:

- `config.json`: what the run measures (agents and their flags, model id and file hash or server URL,
  prompts' version, split, problems, seeds, step budget, package version). Resuming with anything
  different is refused, naming the keys that differ.
- `episodes.jsonl`: one line per finished episode (`EpisodeRecord.to_dict()` plus a `meta` object),
  written with one `os.write` on an `O_APPEND` descriptor and fsync'ed as each episode ends. Only the
  parent process writes. A run killed at any moment (SIGKILL included) leaves at worst a torn last line,
  which the next run drops; episodes already on file are never played again (key: agent, domain, split,
  problem, seed).
- `errors.jsonl`: episodes that raised (not finished: the next run retries them).

An episode is `run_episode(EpisodeSpec, BackendSpec) -> dict`, a plain function of picklable arguments, so
it can go to a thread, a spawned process (one model per process, built once by the pool's initializer)
or a Ray actor (`backend="ray"`, the optional extra `pddlworlds[ray]`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import functools
import importlib
import json
import os
import platform
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files import atomic_write

__all__ = [
    "BUILTIN_LLM_FREE_AGENTS",
    "CONFIG_FILE",
    "EPISODES_FILE",
    "ERRORS_FILE",
    "BackendSpec",
    "ConfigMismatchError",
    "EpisodeSpec",
    "EvaluationError",
    "RunPlan",
    "RunResult",
    "RunStopped",
    "RunStore",
    "agent_names",
    "build_config",
    "config_differences",
    "parse_llm",
    "resolve_agent",
    "run_episode",
    "run_evaluation",
]

CONFIG_FILE = "config.json"
EPISODES_FILE = "episodes.jsonl"
ERRORS_FILE = "errors.jsonl"
LOCK_FILE = ".lock"
CONFIG_FORMAT = 1
#: Built-in agents that play without a model.
BUILTIN_LLM_FREE_AGENTS = frozenset({"expert", "random"})
#: Stop after this many episodes in a row raised: something is broken for all of them.
MAX_CONSECUTIVE_FAILURES = 5
RAY_HINT = "pip install 'pddlworlds[ray]'"


class EvaluationError(ValueError):
    """A run cannot start or go on; the message says why and what to do."""


class RunStopped(EvaluationError):
    """The run stopped part-way (server gone, repeated failures, a worker died); finished episodes are stored."""


class ConfigMismatchError(EvaluationError):
    """The output folder holds a run with a different configuration."""

    def __init__(self, out: Path, differences: list[str]):
        self.differences = differences
        keys = ", ".join(d.split(" ", 1)[0] for d in differences)
        detail = "\n  ".join(differences)
        super().__init__(
            f"refusing to resume {out}: it holds a run with a different configuration "
            f"(differing keys: {keys}).\n  {detail}\n"
            "Repeat the original options to resume it, or choose another --out."
        )


# ------------------------------------------------------------------------------------------------
# What to run.


@dataclass(frozen=True)
class BackendSpec:
    """How to build the model in whichever process plays an episode (picklable; the key is never stored).

    `kind`: "none" (no agent needs a model), "embedded" (llama.cpp; `model` an optional GGUF path) or
    "openai" (`model` the model name at `base_url`).
    """

    kind: str = "none"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False, compare=False)
    n_threads: int | None = None
    lora: str | None = None  # a llama.cpp LoRA adapter GGUF for the embedded model

    def build(self) -> Any:
        if self.kind == "none":
            return None
        from .. import llm as llm_module

        if self.kind == "embedded":
            return llm_module.EmbeddedLLM(self.model, n_threads=self.n_threads, lora_path=self.lora)
        if self.kind == "openai":
            return llm_module.OpenAICompatibleLLM(
                self.model or "", base_url=self.base_url, api_key=self.api_key
            )
        raise EvaluationError(f"unknown model backend {self.kind!r}; backends: none, embedded, openai")

    def describe(self, llm: Any) -> dict[str, Any] | None:
        """The config entry: what identifies the model (not where a file lies, never the key)."""
        if self.kind == "none":
            return None
        if self.kind == "embedded":
            return {
                "backend": "embedded",
                "model_id": getattr(llm, "model_id", None),
                "model_sha256": getattr(llm, "model_sha256", None),
            }
        return {"backend": "openai", "model": self.model, "base_url": getattr(llm, "base_url", self.base_url)}


def parse_llm(text: str, base_url: str | None = None, api_key: str | None = None) -> BackendSpec:
    """`embedded`, `embedded:PATH.gguf` or `openai:MODEL` (with `base_url`) as a `BackendSpec`."""
    kind, _, rest = text.partition(":")
    kind = kind.strip().lower()
    if kind == "embedded":
        if base_url:
            raise EvaluationError("--base-url is for --llm openai:MODEL, not the embedded model")
        return BackendSpec("embedded", model=rest or None)
    if kind == "openai":
        if not rest:
            raise EvaluationError(
                "--llm openai needs a model name: --llm openai:MODEL (e.g. openai:gpt-4o-mini)"
            )
        return BackendSpec("openai", model=rest, base_url=base_url, api_key=api_key)
    raise EvaluationError(f"unknown --llm {text!r}; use one of: embedded, embedded:PATH.gguf, openai:MODEL")


@dataclass(frozen=True, order=True)
class EpisodeSpec:
    """One episode to play (picklable)."""

    agent: str
    domain: str
    split: str
    problem: str
    seed: int | None
    max_steps: int = 30

    @property
    def key(self) -> tuple[str, str, str, str, int | None]:
        return (self.agent, self.domain, self.split, self.problem, self.seed)


def agent_names() -> list[str]:
    """The built-in agents' names (empty while `pddlworlds.agents` has none)."""
    try:
        from ..agents import AGENT_NAMES
    except ImportError:
        return []
    return list(AGENT_NAMES)


def resolve_agent(name: str) -> tuple[Callable[[Any], Any], bool]:
    """(factory(llm) -> Agent, needs a model) for a built-in name or a `package.module:factory` path.

    A factory of your own says it needs no model with an attribute `needs_llm = False`.
    """
    if ":" in name:
        module_name, _, attr = name.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise EvaluationError(f"cannot load agent factory {name!r}: {exc}") from exc
        if not callable(factory):
            raise EvaluationError(f"agent factory {name!r} is not callable")
        return factory, bool(getattr(factory, "needs_llm", True))
    known = agent_names()
    if name not in known:
        listed = ", ".join(known) if known else "(none: pddlworlds.agents has no make_agent yet)"
        raise EvaluationError(f"unknown agent {name!r}; agents: {listed}; or give package.module:factory")
    from .. import agents

    llm_agents = getattr(agents, "LLM_AGENT_NAMES", None)
    needs_llm = name in llm_agents if llm_agents is not None else name not in BUILTIN_LLM_FREE_AGENTS
    return functools.partial(_make_builtin_agent, name), needs_llm


def _make_builtin_agent(name: str, llm: Any) -> Any:
    from ..agents import make_agent

    return make_agent(name, llm)


@dataclass
class RunPlan:
    """The episodes of a run: agents x domains x problems x seeds, on one split with one step budget."""

    agents: list[str]
    problems: dict[str, list[str]]  # domain -> problem names, in the order they are played
    split: str = "agentboard"
    seeds: list[int] = field(default_factory=lambda: [0])
    max_steps: int = 30
    backend: BackendSpec = field(default_factory=BackendSpec)

    @property
    def domains(self) -> list[str]:
        return list(self.problems)

    def episodes(self) -> list[EpisodeSpec]:
        """Problem by problem, every agent on it, so a partial run already holds paired episodes."""
        return [
            EpisodeSpec(agent, domain, self.split, problem, seed, self.max_steps)
            for domain, problems in self.problems.items()
            for problem in problems
            for seed in self.seeds
            for agent in self.agents
        ]

    def needs_llm(self) -> bool:
        return any(resolve_agent(a)[1] for a in self.agents)


# ------------------------------------------------------------------------------------------------
# Playing one episode (in whichever process).

_LLMS: dict[BackendSpec, Any] = {}
_LLMS_LOCK = threading.Lock()
_LOCAL = threading.local()


def _llm_for(backend: BackendSpec) -> Any:
    with _LLMS_LOCK:
        if backend not in _LLMS:
            _LLMS[backend] = backend.build()
        return _LLMS[backend]


def _quiet_warnings() -> None:
    from ..pddl import PDDLNormalisationWarning

    warnings.simplefilter("ignore", PDDLNormalisationWarning)  # known quirks of the shipped problems


def _init_worker(backend: BackendSpec) -> None:
    """Pool initializer: one model per process, built once."""
    _quiet_warnings()
    _llm_for(backend)


def _env_for(spec: EpisodeSpec) -> Any:
    """One environment per (domain, split, budget) per thread, reused across episodes."""
    import gymnasium as gym

    import pddlworlds  # noqa: F401  (registers the environments)

    from ..registration import env_id

    envs = getattr(_LOCAL, "envs", None)
    if envs is None:
        envs = _LOCAL.envs = {}
    key = (spec.domain, spec.split, spec.max_steps)
    if key not in envs:
        envs[key] = gym.make(env_id(spec.domain), split=spec.split, max_episode_steps=spec.max_steps)
    return envs[key]


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")


def run_episode(spec: EpisodeSpec, backend: BackendSpec) -> dict[str, Any]:
    """Play one episode and return its stored line: `EpisodeRecord.to_dict()` plus `meta`.

    The record's `agent` is the name the run asked for (an ablation's agent may call itself otherwise;
    that name is kept in `meta.agent_name`).
    """
    factory, needs_llm = resolve_agent(spec.agent)
    llm = _llm_for(backend) if needs_llm else None
    agent = factory(llm)
    env = _env_for(spec)
    started = _now()
    record = agent.run(env, seed=spec.seed, options={"problem": spec.problem})
    data = record.to_dict()
    if (data["domain"], data["split"], data["problem"]) != (spec.domain, spec.split, spec.problem):
        raise RuntimeError(
            f"agent played {data['domain']}/{data['split']}/{data['problem']}, "
            f"not {spec.domain}/{spec.split}/{spec.problem}"
        )
    data["meta"] = {
        "agent_name": data["agent"],
        "max_steps": spec.max_steps,
        "started_at": started,
        "finished_at": _now(),
        "host": platform.node(),
        "pid": os.getpid(),
    }
    data["agent"] = spec.agent
    data["seed"] = spec.seed
    return data


def _run_safely(spec: EpisodeSpec, backend: BackendSpec) -> dict[str, Any]:
    """`run_episode` that never raises: {"ok": True, "line": ...} or {"ok": False, "error": ..., "fatal": ...}."""
    try:
        _quiet_warnings()
        return {"ok": True, "line": run_episode(spec, backend)}
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides
        from ..llm import LLMUnavailableError

        return {
            "ok": False,
            "spec": dataclasses.asdict(spec),
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(),
            "fatal": isinstance(exc, (LLMUnavailableError, MemoryError)),
        }


# ------------------------------------------------------------------------------------------------
# The run folder.


def _json_line(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


class RunStore:
    """The files of one run folder; `lock()` keeps a second `eval` from writing to it at the same time."""

    def __init__(self, out: str | os.PathLike[str]):
        self.out = Path(out)
        self.config_path = self.out / CONFIG_FILE
        self.episodes_path = self.out / EPISODES_FILE
        self.errors_path = self.out / ERRORS_FILE

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        import fcntl

        self.out.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.out / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
                raise EvaluationError(
                    f"{self.out} is being written by another eval (pid {holder}); wait for it or stop it"
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            yield
        finally:
            os.close(fd)  # releases the lock

    def read_config(self) -> dict[str, Any] | None:
        if not self.config_path.is_file():
            return None
        try:
            return json.loads(self.config_path.read_text())
        except ValueError as exc:
            raise EvaluationError(
                f"{self.config_path} is not valid JSON ({exc}); move it away to start anew"
            ) from exc

    def write_config(self, config: dict[str, Any]) -> None:
        atomic_write(self.config_path, json.dumps(config, indent=2, sort_keys=True) + "\n", fsync=True)

    def load_lines(self, repair: bool = False) -> list[dict[str, Any]]:
        """Every stored episode line, in file order; a torn last line (a run killed mid-write) is dropped,
        and with `repair` also cut off the file so that the next append starts on a fresh line."""
        if not self.episodes_path.is_file():
            return []
        data = self.episodes_path.read_bytes()
        end = data.rfind(b"\n") + 1  # bytes up to the last complete line
        lines = []
        for number, raw in enumerate(data[:end].split(b"\n")[:-1], start=1):
            if not raw.strip():
                continue
            try:
                lines.append(json.loads(raw))
            except ValueError as exc:
                raise EvaluationError(
                    f"{self.episodes_path}, line {number}, is not valid JSON ({exc}); only a torn last line "
                    "is expected after a crash: fix or remove that line"
                ) from exc
        if end < len(data):
            tail = data[end:]
            try:  # a complete last line that only lacks its newline is kept
                lines.append(json.loads(tail))
                if repair:
                    with open(self.episodes_path, "ab") as handle:
                        handle.write(b"\n")
                        os.fsync(handle.fileno())
            except ValueError:
                if repair:
                    os.truncate(self.episodes_path, end)
        return lines

    def append(self, line: dict[str, Any], path: Path | None = None) -> None:
        """Append one line: a single `os.write` on an O_APPEND descriptor, then fsync.

        Only the process holding `lock()` appends, so a short write (a full disk) is undone by cutting the
        file back to its size before the write, and never leaves a torn line in the middle of the file.
        """
        target = path or self.episodes_path
        payload = _json_line(line)
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            try:
                written = os.write(fd, payload)
            except OSError:
                os.ftruncate(fd, size)
                raise
            if written != len(payload):
                os.ftruncate(fd, size)
                raise OSError(f"short write to {target}: {written} of {len(payload)} bytes (disk full?)")
            os.fsync(fd)
        finally:
            os.close(fd)


def line_key(line: dict[str, Any]) -> tuple[str, str, str, str, int | None]:
    return (line["agent"], line["domain"], line["split"], line["problem"], line.get("seed"))


# ------------------------------------------------------------------------------------------------
# Configuration.


def _package_version() -> str:
    from .. import __version__

    return __version__


def _prompts_version() -> str | None:
    try:
        from ..agents.prompts import PROMPTS_VERSION
    except ImportError:
        return None
    return str(PROMPTS_VERSION)


def build_config(
    plan: RunPlan, llm: Any = None, agent_flags: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The run's identity (compared on resume) plus `run_info` (when, where; not compared)."""
    uses_llm = plan.backend.kind != "none"
    config = {
        "format": CONFIG_FORMAT,
        "package_version": _package_version(),
        "agents": {a: (agent_flags or {}).get(a, {}) for a in plan.agents},
        "split": plan.split,
        "domains": plan.domains,
        "problems": plan.problems,
        "seeds": list(plan.seeds),
        "max_steps": plan.max_steps,
        "llm": plan.backend.describe(llm),
        "prompts_version": _prompts_version() if uses_llm else None,
    }
    config = json.loads(json.dumps(config))  # tuples -> lists, so stored and new compare alike
    config["run_info"] = {"created_at": _now(), "host": platform.node()}
    return config


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


_MISSING = object()


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(absent)"
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def config_differences(stored: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """'key (stored X, now Y)' for every compared key whose value differs (`run_info` is not compared)."""
    a = _flatten({k: v for k, v in stored.items() if k != "run_info"})
    b = _flatten({k: v for k, v in new.items() if k != "run_info"})
    out = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, _MISSING), b.get(key, _MISSING)
        if va != vb:
            out.append(f"{key} (stored {_show(va)}, now {_show(vb)})")
    return out


# ------------------------------------------------------------------------------------------------
# The run.


@dataclass
class RunResult:
    out: Path
    config: dict[str, Any]
    lines: list[dict[str, Any]]  # every finished episode on file, in file order
    new: int  # episodes played by this call
    planned: int
    failures: list[dict[str, Any]]  # episodes that raised in this call (retried by the next)
    interrupted: bool = False

    @property
    def complete(self) -> bool:
        return len(self.lines) >= self.planned and not self.failures


def _uses_failed_calls(line: dict[str, Any]) -> bool:
    if line.get("error"):
        return True
    return any(c.get("error") for s in line.get("trajectory", []) for c in s.get("calls", []))


def _prepare_llm(plan: RunPlan) -> Any:
    """Build the model in this process (for the config, and to fail before any episode runs)."""
    from ..llm import LLMUnavailableError

    try:
        llm = plan.backend.build()
    except ImportError as exc:
        raise EvaluationError(f"cannot use the {plan.backend.kind} model: {exc}") from exc
    except FileNotFoundError as exc:
        raise EvaluationError(str(exc)) from exc
    if plan.backend.kind == "openai":
        try:
            llm.check_available()
        except LLMUnavailableError as exc:
            raise EvaluationError(
                f"the model server is not available: {exc}\n"
                "Start it, or check --base-url / --api-key (OPENAI_API_KEY), then run the same command again."
            ) from exc
    return llm


def run_evaluation(
    plan: RunPlan,
    out: str | os.PathLike[str],
    *,
    workers: int | None = 1,
    backend: str = "local",
    progress: bool = True,
    on_line: Callable[[dict[str, Any]], None] | None = None,
    parallel: str = "auto",
) -> RunResult:
    """Play every episode of `plan` not yet on file in `out`, storing each as it ends.

    `backend` "local" plays in this process (`workers` = 1), in threads (a server, or no model) or in
    spawned processes (the embedded model, one per process); "ray" hands episodes to Ray actors.
    `parallel` ("auto", "process" or "thread") overrides that choice for local workers > 1.
    `workers=None` picks for the model: the embedded one gets a process per core (at most 8), each
    llama.cpp running one thread (faster than one process running several on a busy machine: its
    threads spin while they wait for each other); a server gets 4 threads; agents without a model 1.
    Raises `EvaluationError` (and `ConfigMismatchError`) before anything runs when the plan cannot run.
    """
    if backend not in ("local", "ray"):
        raise EvaluationError(f"unknown --backend {backend!r}; backends: local, ray")
    if workers is not None and workers < 1:
        raise EvaluationError("--workers must be at least 1")
    if parallel not in ("auto", "process", "thread"):
        raise EvaluationError(f"unknown parallel mode {parallel!r}; modes: auto, process, thread")
    resolved = {name: resolve_agent(name) for name in plan.agents}  # unknown names fail here, before a model
    if backend == "ray":
        _import_ray()
    _quiet_warnings()
    store = RunStore(out)
    needs_llm = any(agent_needs_llm for _, agent_needs_llm in resolved.values())
    if not needs_llm:
        plan = dataclasses.replace(plan, backend=BackendSpec("none"))
    if workers is None:
        workers = auto_workers(plan.backend.kind)
    if plan.backend.kind == "embedded" and workers > 1 and backend == "local":
        threads = max(1, (_cpu_count() // workers))
        plan = dataclasses.replace(plan, backend=dataclasses.replace(plan.backend, n_threads=threads))
    llm = _prepare_llm(plan) if needs_llm else None
    if llm is not None:
        _LLMS[plan.backend] = llm  # episodes played in this process reuse it
    flags = {}
    for name, (factory, agent_needs_llm) in resolved.items():
        flags[name] = dict(factory(llm if agent_needs_llm else None).flags())
    config = build_config(plan, llm, flags)

    with store.lock():
        stored = store.read_config()
        if stored is not None:
            differences = config_differences(stored, config)
            if differences:
                raise ConfigMismatchError(store.out, differences)
            config = stored
        else:
            if store.episodes_path.exists() and store.episodes_path.stat().st_size:
                raise EvaluationError(
                    f"{store.out} has {EPISODES_FILE} but no {CONFIG_FILE}; choose another --out"
                )
            store.write_config(config)
        lines = store.load_lines(repair=True)
        done = set()
        kept = []
        for line in lines:
            key = line_key(line)
            if key not in done:  # a duplicate cannot be written by this module; keep the first if found
                done.add(key)
                kept.append(line)
        lines = kept
        episodes = plan.episodes()
        todo = [spec for spec in episodes if spec.key not in done]
        result = RunResult(store.out, config, lines, 0, len(episodes), [])
        if todo:
            _play(
                plan,
                todo,
                store,
                result,
                llm,
                workers,
                backend,
                progress,
                on_line,
                len(episodes) - len(todo),
                parallel,
            )
    return result


def auto_workers(kind: str) -> int:
    """Episodes at once when the user did not say: see `run_evaluation`."""
    if kind == "embedded":
        return max(1, min(_cpu_count(), 8))
    if kind == "openai":
        return 4
    return 1


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise EvaluationError(f"--backend ray needs Ray, an optional extra: {RAY_HINT}") from exc
    return ray


def _play(
    plan: RunPlan,
    todo: list[EpisodeSpec],
    store: RunStore,
    result: RunResult,
    llm: Any,
    workers: int,
    backend: str,
    progress: bool,
    on_line: Callable[[dict[str, Any]], None] | None,
    already: int,
    parallel: str = "auto",
) -> None:
    from tqdm import tqdm

    bar = tqdm(
        total=result.planned,
        initial=already,
        desc="episodes",
        unit="ep",
        disable=not progress,
        dynamic_ncols=True,
    )
    consecutive_failures = 0
    solved = sum(1 for line in result.lines if line.get("success"))

    def handle(outcome: dict[str, Any]) -> None:
        nonlocal consecutive_failures, solved
        if not outcome["ok"]:
            consecutive_failures += 1
            failure = {**outcome, "at": _now()}
            result.failures.append(failure)
            store.append(failure, store.errors_path)
            spec = outcome["spec"]
            bar.write(
                f"episode {spec['agent']} {spec['domain']}/{spec['problem']} seed {spec['seed']} failed: {outcome['error']}"
            )
            if outcome.get("fatal"):
                raise RunStopped(f"stopping: {outcome['error']}\nRun the same command again to resume.")
            if consecutive_failures >= MAX_CONSECUTIVE_FAILURES:
                raise RunStopped(
                    f"stopping after {consecutive_failures} failed episodes in a row; the last one:\n"
                    f"{outcome['traceback']}\nFix the cause and run the same command again to resume."
                )
            return
        line = outcome["line"]
        if plan.backend.kind == "openai" and llm is not None and _uses_failed_calls(line):
            # A server that went down mid-run makes every call fail: such an episode is not the agent's.
            from ..llm import LLMUnavailableError

            try:
                llm.check_available()
            except LLMUnavailableError as exc:
                raise RunStopped(
                    f"the model server went away during the run ({exc}); the last episode was not stored.\n"
                    "Run the same command again to resume."
                ) from exc
        consecutive_failures = 0
        store.append(line)
        result.lines.append(line)
        result.new += 1
        solved += 1 if line.get("success") else 0
        bar.set_postfix_str(
            f"{line['agent']} {line['domain']}/{line['problem']} PR {line['progress']:.2f}; solved {solved}"
        )
        bar.update(1)
        if on_line is not None:
            on_line(line)

    workers = max(1, min(workers, len(todo)))
    try:
        if backend == "ray":
            _play_ray(plan, todo, workers, handle)
        elif workers == 1:
            for spec in todo:
                handle(_run_safely(spec, plan.backend))
        else:
            processes = parallel == "process" or (parallel == "auto" and plan.backend.kind == "embedded")
            _play_pool(plan, todo, workers, handle, processes)
    except KeyboardInterrupt:
        result.interrupted = True
        bar.write(
            f"interrupted: {len(result.lines)} episodes are stored; run the same command again to resume"
        )
    finally:
        bar.close()


def _play_pool(
    plan: RunPlan,
    todo: list[EpisodeSpec],
    workers: int,
    handle: Callable[[dict[str, Any]], None],
    processes: bool,
) -> None:
    """At most `workers` episodes in flight; results are handled (stored) as each one ends."""
    if processes:
        import multiprocessing

        pool: Any = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(plan.backend,),
        )
    else:
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="episode")
    pending: set[Future] = set()
    queue = list(reversed(todo))
    finished_normally = False
    try:
        while queue or pending:
            while queue and len(pending) < workers:
                pending.add(pool.submit(_run_safely, queue.pop(), plan.backend))
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=lambda f: id(f)):
                try:
                    outcome = future.result()
                except Exception as exc:  # a worker process died (killed, out of memory)
                    raise RunStopped(
                        f"a worker process died ({type(exc).__name__}: {exc}); finished episodes are stored. "
                        "Run the same command again to resume."
                    ) from exc
                handle(outcome)
        finished_normally = True
    finally:
        # On an error or Ctrl-C, do not wait for episodes in flight: they are not stored and will rerun.
        pool.shutdown(wait=finished_normally, cancel_futures=True)


def _play_ray(
    plan: RunPlan, todo: list[EpisodeSpec], workers: int, handle: Callable[[dict[str, Any]], None]
) -> None:
    """One Ray actor per worker, each building its model once; results come back to this process."""
    ray = _import_ray()
    from ray.util import ActorPool

    if not ray.is_initialized():
        ray.init()  # RAY_ADDRESS, if set, joins a cluster; otherwise a local one
    actor_class = ray.remote(num_cpus=1)(_RayEpisodeWorker)
    actors = [actor_class.remote(plan.backend) for _ in range(workers)]
    pool = ActorPool(actors)
    try:
        for spec in todo:
            pool.submit(lambda actor, s: actor.run.remote(s), spec)
        while pool.has_next():
            handle(pool.get_next_unordered())
    finally:
        for actor in actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)


class _RayEpisodeWorker:
    """Body of a Ray actor (wrapped with `ray.remote` at run time, so Ray stays an optional import)."""

    def __init__(self, backend: BackendSpec):
        _init_worker(backend)
        self.backend = backend

    def run(self, spec: EpisodeSpec) -> dict[str, Any]:
        return _run_safely(spec, self.backend)


def specs_from(config: dict[str, Any]) -> list[EpisodeSpec]:
    """The planned episodes of a stored config (what a report compares the file against)."""
    plan = RunPlan(
        agents=list(config.get("agents", {})),
        problems={d: list(p) for d, p in config.get("problems", {}).items()},
        split=config.get("split", "agentboard"),
        seeds=list(config.get("seeds", [0])),
        max_steps=int(config.get("max_steps", 30)),
    )
    return plan.episodes()
