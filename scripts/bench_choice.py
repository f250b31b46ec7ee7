#!/usr/bin/env python3
"""Candidate scoring in the settings that choose: every candidate scored whole against the search that
stops once the pick is decided (`llm.scoring`, `rank`), on the same prompts, one model.

An agent plays each domain's main-job problem (the smallest public one) in `state-choice` with the
embedded model and the adapter shipped for that setting; at every pick the recorder puts the prompt in
the KV cache, then times both ways of scoring its candidates, alternating which goes first, and plays on
with the exhaustive pick. Prints per domain: picks, mean candidates, candidate tokens decoded per pick and
seconds per pick for each way, the share of picks that agree, and the largest difference between the two
ways' log-probabilities of the same fully scored candidate. The prompt's own evaluation is not in either
time (it is the same for both).

    python scripts/bench_choice.py --threads 2 --steps 12
    python scripts/bench_choice.py --agent hiagent --domains tyreworld,barman --json /tmp/choice.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

import pddlworlds  # noqa: F401  (registers the environments)
from pddlworlds.agents import make_agent
from pddlworlds.agents.admissible import CHOICE_SCORES
from pddlworlds.agents.settings import get_setting
from pddlworlds.evaluation.options import smallest_problems
from pddlworlds.llm import Choice, Completion, EmbeddedLLM, Message
from pddlworlds.llm.model_files import shipped_adapter_path
from pddlworlds.registration import env_id


@dataclass
class Pick:
    candidates: int
    seconds: dict[str, float]
    tokens: dict[str, int]
    agree: bool
    largest_difference: float


@dataclass
class Recorder:
    """The embedded model, timing both ways of scoring at every pick and answering with the exhaustive one."""

    llm: EmbeddedLLM
    rule: str
    picks: list[Pick] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:  # count_tokens, model_id, ... as the model has them
        return getattr(self.llm, name)

    def chat(self, messages: Sequence[Message], **kwargs: Any) -> Completion:
        return self.llm.chat(messages, **kwargs)

    def choose(self, messages: Sequence[Message], continuations: Sequence[str], prefix: str = "",
               rank: Any = None) -> Choice:
        self.llm.choose(messages, continuations[:1], prefix=prefix)  # the prompt into the cache, for both
        ways = ("all", "pruned") if len(self.picks) % 2 == 0 else ("pruned", "all")
        choices: dict[str, Choice] = {}
        seconds: dict[str, float] = {}
        for way in ways:
            start = time.perf_counter()
            choices[way] = self.llm.choose(messages, continuations, prefix=prefix,
                                           rank=CHOICE_SCORES[self.rule] if way == "pruned" else None)
            seconds[way] = time.perf_counter() - start
        whole, pruned = choices["all"], choices["pruned"]
        rank_all = CHOICE_SCORES[self.rule]
        scores = [rank_all(lp, n, c) for lp, n, c in zip(whole.logprobs, whole.lengths, continuations)]
        best = max(range(len(continuations)), key=lambda i: (scores[i], -i))
        exact = pruned.exact or (True,) * len(continuations)
        diffs = [abs(a - b) for a, b, e in zip(whole.logprobs, pruned.logprobs, exact) if e]
        self.picks.append(Pick(len(continuations), seconds, {"all": whole.scored_tokens, "pruned": pruned.scored_tokens},
                               best == pruned.index, max(diffs, default=0.0)))
        return whole


def run(recorder: Recorder, agent_name: str, domain: str, problem: str, steps: int) -> dict[str, Any]:
    env = gym.make(env_id(domain), split="agentboard", max_episode_steps=steps, observation_mode="fluents")
    agent = make_agent(agent_name, recorder, setting="state-choice")
    recorder.picks = []
    recorder.llm.reset()
    record = agent.run(env, options={"problem": problem})
    env.close()
    picks = recorder.picks
    return {
        "domain": domain,
        "problem": problem,
        "agent": agent_name,
        "picks": len(picks),
        "candidates_mean": round(statistics.mean(p.candidates for p in picks), 1),
        **{f"tokens_{w}": round(statistics.mean(p.tokens[w] for p in picks), 1) for w in ("all", "pruned")},
        **{f"seconds_{w}": round(statistics.mean(p.seconds[w] for p in picks), 3) for w in ("all", "pruned")},
        "speedup": round(sum(p.seconds["all"] for p in picks) / sum(p.seconds["pruned"] for p in picks), 2),
        "agree_share": round(sum(p.agree for p in picks) / len(picks), 3),
        "largest_difference": max(p.largest_difference for p in picks),
        "progress": record.progress,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", default="standard", help="an LLM agent's name (default: standard)")
    parser.add_argument("--domains", default="blocksworld,gripper,tyreworld,barman", help="comma-separated")
    parser.add_argument("--steps", type=int, default=12, help="step budget of each episode (default: 12)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: the host's)")
    parser.add_argument("--json", default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    setting = get_setting("state-choice")
    llm = EmbeddedLLM(n_threads=args.threads, lora_path=shipped_adapter_path("state-choice"))
    llm.chat([Message("user", "Hello")], max_tokens=2)  # load and warm up outside the timings
    recorder = Recorder(llm, setting.choice_score)
    domains = args.domains.split(",")
    problems = smallest_problems(domains, "agentboard", 1)
    rows = []
    for domain in domains:
        row = run(recorder, args.agent, domain, problems[domain][0], args.steps)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"threads": llm.n_threads, "adapter": str(llm.lora_path), "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
