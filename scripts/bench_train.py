#!/usr/bin/env python3
"""Training throughput: packed tokens per second of `train fit` steps, for several attention
implementations and `--train-layers` settings, on the same packed sequences, in one run.

The settings take turns on each sequence, so a busy machine slows them alike and the ratios stay
comparable; before each step the LoRA weights go back to the warm start. A step is what `train fit`
does: the tree-attention forward, the loss on reply tokens, backward and an AdamW step. The losses are
printed too: every setting runs the same forward pass, so they must agree. Needs the memory of one
training run (about 12 GB at --max-len 6144): stop a background run first (SIGSTOP keeps its memory).

    python scripts/bench_train.py --data /work/train/data-expert --init models/gemma-3-270m-pddlworlds-lora-v1.gguf \
        --max-len 6144 --sequences 2 --attention sdpa,tree --train-layers 0,9,6
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path


def _layers_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--train-layers {text!r}: comma-separated integers, e.g. 0,9,6") from None
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"--train-layers {text!r}: non-negative integers, at least one")
    return values


def _attention_list(text: str) -> list[str]:
    from pddlworlds.training.tree_attention import ATTENTIONS

    values = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [v for v in values if v not in ATTENTIONS]
    if not values or unknown:
        raise argparse.ArgumentTypeError(f"--attention {text!r}: comma-separated, from {', '.join(ATTENTIONS)}")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="dataset folder(s), comma-separated, as for `train fit`")
    parser.add_argument("--init", default=None, help="warm start adapter (GGUF or PEFT folder)")
    parser.add_argument("--max-len", type=int, default=6144)
    parser.add_argument("--sequences", type=int, default=2, help="packed sequences timed per setting")
    parser.add_argument("--train-layers", type=_layers_list, default=_layers_list("0,9,6"),
                        help="settings to compare, comma-separated (0: every layer)")
    parser.add_argument("--attention", type=_attention_list, default=["sdpa", "tree"],
                        help="attention implementations to compare, comma-separated (default sdpa,tree)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0, help="which sequences are drawn")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)

    import torch

    from pddlworlds.training.lora import lora_model, set_trainable_layers, warm_start
    from pddlworlds.training.trainer import (
        TrainConfig,
        attention_geometry,
        build_sequences,
        load_base_model,
        sequence_loss,
    )
    from pddlworlds.training.tree_attention import attention_implementation

    torch.set_num_threads(args.threads)
    configs = [TrainConfig(data=args.data, out="", max_len=args.max_len, init=args.init, train_layers=n)
               for n in args.train_layers]
    base, tokenizer, _ = load_base_model()
    sequences, _, _ = build_sequences(configs[0], tokenizer)
    # the longest sequences are what a run spends its time on; draw among the upper half by length
    ranked = sorted(range(len(sequences)), key=lambda i: len(sequences[i]), reverse=True)
    pool = ranked[: max(args.sequences, len(ranked) // 2)]
    chosen = random.Random(args.seed).sample(pool, min(args.sequences, len(pool)))
    n_layers, window, softcap = attention_geometry(base)
    device = torch.device("cpu")

    # One model for every setting (a run's memory, not one per setting): before each timed step the LoRA
    # weights go back to the warm start and the setting decides which layers train, so every setting
    # sees the same forward pass on the same sequence.
    torch.manual_seed(0)
    first = configs[0]
    model = lora_model(base, rank=first.rank, alpha=first.alpha, target_modules=first.target_modules,
                       train_layers=first.train_layers, device=device)
    if args.init:
        warm_start(model, args.init, first.rank, first.alpha)
    start_weights = {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" in n}
    runs = [{"config": config, "attention": attention, "seconds": [], "losses": [], "params": 0}
            for attention in args.attention for config in configs]

    def step(run: dict, index: int) -> tuple[float, float]:
        with torch.no_grad():
            for name, param in model.named_parameters():
                if name in start_weights:
                    param.copy_(start_weights[name])
        set_trainable_layers(model, run["config"].train_layers, n_layers)
        model.get_base_model().set_attn_implementation(attention_implementation(run["attention"]))
        params = [p for p in model.parameters() if p.requires_grad]
        run["params"] = sum(p.numel() for p in params)
        optimizer = torch.optim.AdamW(params, lr=1e-5, weight_decay=0.0)
        begin = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = sequence_loss(model, sequences[index], window, softcap, device)
        loss.backward()
        optimizer.step()
        return time.perf_counter() - begin, float(loss.detach())

    # the process's first long step pays for fresh memory pages: one untimed step first
    step(runs[0], chosen[0])
    tokens = [len(sequences[i]) for i in chosen]
    for index in chosen:
        for run in runs:
            seconds, loss = step(run, index)
            run["seconds"].append(seconds)
            run["losses"].append(round(loss, 5))
            print(f"sequence {index} ({len(sequences[index])} tokens), {run['attention']} attention, "
                  f"--train-layers {run['config'].train_layers}: {seconds:.1f} s, loss {loss:.5f}",
                  file=sys.stderr, flush=True)

    reference = sum(tokens) / sum(runs[0]["seconds"])
    rows = []
    for run in runs:
        rate = sum(tokens) / sum(run["seconds"])
        rows.append({"attention": run["attention"], "train_layers": run["config"].train_layers, "trainable_parameters": run["params"],
                     "tokens_per_second": round(rate, 1), "vs_first": round(rate / reference, 2),
                     "median_step_seconds": round(statistics.median(run["seconds"]), 1),
                     "losses": run["losses"]})
    print(f"{len(chosen)} sequences, {sum(tokens)} packed tokens (max-len {args.max_len}), {args.threads} threads")
    print("| attention | --train-layers | trainable | packed tokens/s | vs first | median s/step | losses |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        label = "all" if row["train_layers"] == 0 else f"top {row['train_layers']}"
        print(f"| {row['attention']} | {label} | {row['trainable_parameters']:,} | {row['tokens_per_second']} | {row['vs_first']}x | "
              f"{row['median_step_seconds']} | {', '.join(map(str, row['losses']))} |")
    if args.json:
        args.json.write_text(json.dumps({"sequences": chosen, "tokens": tokens, "max_len": args.max_len,
                                         "threads": args.threads, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
