"""Token log-probabilities from a llama.cpp model, for `pddlworlds serve`'s `/v1/completions` (`logprobs`,
`echo`): the log-softmax of the model's logits, the token's own value and the `k` likeliest tokens.

The served model is loaded without `logits_all` (that would keep n_ctx x 262,144 floats for Gemma 3), so
llama.cpp keeps the logits of the last position only. A generated token's row is that last row, read as
the token is sampled (`last_row`); a prompt's rows (`prompt_logprobs`, for `echo`) come from decoding the
prompt again in small batches of our own that ask for every position's logits (`llama_batch`), each row
read before the next batch overwrites it. Callers hold the model's lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .llama_batch import decode_batch, logits_at, token_batch

__all__ = ["ECHO_BATCH", "TokenLogprob", "last_row", "logprob_of", "prompt_logprobs"]

#: Prompt tokens decoded per batch for `echo`: each position's logits are a 1 MiB row for Gemma 3, and
#: llama.cpp keeps a batch's rows at once, so the batch is kept small (32 MiB of rows).
ECHO_BATCH = 32


@dataclass(frozen=True)
class TokenLogprob:
    """One token's log-probability given the tokens before it, and the `k` likeliest tokens at its place
    with theirs, best first (`top` may hold the token itself)."""

    token: int
    logprob: float
    top: tuple[tuple[int, float], ...]


def logprob_of(logits: np.ndarray, token: int, k: int) -> TokenLogprob:
    """`token`'s log-probability under the distribution `logits` (one row over the vocabulary), and the
    `k` likeliest tokens' (log-softmax: the exponentials in float32, their sum and the rest in float64)."""
    top_value = float(logits.max())
    log_total = top_value + float(np.log(np.exp(logits - np.float32(top_value)).sum(dtype=np.float64)))
    best: list[tuple[int, float]] = []
    if k > 0:
        ids = np.argpartition(logits, -k)[-k:] if k < len(logits) else np.arange(len(logits))
        ids = ids[np.argsort(logits[ids])[::-1]]
        best = [(int(i), float(logits[i]) - log_total) for i in ids]
    return TokenLogprob(int(token), float(logits[token]) - log_total, tuple(best))


def last_row(llama: Any) -> np.ndarray:
    """The logits of the last position llama.cpp decoded (a view: read it before the next decode)."""
    return logits_at(llama, -1)


def prompt_logprobs(llama: Any, tokens: Sequence[int], k: int) -> list[TokenLogprob]:
    """The log-probability of each of `tokens[1:]` given the tokens before it (the first, BOS, has none),
    decoding `tokens[:-1]` from position 0. On return the cache holds `tokens[:-1]`, as llama-cpp-python's
    bookkeeping says, so a generation that follows evaluates only the last prompt token. Raises
    RuntimeError when llama.cpp fails or is aborted (the cache is then unknown: reset it)."""
    import llama_cpp

    context = list(tokens[:-1])
    memory = llama_cpp.llama_get_memory(llama.ctx)
    llama_cpp.llama_memory_seq_rm(memory, -1, 0, -1)
    llama.n_tokens = 0
    found: list[TokenLogprob] = []
    with token_batch(ECHO_BATCH) as batch:
        for start in range(0, len(context), ECHO_BATCH):
            chunk = context[start : start + ECHO_BATCH]
            decode_batch(llama, batch, chunk, start, "scoring the prompt")
            llama.input_ids[start : start + len(chunk)] = chunk
            llama.n_tokens = start + len(chunk)
            for i in range(len(chunk)):
                found.append(logprob_of(logits_at(llama, i), tokens[start + i + 1], k))
    return found
