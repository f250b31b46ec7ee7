"""`pddlworlds train ...`: make training data from the expert, fine-tune a LoRA adapter, export it to GGUF."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..arguments import (
    integer_list_type,
    learning_rate,
    nonnegative_float,
    nonnegative_int,
    positive_float,
    positive_int,
    probability,
)

__all__ = ["add_parsers"]


def _names(text: str, known: Sequence[str], kind: str, choices: str) -> list[str]:
    """The comma-separated names of `text`, each once, in the order given; ArgumentTypeError naming the
    unknown ones (or the empty text) and `choices`."""
    asked = list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in asked if name not in known]
    if unknown or not asked:
        raise argparse.ArgumentTypeError(f"unknown {kind}(s) {', '.join(unknown) or repr(text)}; choose from {choices}")
    return asked


def _levels(text: str) -> list[str]:
    """`--levels medium,hard`: a comma-separated subset of the generators' levels, in the generators' order,
    so that a round can be weighted to the problem sizes where the agent fails."""
    from ..generators import LEVELS

    asked = _names(text, LEVELS, "level", ", ".join(LEVELS))
    return [level for level in LEVELS if level in asked]


def _domains(text: str) -> list[str]:
    """`--domains blocksworld,barman` or `all`: the generators' domains, checked at parse time, so that an
    unknown name fails before the output folder is made."""
    from ..generators import DOMAINS

    if text.strip() == "all":
        return list(DOMAINS)
    return _names(text, DOMAINS, "domain", f"all, {', '.join(DOMAINS)}")


def _family(text: str) -> str:
    """`--family public-like`: a registered generator family, checked at parse time."""
    from ..generators import FAMILIES

    if text.strip() not in FAMILIES:
        raise argparse.ArgumentTypeError(f"unknown generator family {text!r}; choose from {', '.join(FAMILIES)}")
    return text.strip()


def _data(text: str) -> str:
    """`--data A,B:0.25`: checked at parse time, so that a bad share fails before the model is loaded."""
    from .dataset import data_sources

    try:
        data_sources(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _one_line(exc: OSError | ImportError) -> ValueError:
    """An OS error on a file (a folder in the way, read-only, full disk) as one line naming the path, or
    a missing training dependency as one line saying what to install."""
    filename = getattr(exc, "filename", None) if isinstance(exc, OSError) else None
    return ValueError(f"{filename}: {exc.strerror or exc}" if filename else str(exc))


def cmd_data(args: argparse.Namespace) -> int:
    from ..generators import LEVELS
    from .data import generate_dataset
    from .teacher import Detours

    if args.out.exists() and not args.out.is_dir():
        raise ValueError(f"--out {args.out} is a file, not a folder")
    manifest = generate_dataset(
        args.out,
        seeds=args.seeds,
        per_level=args.per_level,
        levels=args.levels or LEVELS,
        domain_names=args.domains,
        detours=Detours(args.invalid, args.check, args.retrieve),
        seed=args.seed,
        planner_timeout=args.planner_timeout,
        progress=not args.no_progress,
        family=args.family,
    )
    print(json.dumps({k: manifest[k] for k in ("problems_generated", "problems", "episodes", "calls", "planners")}))
    return 0


@contextlib.contextmanager
def _stop_on_signal(what: str, after: str) -> Iterator[threading.Event]:
    """SIGTERM or Ctrl-C asks a background job (`what`) to end after the unit under way, with everything
    it needs to resume written (`after` says what); a second signal stops at once, losing only that unit."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        print(f"pddlworlds {what}: {signal.Signals(signum).name}: stopping after {after}; send it again to stop now",
              file=sys.stderr, flush=True)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield stop
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def cmd_fit(args: argparse.Namespace) -> int:
    from .trainer import TrainConfig, train

    config = TrainConfig(
        data=args.data,
        out=str(args.out),
        seed=args.seed,
        max_len=args.max_len,
        steps=args.steps or 0,
        epochs=args.epochs,
        lr=args.lr,
        warmup=args.warmup,
        schedule=args.schedule,
        rank=args.rank,
        alpha=args.alpha,
        accumulate=args.accumulate,
        checkpoint_every=args.checkpoint_every,
        max_minutes=args.max_minutes,
        threads=args.threads,
        agents=tuple(args.agents.split(",")) if args.agents else (),
        domains=tuple(args.domains.split(",")) if args.domains else (),
        init=str(args.init) if args.init else None,
        train_layers=args.train_layers,
        base_model=str(args.base_model) if args.base_model else None,
        precision=args.precision,
        vocab=args.vocab,
        tokenizer=str(args.tokenizer) if args.tokenizer else None,
    )
    try:
        with _stop_on_signal("train fit", "the current step (checkpoint, adapter and summary follow)") as stop:
            summary = train(config, progress=not args.no_progress, stop=stop)
    except (OSError, ImportError) as exc:
        raise _one_line(exc) from exc
    print(json.dumps(summary))
    return 0


def cmd_lengths(args: argparse.Namespace) -> int:
    from .trainer import TrainConfig, build_sequences, load_tokenizer

    config = TrainConfig(data=args.data, out="", max_len=args.max_len)
    _, stats, _ = build_sequences(config, load_tokenizer())
    print(json.dumps({"max_len": args.max_len, "by_domain": stats.by_domain}, indent=1))
    return 0


def cmd_rollout(args: argparse.Namespace) -> int:
    from ..agents import get_setting
    from ..generators import LEVELS
    from ..llm import EmbeddedLLM
    from .rounds import rollout_dataset

    setting = get_setting(args.setting)  # an unknown name fails here, before a model loads
    if args.adapter == "expert" and not setting.chooses:
        raise ValueError(f"--adapter expert (the expert plays) needs a setting that chooses, not --setting {setting.name}")
    adapter = None if args.adapter in ("none", "expert") else str(args.adapter)
    model = None if args.adapter == "expert" else EmbeddedLLM(lora_path=adapter, n_threads=args.threads)
    with _stop_on_signal("train rollout", "the current episode (its calls and the manifest follow)") as stop:
        manifest = rollout_dataset(
            args.out,
            model,
            adapter=adapter,
            round_name=args.round or Path(args.out).name,
            seeds=args.seeds,
            per_level=args.per_level,
            levels=args.levels or LEVELS,
            domain_names=args.domains,
            agents=args.agents.split(","),
            max_steps=args.max_steps,
            planner_timeout=args.planner_timeout,
            max_problems=args.max_problems or 0,
            progress=not args.no_progress,
            stop=stop,
            setting=setting.name,
            detour=args.detour,
            family=args.family,
        )
    keys = ("problems", "episodes", "calls", "dead_end_calls", "success", "model_wrote_expert_action", "seconds")
    print(json.dumps({k: manifest[k] for k in keys}))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from .gguf_adapter import export_adapter

    if args.out.is_dir():
        raise ValueError(f"{args.out} is a folder; give the GGUF file to write")
    try:
        path = export_adapter(args.adapter, args.out)
    except (OSError, ImportError) as exc:
        raise _one_line(exc) from exc
    print(path)
    return 0


def cmd_vocab(args: argparse.Namespace) -> int:
    from ..agents import SETTINGS, get_setting
    from .vocabulary import build_vocabulary

    settings = [s.strip() for s in args.settings.split(",") if s.strip()] if args.settings else [
        name for name in SETTINGS if get_setting(name).chooses]
    for name in settings:
        if not get_setting(name).chooses:
            raise ValueError(f"--settings: {name} does not choose among candidates; the cut model is for those that do")
    figures = build_vocabulary(args.out, settings=settings, seed=args.seed, per_split=args.per_split, steps=args.steps,
                               check_seed=args.check_seed, check_per_split=args.check_per_split)
    print(json.dumps(dataclasses.asdict(figures)))
    return 0


def add_parsers(sub: Any) -> None:
    """Register `pddlworlds train {data,fit,lengths,rollout,export,vocab}`."""
    p = sub.add_parser("train", help="training data from the expert, LoRA fine-tuning, GGUF adapter export")
    tsub = p.add_subparsers(dest="train_command", required=True)

    d = tsub.add_parser("data", help="record the agents' conversations on expert plans of generated problems")
    d.add_argument("--out", type=Path, required=True, help="dataset folder")
    d.add_argument("--seeds", type=integer_list_type, default="1001-1010",
                   help="generator seeds (default 1001-1010)")
    d.add_argument("--per-level", type=positive_int, default=3, help="problems per level, domain and seed (default 3)")
    d.add_argument("--domains", type=_domains, default="all", help="comma-separated domains or 'all'")
    d.add_argument("--levels", type=_levels, default=None, help="comma-separated problem levels (default: all)")
    d.add_argument("--family", type=_family, default="standard",
                   help="generator family the problems are drawn from: standard (default) or public-like (drawn "
                        "like the public AgentBoard problems); recorded in the manifest")
    d.add_argument("--invalid", type=probability, default=0.08, help="chance of an invalid-action detour per step")
    d.add_argument("--check", type=probability, default=0.05, help="chance of a `check valid actions` detour per step")
    d.add_argument("--retrieve", type=probability, default=0.25, help="chance of a retrieve(k) per HiAgent subgoal")
    d.add_argument("--seed", type=int, default=0, help="seed of the detours")
    d.add_argument("--planner-timeout", type=positive_float, default=60, help="seconds per planner call")
    d.add_argument("--no-progress", action="store_true")
    d.set_defaults(func=cmd_data)

    f = tsub.add_parser("fit", help="fine-tune a LoRA adapter on the embedded model (resumes from OUT)",
                        description="Fine-tune a LoRA adapter; the same command resumes from OUT. SIGTERM or "
                        "Ctrl-C ends the run after the current step, with a checkpoint and an adapter.")
    f.add_argument("--data", type=_data, required=True,
                   help="dataset folder(s) from `train data` / `train rollout`, comma-separated (they aggregate); "
                        "FOLDER:SHARE trains on a seeded sample of that share of FOLDER's episodes (--seed), "
                        "e.g. a replay share of the expert data beside a new round")
    f.add_argument("--out", type=Path, required=True, help="run folder: checkpoints, adapter, adapter GGUF")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--max-len", type=positive_int, default=1024, help="tokens per packed sequence (default 1024)")
    f.add_argument("--steps", type=positive_int, default=None, help="optimizer steps (default: --epochs decide)")
    f.add_argument("--epochs", type=positive_float, default=1.0)
    f.add_argument("--lr", type=learning_rate, default=2e-4, help="peak learning rate, above 0 and at most 1")
    f.add_argument("--warmup", type=nonnegative_int, default=10, help="optimizer steps of linear learning-rate warm-up")
    f.add_argument("--schedule", choices=("constant", "linear"), default="constant",
                   help="learning rate after warm-up: constant, or linear decay to 0 at the last step")
    f.add_argument("--rank", type=positive_int, default=16)
    f.add_argument("--alpha", type=positive_float, default=32.0)
    f.add_argument("--accumulate", type=positive_int, default=1, help="sequences per optimizer step")
    f.add_argument("--checkpoint-every", type=positive_int, default=20, help="optimizer steps between checkpoints")
    f.add_argument("--max-minutes", type=nonnegative_float, default=0, help="stop (with a checkpoint and an adapter) after this many minutes of training in this invocation")
    f.add_argument("--threads", type=positive_int, default=None, help="torch CPU threads (default: host.default_threads)")
    f.add_argument("--agents", default="", help="train only these agents' calls (default: all in the data)")
    f.add_argument("--domains", default="", help="train only these domains' calls (default: all in the data)")
    f.add_argument("--init", type=Path, default=None,
                   help="warm start from this adapter (llama.cpp GGUF LoRA or PEFT folder; same --rank/--alpha); "
                        "a checkpoint in OUT wins over it")
    f.add_argument("--train-layers", type=nonnegative_int, default=0,
                   help="train LoRA only in the top N transformer layers; the ones below keep their start "
                        "weights, frozen, and the backward pass stops above them (default 0: all layers)")
    f.add_argument("--base-model", type=Path, default=None,
                   help="the base model GGUF to fine-tune (default: the embedded model)")
    f.add_argument("--vocab", default=None,
                   help="fit on a cut vocabulary, as eval plays on it: 'choice-vocab' (the shipped token list, "
                        "eval's default where the model chooses) or a list written by `train vocab`; the base "
                        "is then the cut model (or --base-model, full or cut), the data tokenised by the full "
                        "model's tokenizer and mapped into the list (a call it does not cover is left out)")
    f.add_argument("--tokenizer", type=Path, default=None,
                   help="the tokenizer the data is tokenised with: a folder of its files or a GGUF (default: "
                        "the base model's; with --vocab, the full model's); for a machine without the full GGUF")
    f.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                   help="fp32 (default), or bf16: the forward pass under bfloat16 autocast, for a GPU (weights, "
                        "adapter and optimizer stay float32)")
    f.add_argument("--no-progress", action="store_true")
    f.set_defaults(func=cmd_fit)

    n = tsub.add_parser("lengths", help="tokens per call, per domain, and the share a --max-len would skip")
    n.add_argument("--data", type=_data, required=True, help="dataset folder(s), comma-separated, FOLDER:SHARE as for fit")
    n.add_argument("--max-len", type=positive_int, default=4096)
    n.set_defaults(func=cmd_lengths)

    r = tsub.add_parser("rollout", help="on-policy round: the adapter plays, the expert labels every call from its state")
    r.add_argument("--adapter", required=True,
                   help="GGUF LoRA adapter the model plays with ('none': the base model; 'expert': the expert plays "
                        "in the model's place, with --detour, in a setting that chooses: expert data labelled as "
                        "on-policy data is)")
    r.add_argument("--out", type=Path, required=True, help="round's dataset folder")
    r.add_argument("--round", default="", help="round name recorded in the data (default: OUT's name)")
    r.add_argument("--seeds", type=integer_list_type, default="2001-2003",
                   help="generator seeds (default 2001-2003)")
    r.add_argument("--per-level", type=positive_int, default=1)
    r.add_argument("--domains", type=_domains, default="all", help="comma-separated domains or 'all'")
    r.add_argument("--levels", type=_levels, default=None,
                   help="comma-separated problem levels (default: all); medium,hard weights a round to larger problems")
    r.add_argument("--family", type=_family, default="standard",
                   help="generator family the problems are drawn from: standard (default) or public-like; recorded")
    r.add_argument("--agents", default="standard,hiagent")
    r.add_argument("--max-steps", type=positive_int, default=30)
    r.add_argument("--max-problems", type=positive_int, default=None, help="play only the first N problems kept")
    r.add_argument("--planner-timeout", type=positive_float, default=60, help="seconds per planner call")
    r.add_argument("--threads", type=positive_int, default=None, help="llama.cpp threads")
    r.add_argument("--setting", default="free",
                   help="the setting the agents play in (free, admissible, state-choice, state-choice-compact, "
                        "state-choice-diffs, state-choice-subgoals, state-choice-subgoals-taught; "
                        "default free)")
    r.add_argument("--detour", type=probability, default=0.15,
                   help="with --adapter expert: the chance a pick is another legal action (default 0.15)")
    r.add_argument("--no-progress", action="store_true")
    r.set_defaults(func=cmd_rollout)

    e = tsub.add_parser("export", help="write a PEFT adapter folder as a llama.cpp GGUF LoRA adapter")
    e.add_argument("adapter", type=Path, help="PEFT adapter folder (adapter_config.json, adapter_model.safetensors)")
    e.add_argument("out", type=Path, help="GGUF file to write")
    e.set_defaults(func=cmd_export)

    v = tsub.add_parser("vocab", help="the token list of the cut-vocabulary model (--llm embedded:choice-vocab): "
                                      "found by play in every world, checked by another play")
    v.add_argument("--out", type=Path, required=True, help="JSON file to write (shipped: models/gemma-3-270m-choice-vocab.json)")
    v.add_argument("--settings", default="", help="comma-separated choosing settings (default: all that choose)")
    v.add_argument("--seed", type=nonnegative_int, default=1, help="the finding play's seed")
    v.add_argument("--per-split", type=positive_int, default=3, help="problems a split a world, finding play")
    v.add_argument("--steps", type=positive_int, default=30, help="steps an episode")
    v.add_argument("--check-seed", type=nonnegative_int, default=2, help="the checking play's seed")
    v.add_argument("--check-per-split", type=positive_int, default=3,
                   help="problems a split a world, checking play (the ones after the finding play's)")
    v.set_defaults(func=cmd_vocab)
