#!/usr/bin/env python3
"""Seconds per step of an LLM agent on the embedded model, free decoding against the admissible-action
setting, and how many candidates an admissible step scores (Barman offers many valid actions).

Each (domain, decoding) plays the domain's smallest public problem (shortest optimal plan) for at most
`--steps` steps with the shipped adapter, one model for all; the model is loaded and warmed up first, so
load time is not counted. Prints one row per run: steps, wall seconds per step, model seconds per step
(every call of the step), mean and largest candidate count, candidate tokens evaluated per step, prompt
tokens, and the episode's progress.

`--calls N` measures instead one turn in isolation, at the first state of each domain's problem: the free
action call and the admissible one on the same prompt, alternated N times, each once from an empty cache
(the whole prompt evaluated) and once with the prompt cached (generation against candidate scoring alone),
so both see the same machine load. Prints the medians.

    python scripts/bench_admissible.py                                  # STANDARD, Blocksworld and Barman
    python scripts/bench_admissible.py --agent hiagent --steps 8 --threads 2 --json /tmp/adm.json
    python scripts/bench_admissible.py --calls 3 --threads 2                 # one STANDARD turn, alternated
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from typing import Any

import gymnasium as gym

import pddlworlds  # noqa: F401  (registers the environments)
from pddlworlds.agents import make_agent, prompts
from pddlworlds.agents.admissible import candidate_actions
from pddlworlds.evaluation.options import smallest_problems
from pddlworlds.llm import EmbeddedLLM, Message
from pddlworlds.registration import env_id


def run(llm: EmbeddedLLM, agent_name: str, domain: str, problem: str, decoding: str, steps: int) -> dict[str, Any]:
    env = gym.make(env_id(domain), split="agentboard", max_episode_steps=steps)
    agent = make_agent(agent_name, llm, decoding=decoding)
    llm.reset()  # each run starts from an empty cache
    record = agent.run(env, options={"problem": problem})
    model_s = [sum(c.latency_s for c in s.calls) for s in record.trajectory]
    candidates = [c.candidates for s in record.trajectory for c in s.calls if c.candidates]
    scored = [sum(c.completion_tokens for c in s.calls if c.candidates) for s in record.trajectory]
    return {
        "domain": domain,
        "problem": problem,
        "agent": agent_name,
        "decoding": decoding,
        "steps": record.steps,
        "wall_s_per_step": record.run_time_s / max(1, record.steps),
        "model_s_per_step": statistics.mean(model_s) if model_s else 0.0,
        "candidates_mean": statistics.mean(candidates) if candidates else None,
        "candidates_max": max(candidates) if candidates else None,
        "scored_tokens_per_step": statistics.mean(scored) if candidates else None,
        "prompt_tokens_mean": statistics.mean(s.prompt_tokens for s in record.trajectory),
        "valid_share": sum(s.valid for s in record.trajectory) / max(1, record.steps),
        "progress": record.progress,
        "success": record.success,
    }


def one_turn(llm: EmbeddedLLM, domain: str, problem: str, repeats: int) -> dict[str, Any]:
    """Median seconds of STANDARD's first action call, free and admissible, from an empty and a full cache."""
    env = gym.make(env_id(domain), split="agentboard")
    agent = make_agent("standard", llm)
    observation, info = env.reset(options={"problem": problem})
    agent.reset(observation, info, env)
    messages = agent.messages(agent.memory_text(), prompts.standard_cue())
    actions = candidate_actions(env, look_around=agent.look_around)
    replies = [f" {a}\n" for a in actions]
    times: dict[str, list[float]] = {"free_cold": [], "free_cached": [], "admissible_cold": [], "admissible_cached": []}
    generated = scored = prompt = 0
    for _ in range(repeats):
        for mode in ("free", "admissible"):
            llm.reset()
            for cache in ("cold", "cached"):
                start = time.perf_counter()
                if mode == "free":
                    reply = llm.chat(messages, max_tokens=agent.max_tokens, stop=prompts.ACTION_STOP)
                    generated, prompt = reply.completion_tokens, reply.prompt_tokens
                else:
                    choice = llm.choose(messages, replies)
                    scored = choice.scored_tokens
                times[f"{mode}_{cache}"].append(time.perf_counter() - start)
    return {
        "domain": domain,
        "problem": problem,
        "prompt_tokens": prompt,
        "candidates": len(actions),
        "generated_tokens": generated,
        "scored_tokens": scored,
        **{f"{k}_s": statistics.median(v) for k, v in times.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", default="standard", help="an LLM agent's name (default: standard)")
    parser.add_argument("--domains", default="blocksworld,barman", help="comma-separated (default: blocksworld,barman)")
    parser.add_argument("--steps", type=int, default=6, help="step budget of each episode (default: 6)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: the host's)")
    parser.add_argument("--calls", type=int, default=0, help="time one turn N times instead of playing episodes")
    parser.add_argument("--json", default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    llm = EmbeddedLLM(n_threads=args.threads)
    llm.chat([Message("user", "Warm up.")], max_tokens=2)
    domains = [d.strip() for d in args.domains.split(",") if d.strip()]
    problems = smallest_problems(domains, "agentboard", 1)
    rows = []
    for domain in domains if args.calls > 0 else []:
        row = one_turn(llm, domain, problems[domain][0], args.calls)
        rows.append(row)
        print(
            f"{domain:12s} {row['problem']:10s} prompt {row['prompt_tokens']:5d} tokens; free: {row['generated_tokens']} "
            f"tokens written, {row['free_cold_s']:.2f} s cold, {row['free_cached_s']:.2f} s cached; admissible: "
            f"{row['candidates']} candidates, {row['scored_tokens']} tokens evaluated, {row['admissible_cold_s']:.2f} s "
            f"cold, {row['admissible_cached_s']:.2f} s cached",
            flush=True,
        )
    for domain in domains if args.calls == 0 else []:
        for decoding in ("free", "admissible"):
            row = run(llm, args.agent, domain, problems[domain][0], decoding, args.steps)
            rows.append(row)
            print(
                f"{domain:12s} {row['problem']:10s} {args.agent:9s} {decoding:10s} steps {row['steps']:3d}  "
                f"wall {row['wall_s_per_step']:6.2f} s/step  model {row['model_s_per_step']:6.2f} s/step  "
                f"candidates {row['candidates_mean'] or 0:6.1f} (max {row['candidates_max'] or 0:3d})  "
                f"scored tokens/step {row['scored_tokens_per_step'] or 0:7.1f}  prompt {row['prompt_tokens_mean']:6.0f}  "
                f"valid {row['valid_share']:.2f}  progress {row['progress']:.2f}",
                flush=True,
            )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# {platform.node()}, {llm.n_threads} thread(s), load average (1 min) {load:.2f}", file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"threads": llm.n_threads, "load_1min": load, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
