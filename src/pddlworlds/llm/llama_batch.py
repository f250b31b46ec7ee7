"""Decoding tokens with llama.cpp's C API in a batch of our own that keeps every position's logits.

A model loaded without `logits_all` (the embedded and served Gemma: n_ctx x 262,144 floats otherwise)
keeps the logits of the positions a batch asks for only. Scoring candidates (`scoring`) and the prompt
log-probabilities of `serve`'s `echo` (`serve_logprobs`) both need each position's row, so both fill a
batch here and read the rows back (`logits_at`) before the next decode overwrites them. The model is a
`llama_cpp.Llama`; callers hold its lock.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

__all__ = ["decode_batch", "logits_at", "token_batch"]


@contextlib.contextmanager
def token_batch(size: int) -> Iterator[Any]:
    """A llama.cpp batch of up to `size` tokens (one sequence), freed on leaving."""
    import llama_cpp

    batch = llama_cpp.llama_batch_init(size, 0, 1)
    try:
        yield batch
    finally:
        llama_cpp.llama_batch_free(batch)


def decode_batch(llama: Any, batch: Any, tokens: Sequence[int], start: int, doing: str) -> None:
    """Evaluate `tokens` at positions `start`.. of sequence 0 (after what the cache holds there), asking
    for every position's logits; RuntimeError naming what was `doing` when llama.cpp fails or is aborted."""
    import llama_cpp

    batch.n_tokens = len(tokens)
    for i, token in enumerate(tokens):
        batch.token[i] = token
        batch.pos[i] = start + i
        batch.n_seq_id[i] = 1
        batch.seq_id[i][0] = 0
        batch.logits[i] = True
    code = llama_cpp.llama_decode(llama.ctx, batch)
    if code != 0:
        raise RuntimeError(f"llama_decode returned {code} while {doing}")


def logits_at(llama: Any, index: int) -> np.ndarray:
    """The logits after the `index`-th token of the last decode (-1: its last), a view into llama.cpp's
    buffer: copy it or read it before the next decode."""
    import llama_cpp

    pointer = llama_cpp.llama_get_logits_ith(llama.ctx, index)
    return np.ctypeslib.as_array(pointer, shape=(llama.n_vocab(),))
