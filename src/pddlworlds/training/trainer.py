"""LoRA fine-tuning of the embedded model on recorded agent conversations (torch, transformers, peft).

The base model is the shipped GGUF, read by transformers and kept as a float copy in the model cache
(`host.cache_dir("models")`) so later runs load it in a fraction of a second. Each packed sequence
(`packing.py`) is one forward pass with tree attention; the LM head is applied only at the positions
that predict reply tokens (the 262k-token vocabulary makes it the costliest layer), and the loss is
their mean cross-entropy. Same seed, same data and same thread count: the same adapter. A run folder
holds `checkpoint.pt` (resumed by the same command), `log.jsonl`, and at the end `adapter/` (PEFT),
`adapter.gguf` (llama.cpp) and `summary.json`.
"""

from __future__ import annotations

import io
import json
import math
import os
import platform
import random
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..arguments import check_range
from ..files import atomic_write, file_sha256, open_no_follow, own_folder
from ..host import default_threads
from . import tree_attention
from .base_model import (
    TRAIN_HINT,
    attention_geometry,
    cut_embeddings,
    cut_vocabulary_list,
    float_copy_folder,
    load_base_model,
    load_tokenizer,
    training_imports,
)
from .data import call_from_json
from .dataset import data_folders, length_report, load_training_data, read_manifest, training_rows
from .lora import lora_model, warm_start
from .packing import PackedSequence, PackStats, TokenizerVocabulary, pack_calls, tree_masks

__all__ = [
    "TARGET_MODULES",
    "TRAIN_HINT",
    "TrainConfig",
    "build_sequences",
    "check_config",
    "cut_embeddings",
    "cut_vocabulary_list",
    "float_copy_folder",
    "load_base_model",
    "load_tokenizer",
    "lr_factor",
    "sequence_loss",
    "train",
    "warm_start",
]

TARGET_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
# Fields that may change when a run is resumed (they do not change what is learned step by step; the
# checkpoint holds the weights, so the warm start it began from no longer matters).
_RESUMABLE = {"steps", "max_minutes", "threads", "checkpoint_every", "epochs", "init", "tokenizer"}


@dataclass(frozen=True)
class TrainConfig:
    data: str
    out: str
    seed: int = 0
    max_len: int = 1024
    steps: int = 0  # 0: from epochs
    epochs: float = 1.0
    lr: float = 2e-4
    warmup: int = 10
    schedule: str = "constant"  # after warm-up: "constant", or "linear" decay to 0 at the last planned step
    rank: int = 16
    alpha: float = 32.0
    accumulate: int = 1
    checkpoint_every: int = 20
    max_minutes: float = 0.0
    threads: int | None = None
    agents: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()  # train only on these domains' calls (default: all in the data)
    base_model: str | None = None  # GGUF; default: the shipped one
    init: str | None = None  # warm start: a GGUF LoRA adapter or a PEFT folder (same rank and alpha)
    target_modules: tuple[str, ...] = field(default=TARGET_MODULES)
    # LoRA trains only in the top N transformer layers (0: all). The layers below keep the weights they
    # start with (the warm start's, or zero), frozen, so the backward pass stops above them.
    train_layers: int = 0
    precision: str = "fp32"  # or "bf16": the forward pass under bfloat16 autocast (for a GPU; weights stay fp32)
    # A cut vocabulary (`train vocab`'s token list; "choice-vocab": the shipped one): the fit's embedding and
    # output layer keep only its rows, as the cut model eval plays on does, and the data is tokenised by the
    # full model's tokenizer and mapped into it. The base is then the cut model (or the full one, cut here).
    vocab: str | None = None
    tokenizer: str | None = None  # the tokenizer's files (folder) or a GGUF; default: the base's (with vocab: the full model's)


def check_config(config: TrainConfig) -> None:
    """Raise ValueError naming the option when a number is out of range (what the CLI's argument types
    refuse), before anything is loaded or written."""
    for name, value, low in (("--max-len", config.max_len, 1), ("--rank", config.rank, 1),
                             ("--accumulate", config.accumulate, 1), ("--checkpoint-every", config.checkpoint_every, 1),
                             ("--steps", config.steps, 0), ("--warmup", config.warmup, 0)):
        check_range(name, value, low, integer=True)
    check_range("--lr", config.lr, 0, 1, low_open=True)
    check_range("--epochs", config.epochs, 0, low_open=True)
    check_range("--alpha", config.alpha, 0, low_open=True)
    check_range("--max-minutes", config.max_minutes, 0)
    check_range("--train-layers", config.train_layers, 0, integer=True)
    if config.threads is not None:
        check_range("--threads", config.threads, 1, integer=True)
    if config.schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {config.schedule!r}; schedules: {', '.join(SCHEDULES)}")
    if config.precision not in PRECISIONS:
        raise ValueError(f"unknown precision {config.precision!r}; precisions: {', '.join(PRECISIONS)}")


def build_sequences(
    config: TrainConfig, tokenizer: Any, rows: list[dict[str, Any]] | None = None, keep: list[int] | None = None
) -> tuple[list[PackedSequence], PackStats, dict]:
    """The packed sequences of the dataset's calls (`rows`: read from `config.data` when not given), in the
    cut vocabulary `keep`'s ids when given; ValueError when no call is left to train on."""
    rows = training_rows(config.data, config.agents, config.domains, config.seed) if rows is None else rows
    calls = [call_from_json(r) for r in rows]
    sequences, stats = pack_calls(calls, TokenizerVocabulary(tokenizer), config.max_len, keep)
    if not sequences and not stats.skipped_uncovered:
        raise ValueError(
            f"{config.data}: every one of its {stats.calls} calls is longer than --max-len {config.max_len} "
            "tokens; raise --max-len"
        )
    if not sequences:
        why = (f"{stats.skipped_too_long} longer than --max-len {config.max_len} tokens, "
               f"{stats.skipped_uncovered} with a token the cut vocabulary {config.vocab} does not keep")
        raise ValueError(f"{config.data}: none of its {stats.calls} calls is left to train on: {why}")
    stats.by_domain = length_report([r["domain"] for r in rows], stats.lengths, config.max_len)
    return sequences, stats, {str(folder): read_manifest(folder) for folder in data_folders(config.data)}


SCHEDULES = ("constant", "linear")
PRECISIONS = ("fp32", "bf16")


def lr_factor(step: int, total: int, config: TrainConfig) -> float:
    """The learning rate's factor at optimizer step `step` (0-based) of `total`: linear warm-up, then
    constant or a linear decay that reaches 0 after the last step."""
    if config.schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {config.schedule!r}; schedules: {', '.join(SCHEDULES)}")
    warmup = max(1, config.warmup)
    if step < warmup:
        return (step + 1) / warmup
    if config.schedule == "linear":
        return max(0.0, (total - step) / max(1, total - warmup + 1))
    return 1.0


def _schedule(n: int, total: int, seed: int) -> list[int]:
    """`total` sequence indices: shuffled epochs of `n` sequences, as many as it takes."""
    if n < 1:
        raise ValueError("no training sequences to schedule")
    order: list[int] = []
    epoch = 0
    while len(order) < total:
        perm = list(range(n))
        random.Random(f"{seed}/{epoch}").shuffle(perm)
        order += perm
        epoch += 1
    return order[:total]


def sequence_loss(model: Any, seq: PackedSequence, sliding_window: int | None, softcap: float | None, device: Any):
    """Mean cross-entropy of a packed sequence's reply tokens (tree attention; LM head only there)."""
    torch, _, _ = training_imports()
    full, sliding = tree_masks(seq, sliding_window)
    neg = torch.finfo(torch.float32).min

    def additive(mask):
        m = torch.from_numpy(mask).to(device)
        return torch.zeros(m.shape, dtype=torch.float32, device=device).masked_fill(~m, neg)[None, None]

    ids = torch.tensor([seq.input_ids], device=device)
    pos = torch.tensor([seq.positions], device=device)
    causal_lm = model.get_base_model()
    if causal_lm.config._attn_implementation == tree_attention.TREE_ATTENTION:
        masks = {"full_attention": tree_attention.block_mask(full, device),
                 "sliding_attention": tree_attention.block_mask(sliding, device)}
    else:
        masks = {"full_attention": additive(full), "sliding_attention": additive(sliding)}
    hidden = causal_lm.model(input_ids=ids, position_ids=pos, attention_mask=masks, use_cache=False)
    hidden = hidden.last_hidden_state[0]
    index = torch.tensor(seq.target_parents(), device=device)
    labels = torch.tensor([seq.input_ids[t] for t in seq.targets], device=device)
    logits = causal_lm.lm_head(hidden.index_select(0, index))
    if softcap:
        logits = torch.tanh(logits / softcap) * softcap
    return torch.nn.functional.cross_entropy(logits.float(), labels)


def train(config: TrainConfig, progress: bool = True, stop: threading.Event | None = None) -> dict[str, Any]:
    """Fine-tune (or resume) per `config`; returns the summary also written to `out/summary.json`. Once
    `stop` is set (the CLI sets it on SIGTERM or Ctrl-C), the step under way finishes and the run ends as
    `--max-minutes` ends it: checkpoint, adapter, summary."""
    check_config(config)
    # the data checked before the model is loaded or anything is written
    training_data = load_training_data(config.data, config.agents, config.domains, config.seed)
    rows = training_data.rows
    out = Path(config.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder")
    torch, _, peft = training_imports()
    from tqdm import tqdm

    from .gguf_adapter import export_adapter

    threads = config.threads or default_threads()
    torch.set_num_threads(threads)
    torch.manual_seed(config.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":  # TF32 matrix products: float32 weights at tensor-core speed
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True

    load_start = time.perf_counter()
    keep, vocab_info = cut_vocabulary_list(config.vocab)
    base_path = config.base_model
    if keep is not None and base_path is None:
        from ..llm.vocab_trim import choice_vocab_model_path

        base_path = str(choice_vocab_model_path(vocab_info["list"]))
    own_tokenizer = keep is None and config.tokenizer is None
    base, tokenizer, base_info = load_base_model(base_path, with_tokenizer=own_tokenizer)
    if not own_tokenizer:  # a cut model's data is tokenised as the full model tokenises it, then mapped
        tokenizer = load_tokenizer(config.tokenizer)
    if keep is not None:
        cut_embeddings(base, keep)
    load_s = time.perf_counter() - load_start
    n_layers, sliding_window, softcap = attention_geometry(base)
    if config.train_layers > n_layers:  # before anything is written
        raise ValueError(f"--train-layers {config.train_layers}: the model has {n_layers} layers")
    sequences, stats, manifests = build_sequences(config, tokenizer, rows, keep)
    out.mkdir(parents=True, exist_ok=True)
    per_epoch = math.ceil(len(sequences) / config.accumulate)
    total = config.steps or max(1, math.ceil(config.epochs * per_epoch))
    order = _schedule(len(sequences), total * config.accumulate, config.seed)
    # what a background run trains on, readable before it ends (summary.json repeats it at the end)
    atomic_write(out / "data.json", json.dumps({"sequences": len(sequences), "steps_planned": total,
                                                "per_epoch": per_epoch, "packed_tokens": stats.packed_tokens,
                                                "skipped_too_long": stats.skipped_too_long,
                                                "skipped_uncovered": stats.skipped_uncovered,
                                                "by_domain": stats.by_domain,
                                                "sources": training_data.sources}, indent=2) + "\n")

    model = lora_model(base, rank=config.rank, alpha=config.alpha, target_modules=config.target_modules,
                       train_layers=config.train_layers, device=device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_factor(s, total, config))

    checkpoint = out / "checkpoint.pt"
    step, seconds, tokens_done = 0, 0.0, 0
    init_info: dict[str, str] | None = None
    if checkpoint.is_file():
        # Loaded on the CPU: the RNG state must stay a CPU tensor, and the optimizer moves its own state to
        # the parameters' device, so a run checkpointed on one device resumes on another.
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
        # a checkpoint written before an option existed ran with that option's default
        defaults = _config_json(TrainConfig(data="", out=""))
        saved = {k: v for k, v in {**defaults, **state["config"]}.items() if k not in _RESUMABLE}
        mine = {k: v for k, v in _config_json(config).items() if k not in _RESUMABLE}
        if saved != mine:
            diff = sorted(k for k in mine if saved.get(k) != mine[k])
            raise ValueError(f"{checkpoint}: made with another configuration ({', '.join(diff)}); use another --out")
        peft.set_peft_model_state_dict(model, state["adapter"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        step, seconds, tokens_done = state["step"], state["seconds"], state["tokens"]
        init_info = state.get("init")
    elif config.init:
        init_info = warm_start(model, config.init, config.rank, config.alpha)

    def save_checkpoint() -> None:
        buffer = io.BytesIO()
        torch.save(
            {
                "step": step,
                "seconds": seconds,
                "tokens": tokens_done,
                "config": _config_json(config),
                "adapter": peft.get_peft_model_state_dict(model, save_embedding_layers=False),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "torch_rng": torch.get_rng_state(),
                "init": init_info,
            },
            buffer,
        )
        atomic_write(checkpoint, buffer.getvalue())

    log_path = out / "log.jsonl"
    bar = tqdm(total=total, initial=step, desc="train", disable=not progress, unit="step")
    stopped_early = False
    run_start = loop_start = time.perf_counter()
    while step < total:
        if (stop is not None and stop.is_set()) or (
            config.max_minutes and time.perf_counter() - loop_start > config.max_minutes * 60
        ):
            stopped_early = True
            break
        t0 = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        batch = order[step * config.accumulate : (step + 1) * config.accumulate]
        if not batch:  # the loop must make progress: a step without sequences would repeat forever
            raise RuntimeError(f"the schedule has no sequences for step {step + 1} of {total}")
        loss_sum, n_tokens = 0.0, 0
        for i in batch:
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=config.precision == "bf16"):
                loss = sequence_loss(model, sequences[i], sliding_window, softcap, device) / len(batch)
            loss.backward()
            loss_sum += float(loss.detach())
            n_tokens += len(sequences[i])
        optimizer.step()
        scheduler.step()
        step += 1
        dt = time.perf_counter() - t0
        tokens_done += n_tokens
        entry = json.dumps({"step": step, "loss": round(loss_sum, 5), "tokens": n_tokens,
                            "seconds": round(dt, 3), "lr": scheduler.get_last_lr()[0]}) + "\n"
        log_fd = open_no_follow(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, keep_content=True)
        with os.fdopen(log_fd, "a") as handle:
            handle.write(entry)
        bar.set_postfix(loss=f"{loss_sum:.3f}", tok_s=f"{n_tokens / dt:.0f}")
        bar.update(1)
        if step % config.checkpoint_every == 0 or step == total:
            seconds += time.perf_counter() - run_start
            run_start = time.perf_counter()
            save_checkpoint()
    bar.close()
    seconds += time.perf_counter() - run_start
    save_checkpoint()

    adapter_dir = own_folder(out / "adapter")
    with tempfile.TemporaryDirectory(prefix=".adapter-", dir=out) as saved:  # PEFT's files are renamed into
        # place (a link planted under one of their names is replaced, not followed); the embedding is never
        # trained, and a cut one is no change PEFT should save
        model.save_pretrained(saved, save_embedding_layers=False)
        for item in Path(saved).iterdir():
            os.replace(item, adapter_dir / item.name)
    gguf_path = export_adapter(adapter_dir, out / "adapter.gguf", base_gguf=base_info["gguf"])
    summary = {
        "config": _config_json(config),
        "base_model": base_info,
        "vocabulary": vocab_info,
        "init": init_info,
        "data": {
            "manifests": {
                folder: {k: m.get(k) for k in ("kind", "round", "adapter", "prompts_version", "prompt_profile",
                                               "generator", "problems", "episodes", "calls", "detours", "seed")
                         if k in m}
                for folder, m in manifests.items()
            },
            "sources": training_data.sources,  # per folder: share of episodes, episodes kept, calls kept
            "calls": stats.calls,
            "skipped_too_long": stats.skipped_too_long,
            "skipped_uncovered": stats.skipped_uncovered,
            "by_domain": stats.by_domain,
            "tokens_one_call_at_a_time": stats.call_tokens,
            "packed_tokens": stats.packed_tokens,
            "reply_tokens": stats.reply_tokens,
            "sequences": len(sequences),
        },
        "steps_done": step,
        "steps_planned": total,
        "stopped_early": stopped_early,
        "train_seconds": round(seconds, 1),
        "tokens_trained": tokens_done,
        "tokens_per_second": round(tokens_done / seconds, 1) if seconds else None,
        "base_load_seconds": round(load_s, 1),
        "machine": {"device": str(device), "threads": threads, "cpu": platform.processor() or platform.machine(),
                    "cpus": os.cpu_count(), "torch": torch.__version__},
        "adapter_gguf": str(gguf_path),
        "adapter_gguf_sha256": file_sha256(gguf_path),
        "trainable_parameters": sum(p.numel() for p in params),
    }
    atomic_write(out / "summary.json", json.dumps(summary, indent=2) + "\n")
    return summary


def _config_json(config: TrainConfig) -> dict[str, Any]:
    data = asdict(config)
    data["agents"] = list(config.agents)
    data["domains"] = list(config.domains)
    data["target_modules"] = list(config.target_modules)
    return data
