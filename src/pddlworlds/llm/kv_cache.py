"""Saved KV-cache states of one llama.cpp context, keyed by the tokens they hold (an LRU with a byte budget).

One llama.cpp context holds one KV cache, and a call whose prompt shares only a short prefix with it
throws the rest away: HiAgent's summariser call (its own system prompt) evicts the action prompt, and
agents sharing a loaded model evict each other. `PromptStates` keeps what a call is about to throw away
(the context's state, copied out with llama.cpp's state API) and, before a call, puts back the saved state
that shares the longest prefix with its prompt when that beats the live cache. A restore is a memory copy
(about 18 KiB a token for Gemma 3 270M), far cheaper than evaluating the tokens again
(`scripts/bench_llm.py --sections states` measures both).

The whole context's state is saved, not the sequence's: llama.cpp's per-sequence state leaves out the
cells of sliding-window layers that the last position no longer sees, and those are needed again when a
later prompt shares only an earlier part of the saved one.

Each call names its owner (an agent of an evaluation, or None): a call reuses only tokens that calls of
the same owner evaluated, the live cache included. Two agents whose system prompts share a start would
otherwise each pay for it or not depending on which ran first, and their times would not compare.

The caller holds the context's lock around `prepare`; nothing here is thread-safe on its own.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["DEFAULT_CACHE_BYTES", "MIN_SAVED_TOKENS", "CacheStats", "PromptStates", "common_prefix"]

#: Default budget of the saved states of one loaded model: 512 MiB holds about 29,000 tokens of Gemma 3
#: 270M's KV cache, e.g. eight agents' 3,000-token action prompts and their summariser prompts.
DEFAULT_CACHE_BYTES = 512 * 1024 * 1024
#: A call saves the live state only when it would discard at least this many evaluated tokens, and
#: restores a saved one only when it reuses at least this many more tokens than the live cache: below
#: that, evaluating them again costs about as much as the copy.
MIN_SAVED_TOKENS = 64


def common_prefix(a: np.ndarray | Sequence[int], b: np.ndarray | Sequence[int]) -> int:
    """Length of the common prefix of two token sequences (arrays or lists)."""
    a, b = np.asarray(a), np.asarray(b)
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if len(diff) else n


@dataclass
class CacheStats:
    """What `prepare` did for one call: tokens reused from the cache and how, and the copies' seconds."""

    cached_tokens: int = 0  # prompt tokens not evaluated again (live prefix or restored state)
    restored: bool = False
    saved: bool = False


@dataclass
class _Entry:
    owner: str | None
    tokens: np.ndarray
    state: Any  # the ctypes byte array llama.cpp wrote (kept as is: no copy on save or restore)
    size: int  # bytes of it that hold the state


class PromptStates:
    """Saved context states of one `llama_cpp.Llama`, least recently used first, within `max_bytes`."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES, min_tokens: int = MIN_SAVED_TOKENS) -> None:
        if max_bytes < 0:
            raise ValueError(f"the prompt cache budget must be >= 0 bytes, not {max_bytes}")
        self.max_bytes = int(max_bytes)
        self.min_tokens = max(1, int(min_tokens))
        self._entries: OrderedDict[int, _Entry] = OrderedDict()
        self._next_key = 0
        self.bytes = 0
        self.live_owner: str | None = None  # whose call evaluated what the context holds now

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()
        self.live_owner = None
        self.bytes = 0

    def prepare(self, llama: Any, tokens: list[int], owner: str | None = None, reuse: bool = True) -> CacheStats:
        """Before `llama` evaluates `tokens` for `owner`: save the live state if the call would discard much
        of it, restore `owner`'s saved state sharing the longest prefix if it beats the live one, and never
        leave another owner's tokens for the call to reuse. `reuse=False` leaves nothing to reuse (the whole
        prompt is evaluated afresh, so its greedy reply does not depend on what was cached); the live state
        is still saved for later calls. Returns how many of `tokens` will not be evaluated (llama-cpp-python
        re-evaluates the last one when all are cached)."""
        query = np.asarray(tokens, dtype=np.intc)
        n_live = int(llama.n_tokens)
        live = np.asarray(llama.input_ids[:n_live], dtype=np.intc)
        own_live = reuse and owner == self.live_owner
        live_prefix = common_prefix(live, query) if own_live else 0
        stats = CacheStats()
        best_key, best_prefix = None, live_prefix
        for key, entry in self._entries.items() if reuse else ():
            shared = common_prefix(entry.tokens, query) if entry.owner == owner else 0
            if shared > best_prefix:
                best_key, best_prefix = key, shared
        restore = best_key is not None and best_prefix - live_prefix >= self.min_tokens
        if restore and best_key is not None:
            self._entries.move_to_end(best_key)  # used now: the save below evicts others first
        if self.max_bytes and n_live - live_prefix >= self.min_tokens and not self._covered(live, self.live_owner):
            stats.saved = self._save(llama, live, self.live_owner)
        entry = self._entries.get(best_key) if restore and best_key is not None else None
        if entry is not None:
            stats.restored = _load(llama, entry, keep=min(best_prefix, len(query) - 1))
        elif not own_live:
            llama.n_tokens = 0  # llama-cpp-python would reuse the shared start of another owner's (or any) prompt
        self.live_owner = owner
        reused = best_prefix if stats.restored else live_prefix
        stats.cached_tokens = min(reused, max(0, len(query) - 1))
        return stats

    def _covered(self, live: np.ndarray, owner: str | None) -> bool:
        """Whether a saved state of `owner` already holds `live` but for fewer than `min_tokens` at its end."""
        return any(
            len(live) - common_prefix(e.tokens, live) < self.min_tokens
            for e in self._entries.values()
            if e.owner == owner
        )

    def _save(self, llama: Any, live: np.ndarray, owner: str | None) -> bool:
        import llama_cpp

        ctx = llama.ctx
        size = int(llama_cpp.llama_state_get_size(ctx))
        if size <= 0 or size > self.max_bytes:
            return False
        buffer = (ctypes.c_uint8 * size)()
        written = int(llama_cpp.llama_state_get_data(ctx, buffer, size))
        if written <= 0:
            return False
        for key in [
            k for k, e in self._entries.items() if e.owner == owner and common_prefix(e.tokens, live) == len(e.tokens)
        ]:
            self._drop(key)  # a state holding a prefix of this one is never the best match again
        self._entries[self._next_key] = _Entry(owner, live.copy(), buffer, written)
        self._next_key += 1
        self.bytes += size
        while self.bytes > self.max_bytes and self._entries:
            self._drop(next(iter(self._entries)))
        return True

    def _drop(self, key: int) -> None:
        self.bytes -= len(self._entries.pop(key).state)  # the array's full size, as counted on save


def _load(llama: Any, entry: _Entry, keep: int) -> bool:
    """Replace the live state by `entry`'s and keep its first `keep` tokens as the reusable prefix.

    Never claiming the whole prompt makes llama-cpp-python evaluate at least the last prompt token, so
    sampling starts from logits computed now, not from the previous call's."""
    import llama_cpp

    memory = llama_cpp.llama_get_memory(llama.ctx)
    if int(llama_cpp.llama_state_set_data(llama.ctx, entry.state, entry.size)) != entry.size:
        llama.reset()
        return False
    llama.input_ids[: len(entry.tokens)] = entry.tokens
    llama.n_tokens = max(0, keep)
    llama_cpp.llama_memory_seq_rm(memory, 0, llama.n_tokens, -1)
    return True
