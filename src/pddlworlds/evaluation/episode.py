"""Playing one episode in whichever process (this one, a pool worker, a Ray actor): plain functions of
picklable arguments. Each process keeps its model (built once) and one environment per thread."""

from __future__ import annotations

import dataclasses
import os
import platform
import threading
import time
import traceback
from typing import Any

from ..llm import BackendSpec, LLMServiceError, LLMUnavailableError, for_cache_owner
from ..records import EpisodeRecord
from .spec import EpisodeSpec, resolve_agent
from .store import utc_now

__all__ = [
    "RAW_OUTPUT_LIMIT",
    "cap_raw_outputs",
    "env_for",
    "init_worker",
    "llm_for",
    "quiet_warnings",
    "remember_llm",
    "run_episode",
    "run_safely",
]


#: Per process: the model of each backend spec (built once), and each thread's environments.
_LLMS: dict[BackendSpec, Any] = {}
_LLMS_LOCK = threading.Lock()
_LOCAL = threading.local()


def llm_for(backend: BackendSpec) -> Any:
    with _LLMS_LOCK:
        if backend not in _LLMS:
            _LLMS[backend] = backend.build()
        return _LLMS[backend]


def quiet_warnings() -> None:
    from ..worlds.pddl import ignore_normalisation_warnings

    ignore_normalisation_warnings()  # known quirks of the shipped problems


def init_worker(backend: BackendSpec) -> None:
    """Pool initializer: one model per process, built once."""
    quiet_warnings()
    llm_for(backend)


def env_for(spec: EpisodeSpec) -> Any:
    """One environment per (domain and its root, `registration.domain_env_kwargs`) per thread, reused."""
    from ..registration import domain_env_kwargs, make_domain_env  # importing it registered the environments

    envs = getattr(_LOCAL, "envs", None)
    if envs is None:
        envs = _LOCAL.envs = {}
    kwargs = domain_env_kwargs(spec.split, spec.max_steps, profile=spec.profile,
                               observation_mode=spec.observation_mode, allow_impossible=spec.allow_impossible)
    key = (spec.domain, spec.domains_root, *sorted(kwargs.items()))
    if key not in envs:
        envs[key] = make_domain_env(spec.domain, spec.domains_root, **kwargs)
    return envs[key]


#: Raw model replies are stored up to this many characters (with the original length when cut).
RAW_OUTPUT_LIMIT = 16 * 1024


def run_episode(spec: EpisodeSpec, backend: BackendSpec) -> dict[str, Any]:
    """Play one episode and return its stored line: `EpisodeRecord.to_dict()` plus `meta`.

    The record's `agent` is the name the run asked for (an ablation's agent may call itself otherwise;
    that name is kept in `meta.agent_name`). A model call that fails for good (`LLMServiceError`) ends the
    episode as a fault: `error` {kind, message, count}, no score. Raw replies are stored once, cut to
    `RAW_OUTPUT_LIMIT` characters (`cap_raw_outputs`).
    """
    factory, needs_llm = resolve_agent(spec.agent, spec.prompt_file, spec.setting, spec.choice_score, spec.score_all)
    # the agent's own share of the model's prompt cache: its time never depends on who played before it
    llm = for_cache_owner(llm_for(backend), spec.agent) if needs_llm else None
    # an LLM agent of a trial reads the insights its memory handed out for the trial
    agent = factory(llm, insights=spec.insights.selector()) if spec.insights is not None and needs_llm else factory(llm)
    env = env_for(spec)
    started = utc_now()
    clock = time.perf_counter()
    try:
        record = agent.run(env, seed=spec.seed, options={"problem": spec.problem})
    except LLMServiceError as exc:
        record = EpisodeRecord(
            agent=getattr(agent, "name", spec.agent),
            domain=spec.domain,
            split=spec.split,
            problem=spec.problem,
            seed=spec.seed,
            success=False,
            progress=0.0,
            steps=0,
            optimal_length=None,
            run_time_s=time.perf_counter() - clock,
            goal="",
            initial_observation="",
            model=getattr(llm, "model_id", None),
            error=exc.as_record(),
        )
    data = record.to_dict()
    if (data["domain"], data["split"], data["problem"]) != (spec.domain, spec.split, spec.problem):
        raise RuntimeError(
            f"agent played {data['domain']}/{data['split']}/{data['problem']}, "
            f"not {spec.domain}/{spec.split}/{spec.problem}"
        )
    cap_raw_outputs(data)
    data["meta"] = {
        "agent_name": data["agent"],
        "max_steps": spec.max_steps,
        "started_at": started,
        "finished_at": utc_now(),
        "host": platform.node(),
        "pid": os.getpid(),
        **({"trial": spec.trial} if spec.trial is not None else {}),
    }
    data["agent"] = spec.agent
    data["seed"] = spec.seed
    return data


def _cap(holder: dict[str, Any], limit: int) -> None:
    raw = holder.get("raw_output")
    if isinstance(raw, str) and len(raw) > limit:
        holder["raw_output"] = raw[:limit]
        holder["raw_output_length"] = len(raw)


def cap_raw_outputs(line: dict[str, Any], limit: int = RAW_OUTPUT_LIMIT) -> None:
    """Store each raw reply once and at most `limit` characters long (`raw_output_length` keeps the
    original length of a cut one): a step whose action call (in `calls`) holds the same reply keeps it
    there only (`raw_output` null on the step)."""
    for step in line.get("trajectory", []):
        calls = step.get("calls") or []
        if step.get("raw_output") is not None and any(
            c.get("raw_output") == step["raw_output"] for c in calls
        ):
            step["raw_output"] = None
        _cap(step, limit)
        for call in calls:
            _cap(call, limit)


def run_safely(spec: EpisodeSpec, backend: BackendSpec) -> dict[str, Any]:
    """`run_episode` that never raises: {"ok": True, "line": ...} or {"ok": False, "error": ..., "fatal": ...}."""
    try:
        quiet_warnings()
        return {"ok": True, "line": run_episode(spec, backend)}
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides
        return {
            "ok": False,
            "spec": dataclasses.asdict(spec),
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(),
            "fatal": isinstance(exc, (LLMUnavailableError, MemoryError)),
        }


def remember_llm(backend: BackendSpec, llm: Any) -> None:
    """Let episodes played in this process reuse a model the run built already."""
    with _LLMS_LOCK:
        _LLMS[backend] = llm
