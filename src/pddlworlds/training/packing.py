"""Pack recorded calls into training sequences: a token trie per sequence, with tree attention.

Successive prompts of an episode share long prefixes (the system text, the problem, the memory so far:
STANDARD only appends to it; HiAgent appends within a subgoal and folds between subgoals). Putting every
call's tokens (prompt, then reply) into one token trie stores each shared prefix once; a token attends to
its ancestors in the trie and to itself, at the position it has in its own call, so every reply token
sees exactly the prompt the agent sent, and a whole STANDARD episode, or a HiAgent subgoal segment with
its summary and retrieval calls, trains as one sequence. Loss is only on reply tokens; `parents` gives,
for each of them, the position whose hidden state predicts it, so the trainer applies the LM head only
there.

A call is tokenised as the embedded backend tokenises it (`llm.tokenising.tokenize_pieces` over the prompt
format's pieces): a reply that writes `<end_of_turn>` or an observation that quotes `<eos>` trains as the
text the model was fed, never as control tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..llm import Message
from ..llm.prompt_formats import plain_pieces
from ..llm.tokenising import Vocabulary, tokenize_pieces

__all__ = [
    "REPLY_END",
    "PackStats",
    "PackedSequence",
    "TokenizerVocabulary",
    "call_tokens",
    "pack_calls",
    "tree_masks",
]

#: What ends a trained reply when its call recorded no stop sequence (data made before calls kept their
#: stop): a blank line. Otherwise a reply ends with its call's first stop sequence, which the agent's
#: generation is cut at (the agent never sees it).
REPLY_END = "\n\n"


@dataclass
class PackedSequence:
    input_ids: list[int] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)  # -1 for the root
    positions: list[int] = field(default_factory=list)
    targets: list[int] = field(default_factory=list)  # node indices whose token is a reply token
    calls: int = 0
    _children: dict[tuple[int, int], int] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.input_ids)

    def new_nodes(self, path: Sequence[int]) -> int:
        """How many nodes inserting `path` would add."""
        node = -1
        for i, token in enumerate(path):
            child = self._children.get((node, token))
            if child is None:
                return len(path) - i
            node = child
        return 0

    def insert(self, path: Sequence[int], reply_from: int) -> None:
        """Add a call's tokens; those from index `reply_from` on are its reply (targets)."""
        node = -1
        for i, token in enumerate(path):
            child = self._children.get((node, token))
            if child is None:
                child = len(self.input_ids)
                self._children[(node, token)] = child
                self.input_ids.append(int(token))
                self.parents.append(node)
                self.positions.append(i)
            if i >= reply_from and child not in self._target_set():
                self.targets.append(child)
                self._targets.add(child)
            node = child
        self.calls += 1

    def _target_set(self) -> set[int]:
        if not hasattr(self, "_targets"):
            self._targets: set[int] = set(self.targets)
        return self._targets

    def target_parents(self) -> list[int]:
        return [self.parents[t] for t in self.targets]


@dataclass
class PackStats:
    calls: int = 0
    skipped_too_long: int = 0
    skipped_uncovered: int = 0  # with a cut vocabulary: calls with a token it does not keep
    call_tokens: int = 0  # what the calls would cost one by one
    packed_tokens: int = 0
    reply_tokens: int = 0
    lengths: list[int] = field(default_factory=list)  # every call's tokens (prompt and reply), in input order
    by_domain: dict[str, dict[str, int | float]] = field(default_factory=dict)  # filled by the trainer


class TokenizerVocabulary:
    """A Hugging Face tokenizer with llama.cpp's `tokenize(text, add_bos, special)`, so that training
    tokenises with `tokenize_pieces` as inference does. Text without special parsing is
    `split_special_tokens=True`: `<eos>` written in text is split as llama.cpp splits it, while the
    tokenizer's ordinary added tokens (runs of newlines) still match, so text that quotes no control token
    gets the ids it got with parsing."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        ids = self.tokenizer(text.decode("utf-8"), add_special_tokens=False, split_special_tokens=not special)
        return ([self.tokenizer.bos_token_id] if add_bos else []) + list(ids["input_ids"])


def call_tokens(
    messages: Sequence[Message], reply: str, vocab: Vocabulary, end: str = REPLY_END
) -> tuple[list[int], int]:
    """(tokens of prompt and reply, where the reply starts): the prompt as the embedded model gets it
    (`llm.format_plain`'s pieces, with BOS), the reply followed by `end` (what stops the call) as text,
    tokenised apart as llama.cpp generates it."""
    prompt = tokenize_pieces(vocab, plain_pieces(messages))
    answer = tokenize_pieces(vocab, [(reply + end, False)], add_bos=False)
    return prompt + answer, len(prompt)


def pack_calls(
    calls: Iterable[tuple[Sequence[Message], str] | tuple[Sequence[Message], str, str]],
    vocab: Vocabulary,
    max_len: int,
    keep: Sequence[int] | None = None,
) -> tuple[list[PackedSequence], PackStats]:
    """Pack calls in order; a sequence is closed when the next call would push it past `max_len`
    tokens. A call longer than `max_len` on its own is skipped (counted in the stats). `keep`: a cut
    vocabulary's ids in the full one (ascending, `llm.vocab_trim.choice_vocab_keep`): the tokens become their
    places in it, the ids the cut model has; a call with a token it does not keep is skipped (counted), as
    the cut model could not be sent that text."""
    stats = PackStats()
    sequences: list[PackedSequence] = []
    current = PackedSequence()
    place = {token: i for i, token in enumerate(keep)} if keep is not None else None
    for messages, reply, *end in calls:
        path, reply_from = call_tokens(messages, reply, vocab, *end)
        stats.calls += 1
        stats.lengths.append(len(path))
        if len(path) > max_len:
            stats.skipped_too_long += 1
            continue
        if place is not None:
            mapped = [place.get(token, -1) for token in path]
            if -1 in mapped:
                stats.skipped_uncovered += 1
                continue
            path = mapped
        stats.call_tokens += len(path)
        stats.reply_tokens += len(path) - reply_from
        if len(current) + current.new_nodes(path) > max_len:
            sequences.append(current)
            current = PackedSequence()
        current.insert(path, reply_from)
    if current.calls:
        sequences.append(current)
    stats.packed_tokens = sum(len(s) for s in sequences)
    return sequences, stats


def tree_masks(seq: PackedSequence, sliding_window: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(full, sliding) boolean masks [n, n]: query i may attend key j when j is i or an ancestor of i
    (and, for the sliding one, fewer than `sliding_window` positions back)."""
    n = len(seq)
    full = np.zeros((n, n), dtype=bool)
    for i, parent in enumerate(seq.parents):
        if parent >= 0:
            full[i] = full[parent]
        full[i, i] = True
    if sliding_window is None:
        return full, full
    pos = np.asarray(seq.positions)
    near = (pos[:, None] - pos[None, :]) < sliding_window
    return full, full & near
