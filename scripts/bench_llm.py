#!/usr/bin/env python3
"""Benchmark the LLM backend: load time, prompt and generation speed, and an agent-like episode.

The episode section mimics what an agent does: a system prompt and a task, then
``--calls`` turns that each append the model's reply and a ~``--obs-tokens``
observation and ask for at most ``--reply-tokens``. It runs with KV-prefix reuse
(the default) and, for comparison, with the cache dropped before every call.

Sections are plain functions ``(llm, args) -> dict[str, float]`` registered in
``SECTIONS``; add agent-level benchmarks (STANDARD, HiAgent) there.

    python scripts/bench_llm.py                       # all sections, embedded Gemma 3 270M
    python scripts/bench_llm.py --sections backend --repeat 5 --json out.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any


def _llm_module() -> ModuleType:
    """``pddlworlds.llm``; failing that, that package alone (it needs only ``pddlworlds.host`` beside it).

    The fallback lets this script compare llama.cpp builds in bare venvs holding only
    llama-cpp-python, numpy and the model package, where ``import pddlworlds`` would fail
    on the environment dependencies (gymnasium, unified-planning...): the parent package is
    stood in by an empty module whose path is the source folder, so its ``__init__`` never runs.
    """
    try:
        return importlib.import_module("pddlworlds.llm")
    except ImportError:
        for name in [n for n in sys.modules if n == "pddlworlds" or n.startswith("pddlworlds.")]:
            del sys.modules[name]
        parent = ModuleType("pddlworlds")
        parent.__path__ = [str(Path(__file__).resolve().parents[1] / "src" / "pddlworlds")]
        sys.modules["pddlworlds"] = parent
        return importlib.import_module("pddlworlds.llm")


if TYPE_CHECKING:
    from pddlworlds.llm import LLM, NO_ADAPTER, SHIPPED_ADAPTER, Completion, EmbeddedLLM, Message
else:
    _llm = _llm_module()
    LLM, Completion, EmbeddedLLM, Message = _llm.LLM, _llm.Completion, _llm.EmbeddedLLM, _llm.Message
    NO_ADAPTER, SHIPPED_ADAPTER = _llm.NO_ADAPTER, _llm.SHIPPED_ADAPTER

Section = Callable[[LLM, argparse.Namespace], dict[str, float]]

SYSTEM_PROMPT = (
    "You are an agent acting in a blocks world. Each turn you receive an observation that lists "
    "which blocks are on the table, which blocks are stacked on which, which blocks are clear and "
    "what the arm is holding. Reply with exactly one action in PDDL syntax, such as (pick-up a), "
    "(put-down a), (stack a b) or (unstack a b), and nothing else. Invalid actions are ignored and "
    "waste a step. Plan ahead: the goal usually needs many steps, and blocks that are in the way "
    "must be moved to the table first. Keep track of what you have already tried."
)
TASK = (
    "Goal: build a single tower with block a on block b, b on c, c on d, d on e, e on f and f on "
    "the table. Initial state: f is on a, a is on the table, b is on d, d is on the table, c is on "
    "the table, e is on c. Clear blocks: f, b, e. The arm is empty."
)


def reset_cache(llm: LLM) -> bool:
    """Drop the backend's prompt cache if it has one; False when it cannot be controlled."""
    reset = getattr(llm, "reset", None)
    if reset is None:
        return False
    reset()
    return True


def filler_text(llm: LLM, n_tokens: int, seed: int = 0) -> str:
    """Blocks-world-like prose of about ``n_tokens`` tokens (varied so no n-gram repeats trivially)."""
    sentences: list[str] = []
    i = seed
    while True:
        sentences.append(
            f"At step {i} block b{i % 17} was moved from block b{(i * 7) % 13} onto block "
            f"b{(i * 5) % 11}, leaving b{(i * 3) % 19} clear."
        )
        text = " ".join(sentences)
        if llm.count_tokens(text) >= n_tokens:
            return text
        i += 1


def observation(llm: LLM, step: int, n_tokens: int) -> str:
    return f"Observation {step}: " + filler_text(llm, n_tokens - 4, seed=1000 + 37 * step)


def timed_chat(llm: LLM, messages: list[Message], **kwargs: Any) -> tuple[Completion, float]:
    """A chat call and the process CPU seconds it used.

    CPU time is the contention-proof figure for in-process backends run with one thread: other
    processes on the machine slow the wall clock but not the work done. (With several threads
    llama.cpp's spinning barriers inflate it instead.)
    """
    cpu = time.process_time()
    out = llm.chat(messages, **kwargs)
    return out, time.process_time() - cpu


def _rates(name: str, values: list[float]) -> dict[str, float]:
    return {f"{name}_best": max(values), f"{name}_median": statistics.median(values)} if values else {}


def bench_backend(llm: LLM, args: argparse.Namespace) -> dict[str, float]:
    """Cold prompt throughput (~``--prompt-tokens``) and generation throughput (``--gen-tokens``).

    Generation speed is the difference between an N-token and a 1-token answer to the same
    cached prompt, so prompt evaluation cancels out. Best of ``--repeat`` runs is reported
    (robust to other processes on the machine), with the median alongside; ``*_cpu`` rates
    divide by process CPU time instead of wall time.
    """
    prompt = [Message("user", filler_text(llm, args.prompt_tokens))]
    prompt_rates: list[float] = []
    prompt_cpu_rates: list[float] = []
    prompt_tokens = 0
    for _ in range(args.repeat):
        if not reset_cache(llm):
            break
        out, cpu = timed_chat(llm, prompt, max_tokens=1)
        prompt_tokens = out.prompt_tokens
        prompt_rates.append(out.prompt_tokens / out.latency_s)
        prompt_cpu_rates.append(out.prompt_tokens / cpu)
    story = [Message("user", "Write a long story about a robot that stacks blocks, in many paragraphs.")]
    llm.chat(story, max_tokens=1)  # cache the prompt
    gen_rates: list[float] = []
    gen_cpu_rates: list[float] = []
    generated = 0
    for _ in range(args.repeat):
        one, one_cpu = timed_chat(llm, story, max_tokens=1)
        many, many_cpu = timed_chat(llm, story, max_tokens=args.gen_tokens)
        generated = many.completion_tokens
        if generated > 1 and many.latency_s > one.latency_s and many_cpu > one_cpu:
            gen_rates.append((generated - 1) / (many.latency_s - one.latency_s))
            gen_cpu_rates.append((generated - 1) / (many_cpu - one_cpu))
    result: dict[str, float] = {"prompt_tokens": prompt_tokens, "gen_tokens": generated}
    result |= _rates("prompt_tok_s", prompt_rates) | _rates("prompt_tok_per_cpu_s", prompt_cpu_rates)
    result |= _rates("gen_tok_s", gen_rates) | _rates("gen_tok_per_cpu_s", gen_cpu_rates)
    return result


def run_episode(llm: LLM, args: argparse.Namespace, *, reuse: bool) -> dict[str, list[float]]:
    """Wall and CPU seconds, prompt and completion tokens of each call of one agent-like episode."""
    messages = [
        Message("system", SYSTEM_PROMPT),
        Message("user", TASK + "\n" + observation(llm, 0, args.obs_tokens)),
    ]
    reset_cache(llm)
    calls: dict[str, list[float]] = {"wall": [], "cpu": [], "prompt": [], "completion": []}
    for step in range(1, args.calls + 1):
        if not reuse:
            reset_cache(llm)
        out, cpu = timed_chat(llm, messages, max_tokens=args.reply_tokens)
        for key, value in zip(
            calls, (out.latency_s, cpu, out.prompt_tokens, out.completion_tokens), strict=True
        ):
            calls[key].append(value)
        messages += [
            Message("assistant", out.text or "(noop)"),
            Message("user", observation(llm, step, args.obs_tokens)),
        ]
    return calls


def _episode_stats(calls: dict[str, list[float]], prefix: str) -> dict[str, float]:
    wall = calls["wall"]
    return {
        f"{prefix}_s_per_call": statistics.fmean(wall),
        f"{prefix}_cpu_s_per_call": statistics.fmean(calls["cpu"]),
        f"{prefix}_first_call_s": wall[0],
        f"{prefix}_last_call_s": wall[-1],
        f"{prefix}_total_s": sum(wall),
        f"{prefix}_last_prompt_tokens": calls["prompt"][-1],
        f"{prefix}_completion_tokens_mean": statistics.fmean(calls["completion"]),
    }


def bench_episode(llm: LLM, args: argparse.Namespace) -> dict[str, float]:
    """Growing-prompt episode with KV-prefix reuse."""
    return _episode_stats(run_episode(llm, args, reuse=True), "episode_reuse")


def bench_episode_no_reuse(llm: LLM, args: argparse.Namespace) -> dict[str, float]:
    """The same episode with the cache dropped before every call (what a stateless server costs)."""
    if getattr(llm, "reset", None) is None:
        return {}
    return _episode_stats(run_episode(llm, args, reuse=False), "episode_noreuse")


def _agent_stats(key: str, record: Any, elapsed: float) -> dict[str, float]:
    """Per-step figures of one agent episode: wall seconds (median and mean), the model calls' prompt
    evaluation and generation seconds, and the share of prompt tokens served from the backend's cache,
    for the action calls (retrievals included) and the summary calls apart."""
    steps = max(1, record.steps)
    calls = [c for s in record.trajectory for c in s.calls]
    step_s = [sum(c.latency_s for c in s.calls) for s in record.trajectory]
    model_s = max(1e-9, sum(c.latency_s for c in calls))
    out = {
        f"{key}_s_per_step": elapsed / steps,
        f"{key}_model_s_per_step_median": statistics.median(step_s) if step_s else 0.0,
        f"{key}_mean_prompt_tokens": sum(s.total_prompt_tokens for s in record.trajectory) / steps,
        f"{key}_generated_tok_s": sum(c.completion_tokens for c in calls) / model_s,
        f"{key}_prompt_eval_s_per_step": sum(c.prompt_eval_s or 0.0 for c in calls) / steps,
        f"{key}_generation_s_per_step": sum(c.generation_s or 0.0 for c in calls) / steps,
    }
    for kind, purposes in (("action", ("action", "retrieve")), ("summary", ("summary",))):
        chosen = [c for c in calls if c.purpose in purposes and c.cached_tokens is not None]
        prompt = sum(c.prompt_tokens for c in chosen)
        if prompt:
            out[f"{key}_{kind}_calls"] = len(chosen)
            out[f"{key}_{kind}_cached_share"] = sum(c.cached_tokens for c in chosen) / prompt
            eval_s = sum(c.prompt_eval_s or 0.0 for c in chosen)
            out[f"{key}_{kind}_prompt_eval_s_per_call"] = eval_s / len(chosen)
    return out


def bench_agents(llm: LLM, args: argparse.Namespace) -> dict[str, float]:
    """Seconds per agent step for STANDARD and HiAgent on the easiest public problem of each domain (or
    `--domains`), split into prompt evaluation and generation, and the share of prompt tokens served
    from the cache; the ratio of HiAgent's median model seconds per step to STANDARD's."""
    import gymnasium as gym

    import pddlworlds  # noqa: F401  (registers the environments)
    from pddlworlds.agents import HiAgent, StandardAgent, get_setting
    from pddlworlds.artefacts.plans import optimal_lengths
    from pddlworlds.registration import env_id
    from pddlworlds.worlds.catalogue import domains

    out: dict[str, float] = {}
    chosen = [d for d in args.domains.split(",") if d] if args.domains else list(domains())
    for domain in chosen:
        lengths = optimal_lengths(domain, "agentboard")
        problem = min(lengths, key=lambda p: (lengths[p], p))
        setting = get_setting(args.setting)
        mode = {"observation_mode": setting.observation_mode} if setting.observation_mode else {}
        for agent in (StandardAgent(llm, setting=setting.name), HiAgent(llm, setting=setting.name)):
            reset_cache(llm)  # each agent starts cold, as in its own run
            env = gym.make(env_id(domain), max_episode_steps=args.agent_steps, **mode)
            start = time.perf_counter()
            record = agent.run(env, options={"problem": problem})
            out |= _agent_stats(f"agent_{domain}_{agent.name}", record, time.perf_counter() - start)
        standard = out.get(f"agent_{domain}_standard_model_s_per_step_median")
        if standard:
            ratio = out[f"agent_{domain}_hiagent_model_s_per_step_median"] / standard
            out[f"agent_{domain}_hiagent_over_standard_median_s"] = ratio
    return out


def bench_capable(llm: LLM, args: argparse.Namespace) -> dict[str, float]:
    """STANDARD and HiAgent on a capable model's replies (Tyreworld p03, the optimal 30 actions, HiAgent in
    six subgoals: `testing.scenarios.TYREWORLD_P03`), each reply paid for by this model
    (`EmbeddedLLM.replay`): what HiAgent's memory costs and saves in time and context when both agents
    take the same steps. Each agent starts from an empty cache; the same per-step figures as `agents`,
    plus the whole episode's time and mean in-trial context, HiAgent's over STANDARD's."""
    from pddlworlds.testing.scenarios import TYREWORLD_P03, play_scenario

    out: dict[str, float] = {}
    totals: dict[str, tuple[float, float]] = {}
    for agent in ("standard", "hiagent"):
        reset_cache(llm)
        start = time.perf_counter()
        record = play_scenario(TYREWORLD_P03, agent, llm.with_cache_owner(agent))
        elapsed = time.perf_counter() - start
        if not record.success:
            raise RuntimeError(f"the {agent} scenario did not reach its goal: {record.steps} steps")
        key = f"capable_tyreworld_{agent}"
        out |= _agent_stats(key, record, elapsed)
        context = statistics.mean(s.context_tokens for s in record.trajectory)
        out[f"{key}_episode_s"] = elapsed
        out[f"{key}_context_tokens_per_step"] = context
        totals[agent] = (elapsed, context)
    out["capable_tyreworld_hiagent_over_standard_time"] = totals["hiagent"][0] / totals["standard"][0]
    out["capable_tyreworld_hiagent_over_standard_context"] = totals["hiagent"][1] / totals["standard"][1]
    out["capable_tyreworld_hiagent_over_standard_median_s"] = (
        out["capable_tyreworld_hiagent_model_s_per_step_median"]
        / out["capable_tyreworld_standard_model_s_per_step_median"]
    )
    return out


def bench_prompt_states(llm: LLM, args: argparse.Namespace) -> dict[str, float]:
    """What a saved prompt state costs against evaluating its tokens again: a ~``--prompt-tokens`` prompt
    evaluated cold, then a different prompt evicts it, and the first one comes back (restored from the
    saved state when the backend keeps them, else evaluated again)."""
    if getattr(llm, "reset", None) is None:
        return {}
    first = [Message("user", filler_text(llm, args.prompt_tokens))]
    other = [Message("user", filler_text(llm, args.prompt_tokens, seed=500))]
    reset_cache(llm)
    cold = llm.chat(first, max_tokens=1)
    evicting = llm.chat(other, max_tokens=1)
    back = llm.chat(first, max_tokens=1)
    states = getattr(llm, "prompt_states", None)
    saved = states.bytes if states is not None else 0
    return {
        "states_prompt_tokens": cold.prompt_tokens,
        "states_cold_eval_s": cold.prompt_eval_s or cold.latency_s,
        "states_evicting_call_s": evicting.latency_s,
        "states_back_eval_s": back.prompt_eval_s or back.latency_s,
        "states_back_cached_tokens": back.cached_tokens or 0,
        "states_saved_bytes": saved,
        "states_saved_bytes_per_token": saved / max(1, 2 * cold.prompt_tokens),  # both prompts are saved
    }


SECTIONS: dict[str, Section] = {
    "backend": bench_backend,
    "episode": bench_episode,
    "episode-noreuse": bench_episode_no_reuse,
    "agents": bench_agents,
    "capable": bench_capable,
    "states": bench_prompt_states,
}


def build_info() -> dict[str, Any]:
    """Which llama.cpp build ran (its CPU feature line shows AVX2/FMA etc.)."""
    info: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine()}
    try:
        import llama_cpp

        info["llama_cpp"] = llama_cpp.__version__
        info["llama_cpp_file"] = llama_cpp.__file__
        info["system_info"] = llama_cpp.llama_print_system_info().decode().strip()
    except ImportError:
        pass
    return info


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", help="GGUF path (default: the packaged Gemma 3 270M)")
    parser.add_argument(
        "--lora",
        default=SHIPPED_ADAPTER,
        help=f"LoRA adapter GGUF, or '{NO_ADAPTER}' (default: the shipped one on the default model)",
    )
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument(
        "--threads", type=int, default=None, help="default: all CPUs available to the process"
    )
    parser.add_argument(
        "--no-swa-full",
        action="store_true",
        help="llama.cpp's window-sized SWA cache (1024 cells instead of n_ctx), for comparison",
    )
    parser.add_argument("--prompt-tokens", type=int, default=1000)
    parser.add_argument("--gen-tokens", type=int, default=64)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--obs-tokens", type=int, default=60)
    parser.add_argument("--reply-tokens", type=int, default=32)
    parser.add_argument(
        "--repeat", type=int, default=3, help="repetitions of the backend section (best is reported)"
    )
    parser.add_argument(
        "--sections", default=",".join(SECTIONS), help=f"comma-separated, from {', '.join(SECTIONS)}"
    )
    parser.add_argument("--agent-steps", type=int, default=10, help="steps per agent episode (agents section)")
    parser.add_argument("--domains", default="", help="domains of the agents section (default: all)")
    parser.add_argument("--setting", default="free",
                        help="the setting of the agents section: free (default), admissible, state-choice")
    parser.add_argument(
        "--prompt-cache-mb",
        type=float,
        default=None,
        help="budget of the saved prompt states in MiB, 0 for none (default: the backend's)",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    sections = [s for s in args.sections.split(",") if s]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}")

    start = time.perf_counter()
    cache = {} if args.prompt_cache_mb is None else {"prompt_cache_bytes": int(args.prompt_cache_mb * 2**20)}
    llm = EmbeddedLLM(
        args.model,
        n_ctx=args.n_ctx,
        n_threads=args.threads,
        swa_full=not args.no_swa_full,
        lora_path=args.lora,
        **cache,
    )
    results: dict[str, Any] = {
        "model_id": llm.model_id,
        "n_threads": llm.n_threads,
        "load_s": time.perf_counter() - start,
        **build_info(),
    }
    for name in sections:
        section_start = time.perf_counter()
        results |= SECTIONS[name](llm, args)
        print(f"[{name}] done in {time.perf_counter() - section_start:.1f} s", file=sys.stderr, flush=True)
    for key, value in results.items():
        print(f"{key:40s} {value:.3f}" if isinstance(value, float) else f"{key:40s} {value}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
