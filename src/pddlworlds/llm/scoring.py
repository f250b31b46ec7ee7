"""How probable each of several given continuations of one prompt is, under a llama.cpp model.

This is the admissible-action setting's core: an agent hands over the texts it would accept as its
reply (one per valid action) and the model's own log-probability of each whole text decides. The prompt
is evaluated once, reusing what the model's KV cache already holds of it; then each continuation's tokens
are evaluated after it. Continuations are taken in sorted token order, so the tokens two of them share at
their start (`stack b1 on`) are evaluated once: the next one drops from the cache only the tokens past
the shared prefix. A continuation's last token is scored but never evaluated (no later token needs its
logits). On return the cache holds the prompt again, so the next call (scoring or generating) reuses it.

An agent needs the pick, not every score: given its ranking rule (`rank`), the candidates are evaluated
best bound first. Every log-probability is at most 0, so the known part of a candidate's sum (its first
token's, from the prompt's own row, before anything is decoded) bounds its score under any rule that does
not fall as the sum rises (the sum, per token, per word); once a fully scored candidate outranks every
other's bound, the rest are left. Where the model is sure, that is one or two candidates of dozens.

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

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .kv_cache import common_prefix
from .llama_batch import decode_batch, logits_at, token_batch

__all__ = ["Rank", "Scores", "score_continuations"]

#: (candidate index, summed log-probability) -> the candidate's score; must not fall as the sum rises.
Rank = Callable[[int, float], float]


@dataclass(frozen=True)
class Scores:
    """Each continuation's summed token log-probability (in the order given), how many candidate tokens
    the model evaluated for them all (shared prefixes and last tokens not counted twice), and how many of
    the prompt's tokens it took from its KV cache instead of evaluating them."""

    logprobs: tuple[float, ...]
    evaluated_tokens: int
    cached_tokens: int = 0
    exact: tuple[bool, ...] = ()  # with a `rank`: which logprobs are whole sums (the others are bounds)
    best: int | None = None  # with a `rank`: the candidate it puts first


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


def score_continuations(
    llama: Any, prompt: Sequence[int], continuations: Sequence[Sequence[int]], rank: Rank | None = None
) -> Scores:
    """The summed log-probability of each token list in `continuations` as the continuation of `prompt`
    (token ids of the model's vocabulary; the prompt with its BOS).

    With `rank` ((index, summed log-probability) -> score, non-decreasing in the sum), only the pick
    matters: candidates are evaluated best bound first and the search stops once the best evaluated one
    outranks every other's bound (`_best_first`); the others' entries are then upper bounds of their sums,
    flagged in `Scores.exact`."""
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
    trie = _Trie(llama, base, root, [tuple(c) for c in continuations])
    try:
        with token_batch(max(1, longest - 1)) as batch:
            if rank is None:
                for i in sorted(range(len(continuations)), key=lambda i: trie.candidates[i]):
                    trie.evaluate(batch, i)
                return Scores(tuple(trie.known_sum(i)[0] for i in range(len(continuations))), trie.evaluated, kept)
            best = _best_first(trie, batch, rank)
            sums = [trie.known_sum(i) for i in range(len(continuations))]
            return Scores(tuple(s for s, _ in sums), trie.evaluated, kept, tuple(full for _, full in sums), best)
    finally:
        _truncate(llama, base)  # the cache holds the prompt, as llama-cpp-python's bookkeeping says
        llama.n_tokens = base


class _Trie:
    """The candidates' tokens after the prompt and what is known of them: `known[c[:j + 1]]` is the
    log-probability of a candidate's token j after its first j (the prompt's row gives every token 0).
    `path` is what the KV cache holds after the prompt; evaluating a candidate keeps the part of the path
    it shares and decodes the rest of its tokens but the last (no later token needs that one's logits)."""

    def __init__(self, llama: Any, base: int, root: _Row, candidates: list[tuple[int, ...]]) -> None:
        self.llama, self.base, self.candidates = llama, base, candidates
        self.known: dict[tuple[int, ...], float] = {c[:1]: root.logprob(c[0]) for c in candidates}
        self.path: list[int] = []
        self.evaluated = 0  # candidate tokens decoded, shared prefixes once

    def known_sum(self, i: int) -> tuple[float, bool]:
        """The summed log-probability of candidate i's tokens known so far (an upper bound of its sum, as
        every log-probability is <= 0), and whether that is all of them."""
        tokens = self.candidates[i]
        total = 0.0
        for j in range(len(tokens)):
            lp = self.known.get(tokens[: j + 1])
            if lp is None:
                return total, False
            total += lp
        return total, True

    def evaluate(self, batch: Any, i: int) -> None:
        """Decode what candidate i needs beyond the shared path and learn every candidate's log-probability
        that the new rows give."""
        head = list(self.candidates[i][:-1])
        reuse = common_prefix(self.path, head)
        if reuse < len(self.path):
            _truncate(self.llama, self.base + reuse)
            del self.path[reuse:]
        todo = head[reuse:]
        if not todo:
            return
        rows = _decode(self.llama, batch, todo, self.base + reuse)
        self.path += todo
        self.evaluated += len(todo)
        for tokens in self.candidates:
            shared = _shared(self.path, tokens, len(tokens) - 1)
            for j in range(reuse, shared):  # rows[j - reuse]: the distribution after path[: j + 1]
                self.known[tokens[: j + 2]] = rows[j - reuse].logprob(tokens[j + 1])


def _shared(path: list[int], tokens: tuple[int, ...], limit: int) -> int:
    """How many of `tokens`' first `limit` tokens `path` starts with (plain Python: candidates are short)."""
    n = min(len(path), limit)
    k = 0
    while k < n and path[k] == tokens[k]:
        k += 1
    return k


def _best_first(trie: _Trie, batch: Any, rank: Rank) -> int:
    """The index of the candidate `rank` puts first (ties: the lowest index), evaluating candidates in the
    order of their bounds (`rank` of the known sum) and stopping when an evaluated one's score is at least
    every other's bound. Exact, because a candidate's score can only fall as its later tokens become known."""
    heap = [(-rank(i, trie.known_sum(i)[0]), i) for i in range(len(trie.candidates))]
    heapq.heapify(heap)
    while True:
        key, i = heapq.heappop(heap)
        total, full = trie.known_sum(i)
        bound = rank(i, total)
        if -bound > key:  # learnt more since it was queued (a neighbour's rows): queue it at its bound
            heapq.heappush(heap, (-bound, i))
            continue
        if full:
            return i
        trie.evaluate(batch, i)
        heapq.heappush(heap, (-rank(i, trie.known_sum(i)[0]), i))
