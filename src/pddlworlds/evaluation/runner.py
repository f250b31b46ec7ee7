"""The run loop: play every episode of a plan not yet on file, storing each as it ends, so a killed run resumes.

One run lives in one folder (its format: `artefacts.runs`; writing it: `store`): the configuration (what
the run measures; resuming with anything different is refused, naming the keys that differ), the episode
lines (one per finished episode; episodes already on file are never played again, key: agent, domain,
split, problem, seed) and the error lines (episodes that raised: the next run retries them).

Episodes run where the executor puts them (`executors`: this process, threads, spawned processes, Ray
actors); how many at once and threads or processes is the model backend's call (`pddlworlds.llm.BACKENDS`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..artefacts.runs import CONFIG_FILE, EPISODES_FILE, episode_key, is_errored
from ..host import default_threads
from ..llm import NO_MODEL, BackendSpec, LLMUnavailableError
from ..planning.baselines import BASELINE_TIMEOUT, BASELINES_FILE, ensure_baselines, fill_optimal
from ..printable import printable
from .configuration import build_config, config_differences, resume_hint
from .episode import quiet_warnings, remember_llm
from .errors import ConfigMismatchError, EvaluationError, RunStopped
from .executors import EXECUTORS, import_ray, play_pool, play_ray, play_serial
from .spec import EpisodeSpec, RunPlan, resolve_agent
from .store import RunStore, utc_now

__all__ = ["MAX_CONSECUTIVE_FAILURES", "PlayContext", "RunResult", "auto_workers", "run_evaluation"]

#: Stop after this many episodes in a row raised: something is broken for all of them.
MAX_CONSECUTIVE_FAILURES = 5
#: Parallel modes for local workers > 1 ("auto": the backend decides).
PARALLEL_MODES = ("auto", "process", "thread")


@dataclass
class RunResult:
    out: Path
    config: dict[str, Any]
    lines: list[dict[str, Any]]  # every finished episode on file, in file order
    new: int  # episodes played by this call
    planned: int
    failures: list[dict[str, Any]]  # episodes that raised in this call (retried by the next)
    interrupted: bool = False
    rerun: int = 0  # episodes on file with a fault that this call played again
    skipped: str = ""  # torn or duplicate lines the episode file had, in words

    @property
    def errored(self) -> list[dict[str, Any]]:
        """Stored episodes stopped by a fault outside the agent (not scored; the next run re-runs them)."""
        return [line for line in self.lines if is_errored(line)]

    @property
    def complete(self) -> bool:
        return len(self.lines) >= self.planned and not self.failures and not self.errored


@dataclass
class PlayContext:
    """Everything the playing part of a run needs, decided by `run_evaluation` before anything plays."""

    plan: RunPlan
    todo: list[EpisodeSpec]
    store: RunStore
    result: RunResult
    llm: Any
    workers: int
    executor: str = "local"
    progress: bool = True
    on_line: Callable[[dict[str, Any]], None] | None = None
    already: int = 0  # episodes on file before this call
    parallel: str = "auto"
    #: (domain, split, problem) -> the planner's baseline, for `--domains-root` domains (`planning.baselines`)
    baselines: dict[tuple[str, str, str], Any] = dataclasses.field(default_factory=dict)


def _uses_failed_calls(line: dict[str, Any]) -> bool:
    if line.get("error"):
        return True
    return any(c.get("error") for s in line.get("trajectory", []) for c in s.get("calls", []))


def _fault_text(fault: Any) -> str:
    if isinstance(fault, dict):
        return f"{fault.get('kind')}: {fault.get('message')}"
    return str(fault)


def _check_available(llm: Any) -> None:
    """Raise `LLMUnavailableError` when a backend that can tell says its model is unreachable."""
    check = getattr(llm, "check_available", None)
    if callable(check):
        check()


def _prepare_llm(plan: RunPlan) -> Any:
    """Build the model in this process (for the config, and to fail before any episode runs)."""
    try:
        llm = plan.backend.build()
    except ImportError as exc:
        raise EvaluationError(f"cannot use the {plan.backend.kind} model: {exc}") from exc
    except FileNotFoundError as exc:
        raise EvaluationError(str(exc)) from exc
    try:
        _check_available(llm)
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
    executor: str = "local",
    progress: bool = True,
    on_line: Callable[[dict[str, Any]], None] | None = None,
    parallel: str = "auto",
    baseline_timeout: float | None = BASELINE_TIMEOUT,
) -> RunResult:
    """Play every episode of `plan` not yet on file in `out`, storing each as it ends.

    `executor` "local" plays in this process (`workers` = 1), in threads or in spawned processes (one
    model each), as the model backend says (`Backend.processes`); "ray" hands episodes to Ray actors.
    `parallel` ("auto", "process" or "thread") overrides that choice for local workers > 1.
    `workers=None` picks for the model (`auto_workers`). The problems of a `--domains-root` domain get their
    optimal plans from the planner first (fd-opt, `baseline_timeout` s each; None: not planned), kept in
    `optimal_plans.csv` in `out` and copied into the episodes' lines where proven. Raises `EvaluationError` (and
    `ConfigMismatchError`) before anything runs when the plan cannot run.
    """
    if executor not in EXECUTORS:
        raise EvaluationError(f"unknown --executor {executor!r}; executors: {', '.join(EXECUTORS)}")
    if workers is not None and workers < 1:
        raise EvaluationError("--workers must be at least 1")
    if parallel not in PARALLEL_MODES:
        raise EvaluationError(f"unknown parallel mode {parallel!r}; modes: {', '.join(PARALLEL_MODES)}")
    resolved = {  # unknown names fail here, before a model
        name: resolve_agent(name, plan.prompt_file, plan.setting, plan.choice_score, plan.score_all) for name in plan.agents
    }
    if executor == "ray":
        import_ray()
    quiet_warnings()
    store = RunStore(out)
    needs_llm = any(agent_needs_llm for _, agent_needs_llm in resolved.values())
    if not needs_llm:
        plan = dataclasses.replace(plan, backend=BackendSpec(NO_MODEL))
    backend = plan.backend.backend
    if workers is None:
        workers = auto_workers(plan.backend)
    if backend is not None and backend.processes and workers > 1 and executor == "local":
        threads = max(1, (default_threads() // workers))
        plan = dataclasses.replace(plan, backend=dataclasses.replace(plan.backend, n_threads=threads))
    llm = _prepare_llm(plan) if needs_llm else None
    if llm is not None:
        remember_llm(plan.backend, llm)  # episodes played in this process reuse it
    flags = {}
    for name, (factory, agent_needs_llm) in resolved.items():
        flags[name] = dict(factory(llm if agent_needs_llm else None).flags())
    config = build_config(plan, llm, flags)

    with store.lock():
        stored = store.read_config()
        if stored is not None:
            differences = config_differences(stored, config)
            if differences:
                raise ConfigMismatchError(store.out, differences, resume_hint(stored, config))
            config = stored
        else:
            if store.episodes_path.exists() and store.episodes_path.stat().st_size:
                raise EvaluationError(
                    f"{store.out} has {EPISODES_FILE} but no {CONFIG_FILE}; choose another --out"
                )
            store.write_config(config)
        found = store.read_episodes(repair=True)
        lines = [line for line in found.lines if not is_errored(line)]
        rerun = len(found.lines) - len(lines)
        if rerun or found.duplicates:  # faults are played again; a file has one line per episode
            store.rewrite_episodes(lines)
        done = {episode_key(line) for line in lines}
        episodes = plan.episodes()
        todo = [spec for spec in episodes if spec.key not in done]
        result = RunResult(
            store.out, config, lines, 0, len(episodes), [], rerun=rerun, skipped=found.skipped_words()
        )
        baselines: dict[tuple[str, str, str], Any] = {}
        if todo and plan.domains_root is not None and baseline_timeout is not None:
            wanted: dict[str, list[str]] = {}
            for spec in todo:
                if spec.problem not in wanted.setdefault(spec.domain, []):
                    wanted[spec.domain].append(spec.problem)
            baselines = ensure_baselines(
                store.out / BASELINES_FILE, plan.domains_root, wanted, plan.split, timeout=baseline_timeout,
                note=(lambda text: print(printable(text), file=sys.stderr)) if progress else None,
            )
        if todo:
            with _recording_adjustments(store, result, llm):
                play(
                    PlayContext(
                        plan,
                        todo,
                        store,
                        result,
                        llm,
                        workers,
                        executor=executor,
                        progress=progress,
                        on_line=on_line,
                        already=len(episodes) - len(todo),
                        parallel=parallel,
                        baselines=baselines,
                    )
                )
    return result


@contextlib.contextmanager
def _recording_adjustments(store: RunStore, result: RunResult, llm: Any) -> Iterator[None]:
    """After playing (also when stopped): record in `config.json`'s `run_info` what the backend changed in
    its requests because the server rejected them (dropped parameters, `max_completion_tokens`)."""
    try:
        yield
    finally:
        adjustments = getattr(llm, "adjustments", None)
        changed = adjustments() if callable(adjustments) else None
        if changed and (
            changed.get("dropped_parameters") or changed.get("token_limit_parameter") != "max_tokens"
        ):
            config = dict(result.config)
            config["run_info"] = {**config.get("run_info", {}), "llm_adjustments": changed}
            with contextlib.suppress(OSError):  # a full disk must not hide the run's own error
                store.write_config(config)
                result.config = config


def auto_workers(backend: BackendSpec) -> int:
    """Episodes at once when the user did not say: the backend's `default_workers` (None: a process per
    core, at most 8, each llama.cpp running one thread, faster than one process running several on a busy
    machine, whose threads spin while they wait for each other); agents without a model 1."""
    entry = backend.backend
    if entry is None:
        return 1
    if entry.default_workers is None:
        return max(1, min(default_threads(), 8))
    return entry.default_workers


def play(ctx: PlayContext) -> None:
    """Play `ctx.todo` with the chosen executor, storing each finished episode as it comes back."""
    from tqdm import tqdm

    plan, store, result, llm = ctx.plan, ctx.store, ctx.result, ctx.llm
    bar = tqdm(
        total=result.planned,
        initial=ctx.already,
        desc="episodes",
        unit="ep",
        disable=not ctx.progress,
        dynamic_ncols=True,
    )
    consecutive_failures = consecutive_faults = 0
    solved = sum(1 for line in result.lines if line.get("success"))

    def note(text: str) -> None:  # above the bar, on stderr: stdout carries only the results table
        bar.write(printable(text), file=sys.stderr)

    def handle(outcome: dict[str, Any]) -> None:
        nonlocal consecutive_failures, consecutive_faults, solved
        if not outcome["ok"]:
            consecutive_failures += 1
            failure = {**outcome, "at": utc_now()}
            result.failures.append(failure)
            store.append(failure, store.errors_path)
            spec = outcome["spec"]
            note(f"episode {spec['agent']} {spec['domain']}/{spec['problem']} seed {spec['seed']} failed: {outcome['error']}")
            if outcome.get("fatal"):
                raise RunStopped(f"stopping: {outcome['error']}\nRun the same command again to resume.")
            if consecutive_failures >= MAX_CONSECUTIVE_FAILURES:
                raise RunStopped(
                    f"stopping after {consecutive_failures} failed episodes in a row; the last one:\n"
                    f"{outcome['traceback']}\nFix the cause and run the same command again to resume."
                )
            return
        line = outcome["line"]
        fault = line.get("error") if is_errored(line) else None
        if isinstance(fault, dict) and fault.get("kind") == "cancelled":
            return  # interrupted mid-call: not stored, the next run plays it
        if llm is not None and _uses_failed_calls(line):
            # A server that went down mid-run makes every call fail: such an episode is not the agent's.
            try:
                _check_available(llm)
            except LLMUnavailableError as exc:
                raise RunStopped(
                    f"the model server went away during the run ({exc}); the last episode was not stored.\n"
                    "Run the same command again to resume."
                ) from exc
        consecutive_failures = 0
        consecutive_faults = consecutive_faults + 1 if fault else 0
        fill_optimal(line, ctx.baselines)
        store.append(line)
        result.lines.append(line)
        result.new += 1
        solved += 1 if line.get("success") else 0
        bar.set_postfix_str(
            f"{line['agent']} {line['domain']}/{line['problem']} PR {line['progress']:.2f}; solved {solved}"
        )
        bar.update(1)
        if fault:
            note(f"episode {line['agent']} {line['domain']}/{line['problem']} seed {line['seed']}: {_fault_text(fault)}")
        if ctx.on_line is not None:
            ctx.on_line(line)
        if consecutive_faults >= MAX_CONSECUTIVE_FAILURES:
            raise RunStopped(
                f"stopping after {consecutive_faults} episodes in a row stopped by the model endpoint; the last: "
                f"{_fault_text(fault)}\nFix the endpoint, then run the same command again: it re-runs the "
                "episodes stopped by a fault, and only those."
            )

    workers = max(1, min(ctx.workers, len(ctx.todo)))
    backend = plan.backend.backend
    try:
        if ctx.executor == "ray":
            play_ray(plan, ctx.todo, workers, handle)
        elif workers == 1:
            play_serial(plan, ctx.todo, handle)
        else:
            by_backend = backend is not None and backend.processes
            processes = ctx.parallel == "process" or (ctx.parallel == "auto" and by_backend)
            play_pool(plan, ctx.todo, workers, handle, processes)
    except KeyboardInterrupt:
        cancel = getattr(llm, "cancel", None)
        if callable(cancel):  # end the model calls still in flight in worker threads
            cancel()
        result.interrupted = True
        note(f"interrupted: {len(result.lines)} episodes are stored; run the same command again to resume")
    finally:
        bar.close()
