"""Where episodes run: this process, a pool (threads, or spawned processes that each load the model once)
or Ray actors. Each executor hands every outcome to `handle` in this process as soon as it ends. Stopped
early (an error, Ctrl-C, SIGTERM through `processes.signals_interrupt`), an executor ends its workers before
it returns: episodes under way are dropped (a resume plays them), none is left computing."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from typing import Any

from ..llm import BackendSpec
from ..processes import end_processes, pool_processes, tie_to_parent
from .episode import init_worker, run_safely
from .errors import EvaluationError, RunStopped
from .ray_watchdog import RayWatchdog
from .spec import EpisodeSpec, RunPlan

__all__ = [
    "EXECUTORS",
    "RAY_HINT",
    "RayEpisodeWorker",
    "import_ray",
    "play_pool",
    "play_ray",
    "play_serial",
    "start_worker",
]

#: Where episodes can run (`--executor`).
EXECUTORS = ("local", "ray")


RAY_HINT = "pip install 'pddlworlds[ray]'"


def import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise EvaluationError(f"--executor ray needs Ray, an optional extra: {RAY_HINT}") from exc
    return ray


def play_pool(
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
            initializer=start_worker,
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
                pending.add(pool.submit(run_safely, queue.pop(), plan.backend))
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
        # On an error, Ctrl-C or SIGTERM, do not wait for episodes in flight: they are not stored and will
        # rerun; their worker processes are ended now, not left to finish them.
        workers_left = [] if finished_normally else pool_processes(pool)
        pool.shutdown(wait=finished_normally, cancel_futures=True)
        end_processes(workers_left)


def play_ray(
    plan: RunPlan, todo: list[EpisodeSpec], workers: int, handle: Callable[[dict[str, Any]], None]
) -> None:
    """One Ray actor per worker, each building its model once; results come back to this process."""
    ray = import_ray()
    from ray.util import ActorPool

    watchdog = None
    if not ray.is_initialized():
        if not os.environ.get("RAY_ADDRESS"):  # a local cluster of our own: cleaned up even after a SIGKILL
            watchdog = RayWatchdog.start()
        ray.init()  # RAY_ADDRESS, if set, joins a cluster; otherwise a local one
    if watchdog is not None:
        watchdog.track_in_background()
    actor_class = ray.remote(num_cpus=1)(RayEpisodeWorker)
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


class RayEpisodeWorker:
    """Body of a Ray actor (wrapped with `ray.remote` at run time, so Ray stays an optional import)."""

    def __init__(self, backend: BackendSpec):
        start_worker(backend)
        self.backend = backend

    def run(self, spec: EpisodeSpec) -> dict[str, Any]:
        return run_safely(spec, self.backend)


def start_worker(backend: BackendSpec) -> None:
    """A worker process's start: it ends when this process (its parent) ends, then builds its model."""
    tie_to_parent()
    init_worker(backend)


def play_serial(plan: RunPlan, todo: list[EpisodeSpec], handle: Callable[[dict[str, Any]], None]) -> None:
    """One episode after the other, in this process."""
    for spec in todo:
        handle(run_safely(spec, plan.backend))
