#!/usr/bin/env python3
"""Tokens per call and tokens evaluated per step of STANDARD and HiAgent in the state-choice setting, in
the full prompt form (`state-choice`) and the compact one (`state-choice-compact`), on the largest public
problem of each domain (the `agentboard` split's problem with the most true facts at the start).

Each agent plays one episode with the expert in the model's place (`training.onpolicy`, no detours): the
calls are the ones the agent sends, byte for byte. Tokens are the embedded model's (its vocabulary alone
is loaded; the default model's prompt format, plain text, BOS first), as `EmbeddedLLM` counts them.

- tokens per call: the action calls' prompts (HiAgent's head and pick share one prompt; its summaries are
  calls of their own and counted apart): max and median over the episode;
- tokens evaluated per step without a prompt cache: every call's prompt, plus the candidates' tokens the
  scorer evaluates after it (shared starts once, last tokens never: `llm.scoring`), plus the tokens a head
  or a summary writes;
- the same with the prompt cache (`llm.kv_cache`): a prompt's tokens past the longest start it shares with
  an earlier call of the same agent in the episode (the live cache or a saved state; every state is taken
  to be kept, which the 512 MiB budget does for compact prompts), at least one token a call.

    PYTHONPATH=src python scripts/measure_compact.py [--domains barman] [--max-steps 60] [--time]

`--time` also replays the compact form's calls through the embedded model (the shipped adapter, one
thread, the prompt cache on) and prints the process's CPU seconds per step (what one idle core would take;
wall time on a loaded machine says little).

`--data FOLDER[,FOLDER]` instead reports training data (`train rollout` folders, as `train fit` reads them):
labelled states, tokens a call, and the tokens `train fit` packs them into at `--max-len` (a fit's cost),
per state.

    PYTHONPATH=src python scripts/measure_compact.py --data runs/compact-a,runs/full-a --max-len 4096
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pddlworlds.agents import make_agent
from pddlworlds.llm import Choice, ChoiceRank, Completion, Message
from pddlworlds.llm.kv_cache import common_prefix
from pddlworlds.llm.prompt_formats import plain_pieces
from pddlworlds.llm.tokenising import tokenize_pieces
from pddlworlds.registration import make_env
from pddlworlds.training.expert import StateExpert
from pddlworlds.training.onpolicy import ExpertPlayer, RelabelLLM, StateTrail
from pddlworlds.worlds.catalogue import domains
from pddlworlds.worlds.world import World

FORMS = ("state-choice", "state-choice-compact", "state-choice-diffs")
AGENTS = ("standard", "hiagent")


@dataclass
class Call:
    kind: str  # "head", "pick" or "summary"
    messages: tuple[Message, ...]
    prefix: str = ""
    continuations: tuple[str, ...] = ()
    reply: str = ""
    stop: tuple[str, ...] = ()


@dataclass
class Recorder:
    """The expert player, recording every call the agent makes (heads and summaries included)."""

    inner: ExpertPlayer
    calls: list[Call] = field(default_factory=list)
    model_id = "expert"
    in_context_example = False

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def chat(self, messages: Sequence[Message], *, max_tokens: int = 128, stop: Sequence[str] = (),
             temperature: float = 0.0) -> Completion:
        completion = self.inner.chat(messages, max_tokens=max_tokens, stop=stop, temperature=temperature)
        kind = "summary" if messages[-1].content.endswith("Met:") else "head"
        self.calls.append(Call(kind, tuple(messages), reply=completion.text, stop=tuple(stop)))
        return completion

    def choose(self, messages: Sequence[Message], continuations: Sequence[str], prefix: str = "",
               rank: ChoiceRank | None = None) -> Choice:
        self.calls.append(Call("pick", tuple(messages), prefix, tuple(continuations)))
        return self.inner.choose(messages, continuations, prefix, rank)


def largest_public(domain: str) -> Path:
    """The domain's `agentboard` problem with the most true facts at the start (ties: the later name)."""
    d = domains()[domain]
    folder = Path(d.domain_file).parent / "problems" / "agentboard"
    sizes = {}
    for path in sorted(folder.glob("*.pddl")):
        world = World.load(d.domain_file, path, d.text_file)
        sizes[path] = (world.initial_state & ~world.task.hidden).bit_count()
    return max(sizes, key=lambda p: (sizes[p], p.name))


def play(domain: str, problem: Path, agent_name: str, setting: str, max_steps: int) -> tuple[list[Call], int]:
    d = domains()[domain]
    env = make_env(d.domain_file, problem, text_file=d.text_file, max_episode_steps=max_steps,
                   observation_mode="fluents")
    expert = StateExpert(env.unwrapped.world, Path(d.domain_file), problem, Path(d.text_file) if d.text_file else None)
    trail = StateTrail(env, end_at_dead_end=True)
    labels = RelabelLLM(None, expert, trail, setting)  # type: ignore[arg-type]
    recorder = Recorder(ExpertPlayer(labels, random.Random(0), detour=0.0))
    labels.model = recorder  # type: ignore[assignment]
    agent = make_agent(agent_name, labels, setting=setting)
    labels.agent = agent
    record = agent.run(trail, seed=0)
    env.close()
    if not record.success:
        raise RuntimeError(f"the expert did not solve {domain}/{problem.name} as {agent_name} in {max_steps} steps")
    return recorder.calls, record.steps


def _candidate_tokens(cands: list[list[int]]) -> int:
    """Tokens the scorer evaluates for the candidates (`llm.scoring.score_continuations`)."""
    path: list[int] = []
    evaluated = 0
    for tokens in sorted(cands):
        reuse = common_prefix(path, tokens[:-1])
        del path[reuse:]
        todo = tokens[reuse:-1]
        path += todo
        evaluated += len(todo)
    return evaluated


def measure(vocab, calls: list[Call], steps: int) -> dict[str, float]:
    """Per-call prompt tokens and per-step evaluated tokens (without and with the prompt cache)."""
    def toks(text: str) -> list[int]:
        return tokenize_pieces(vocab, [(text, False)], add_bos=False)

    seen: list[list[int]] = []
    pick_prompts: list[int] = []
    summary_prompts: list[int] = []
    plain = cached = 0
    for call in calls:
        prompt = tokenize_pieces(vocab, plain_pieces(call.messages) + ([(call.prefix, False)] if call.prefix else []))
        reuse = max((common_prefix(s, prompt) for s in seen), default=0)
        extra = len(toks(call.reply)) + 1 if call.kind != "pick" else _candidate_tokens([toks(c) for c in call.continuations])
        plain += len(prompt) + extra
        cached += max(1, len(prompt) - reuse) + extra
        if call.kind == "head":  # the pick after it reuses the head's prompt and what the head wrote
            seen.append(prompt + toks(call.reply))
        seen.append(prompt)
        if call.kind == "pick":
            pick_prompts.append(len(prompt))
        elif call.kind == "summary":
            summary_prompts.append(len(prompt))
    return {
        "call_max": max(pick_prompts), "call_median": statistics.median(pick_prompts),
        "summary_max": max(summary_prompts, default=0),
        "step_plain": plain / steps, "step_cached": cached / steps,
    }


def replay_seconds(calls: list[Call], steps: int) -> float:
    """CPU seconds per step of the recorded calls through the embedded model on one thread, the prompt
    cache on (the model's load not counted)."""
    from pddlworlds.llm import EmbeddedLLM

    llm = EmbeddedLLM(n_threads=1)
    start = time.process_time()
    for call in calls:
        if call.kind == "pick":
            llm.choose(call.messages, call.continuations, prefix=call.prefix)
        else:
            # as long as the expert's reply (a trained model's length), ended by the call's own stops
            llm.chat(call.messages, max_tokens=len(call.reply) // 3 + 2, stop=call.stop, temperature=0.0)
    return (time.process_time() - start) / steps


def data_report(vocab, folders: str, max_len: int) -> None:
    """Per data folder: labelled states, calls, tokens a call and packed tokens a state at `max_len`."""
    from pddlworlds.training.data import call_from_json
    from pddlworlds.training.dataset import training_rows
    from pddlworlds.training.packing import pack_calls

    print("| data | labelled states | calls | tokens a call (mean) | packed tokens | packed tokens a state |")
    print("|---|---:|---:|---:|---:|---:|")
    for folder in folders.split(","):
        rows = training_rows(folder)
        _, stats = pack_calls([call_from_json(r) for r in rows], vocab, max_len)
        states = sum(r["purpose"] == "action" for r in rows)
        print(f"| {folder} | {states} | {stats.calls} | {stats.call_tokens / stats.calls:.0f} | {stats.packed_tokens} "
              f"| {stats.packed_tokens / states:.0f} |" + (f" ({stats.skipped_too_long} calls over --max-len)"
                                                            if stats.skipped_too_long else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domains", default="blocksworld,gripper,tyreworld,barman")
    parser.add_argument("--max-steps", type=int, default=60)
    parser.add_argument("--time", action="store_true", help="replay the compact calls through the embedded model")
    parser.add_argument("--data", default="", help="report these training data folders instead (comma-separated)")
    parser.add_argument("--max-len", type=int, default=4096, help="with --data: tokens per packed sequence")
    args = parser.parse_args(argv)
    import llama_cpp

    from pddlworlds.llm import default_model_path

    vocab = llama_cpp.Llama(str(default_model_path()), vocab_only=True, verbose=False)
    if args.data:
        data_report(vocab, args.data, args.max_len)
        return 0
    print("| domain | problem | agent | form | steps | tokens/call max | median | summary call max "
          "| evaluated/step, no cache | with cache |" + (" CPU s/step |" if args.time else ""))
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|" + ("---:|" if args.time else ""))
    for domain in args.domains.split(","):
        problem = largest_public(domain)
        for agent in AGENTS:
            for form in FORMS:
                calls, steps = play(domain, problem, agent, form, args.max_steps)
                m = measure(vocab, calls, steps)
                timing = ""
                if args.time:
                    timing = f" {replay_seconds(calls, steps):.2f} |" if form.endswith("compact") else " |"
                print(f"| {domain} | {problem.stem} | {agent} | {form} | {steps} | {m['call_max']} | "
                      f"{m['call_median']:g} | {m['summary_max'] or '-'} | {m['step_plain']:.0f} | "
                      f"{m['step_cached']:.0f} |{timing}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
