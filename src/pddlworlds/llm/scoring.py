"""How probable each of several given continuations of one prompt is, under a llama.cpp model.

This is the admissible-action setting's core: an agent hands over the texts it would accept as its
reply (one per valid action) and the model's own log-probability of each whole text decides. The prompt
is evaluated once, reusing what the model's KV cache already holds of it; then each continuation's tokens
are evaluated after it. Continuations are taken in sorted token order, so the tokens two of them share at
their start (`stack b1 on`) are evaluated once: the next one drops from the cache only the tokens past
the shared prefix. A continuation's last token is scored but never evaluated (no later token needs its
logits). On return the cache holds the prompt again, so the next call (scoring or generating) reuses it.

Why one candidate after another and not all in one decode, each in a sequence of its own (llama.cpp's
`n_seq_max` with a unified KV cache, the prompt copied to every sequence): tried on 2026-11-28 with
llama-cpp-python 0.3.36, Gemma 3 270M and the sc1 adapter, it is not exact. Two identical candidates
decoded side by side got different log-probabilities (-1.234 and -1.210 against -1.215 alone), and seven
candidates of a Blocksworld prompt differed from one-at-a-time scoring by up to 0.32 (the trie here: 0.0002),
enough to change a pick; llama.cpp issue 24962 reports the same on other models.

The model is a `llama_cpp.Llama`; besides its public methods this uses llama.cpp's C API through
llama-cpp-python (`llama_decode` with a batch of our own, `llama_batch`, so that each candidate token gets
its logits, which a model loaded without `logits_all` does not keep). Callers hold the model's lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .kv_cache import common_prefix
from .llama_batch import decode_batch, logits_at, token_batch

__all__ = ["Scores", "score_continuations"]


@dataclass(frozen=True)
class Scores:
    """Each continuation's summed token log-probability (in the order given), how many candidate tokens
    the model evaluated for them all (shared prefixes and last tokens not counted twice), and how many of
    the prompt's tokens it took from its KV cache instead of evaluating them."""

    logprobs: tuple[float, ...]
    evaluated_tokens: int
    cached_tokens: int = 0


class _Row:
    """The model's next-token distribution after one position, as logits and their log-sum-exp."""

    __slots__ = ("logits", "lse")

    def __init__(self, logits: np.ndarray) -> None:
        self.logits = logits
        top = float(logits.max())
        self.lse = top + float(np.log(np.exp(logits - top, dtype=np.float64).sum()))

    def logprob(self, token: int) -> float:
        return float(self.logits[token]) - self.lse


def _logits_row(llama: Any, index: int) -> _Row:
    return _Row(logits_at(llama, index).astype(np.float32, copy=True))


def _evaluate_prompt(llama: Any, prompt: Sequence[int]) -> tuple[_Row, int]:
    """Put `prompt` in the KV cache (keeping the part of it already there) and return the distribution
    after its last token (which is evaluated again if the whole prompt was cached) and how many of its
    tokens were kept."""
    cached = list(llama.input_ids[: llama.n_tokens])
    keep = min(common_prefix(cached, prompt), len(prompt) - 1)
    llama.n_tokens = keep  # `eval` drops the cache past n_tokens before it decodes
    llama.eval(list(prompt[keep:]))
    return _logits_row(llama, -1), keep


def _truncate(llama: Any, length: int) -> None:
    import llama_cpp

    llama_cpp.llama_memory_seq_rm(llama_cpp.llama_get_memory(llama.ctx), 0, length, -1)


def _decode(llama: Any, batch: Any, tokens: Sequence[int], start: int) -> list[_Row]:
    """Evaluate `tokens` at positions start.. (after what the cache holds) and return each one's row."""
    decode_batch(llama, batch, tokens, start, "scoring candidates")
    return [_logits_row(llama, i) for i in range(len(tokens))]


def score_continuations(llama: Any, prompt: Sequence[int], continuations: Sequence[Sequence[int]]) -> Scores:
    """The summed log-probability of each token list in `continuations` as the continuation of `prompt`
    (token ids of the model's vocabulary; the prompt with its BOS)."""
    if not prompt:
        raise ValueError("cannot score continuations of an empty prompt")
    if not continuations:
        raise ValueError("no continuations to score")
    empty = [i for i, c in enumerate(continuations) if not c]
    if empty:
        raise ValueError(f"continuation {empty[0]} has no tokens")
    longest = max(len(c) for c in continuations)
    if len(prompt) + longest > llama.n_ctx():
        raise ValueError(f"prompt of {len(prompt)} tokens and a continuation of {longest} exceed n_ctx={llama.n_ctx()}")
    if longest - 1 > llama.n_batch:
        raise ValueError(f"a continuation of {longest} tokens exceeds the model's batch of {llama.n_batch}")
    base = len(prompt)
    root, kept = _evaluate_prompt(llama, prompt)
    order = sorted(range(len(continuations)), key=lambda i: list(continuations[i]))
    scores = [0.0] * len(continuations)
    path: list[int] = []  # candidate tokens now in the cache after the prompt
    rows: list[_Row] = []  # rows[j]: the distribution after path[j]
    evaluated = 0
    try:
        with token_batch(max(1, longest - 1)) as batch:
            for i in order:
                tokens = list(continuations[i])
                reuse = common_prefix(path, tokens[:-1])
                if reuse < len(path):
                    _truncate(llama, base + reuse)
                    del path[reuse:], rows[reuse:]
                todo = tokens[reuse:-1]
                if todo:
                    rows += _decode(llama, batch, todo, base + reuse)
                    path += todo
                    evaluated += len(todo)
                scores[i] = root.logprob(tokens[0]) + sum(rows[j - 1].logprob(tokens[j]) for j in range(1, len(tokens)))
    finally:
        _truncate(llama, base)  # the cache holds the prompt, as llama-cpp-python's bookkeeping says
        llama.n_tokens = base
    return Scores(tuple(scores), evaluated, kept)
