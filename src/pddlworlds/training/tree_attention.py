"""Block-sparse attention for packed token tries: the same result as dense attention with the tree mask,
without computing the blocks the mask rules out.

A packed sequence's mask lets a token see only its trie ancestors, and in Gemma 3's sliding-window
layers (15 of 18) only those fewer than 512 positions back. Dense `scaled_dot_product_attention` with an
explicit mask computes every query-key pair all the same, so at 6,144 tokens attention is most of a
training step. Here the queries go in blocks; each block attends to the key blocks its mask touches
(gathered, or a plain slice when they are contiguous), with the mask's sub-matrix, through torch's fused
attention. Every row keeps at least itself, so no row is empty and the softmax is the dense one.

`TREE_ATTENTION` is registered with transformers' `AttentionInterface` (the library's extension point for
attention functions) by `register()`; a model loaded with `attn_implementation=TREE_ATTENTION` then takes
`BlockTreeMask` objects as its per-layer-type masks (`block_masks`). Given a plain tensor mask it falls
back to transformers' own SDPA path, so such a model still runs anything else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ATTENTIONS", "BLOCK", "TREE_ATTENTION", "BlockTreeMask", "attention_implementation", "block_mask", "block_tree_attention", "register"]

#: The name the attention function is registered under.
TREE_ATTENTION = "pddlworlds_tree"

#: Queries (and keys) per block: 256 keeps the Python loop short (24 blocks at 6,144 tokens) while a
#: sliding-window layer still reads about 3-4 key blocks per query block instead of 24.
BLOCK = 256


@dataclass(frozen=True)
class QueryBlock:
    start: int
    stop: int
    keys: Any  # torch LongTensor of key indices, or a slice when they are contiguous
    mask: Any  # torch bool [stop - start, len(keys)]: True where the query may attend the key


@dataclass(frozen=True)
class BlockTreeMask:
    """One layer type's mask of a packed sequence, cut into query blocks with the keys each one needs."""

    length: int
    blocks: tuple[QueryBlock, ...]

    @property
    def pairs(self) -> int:
        """Query-key pairs computed (dense attention computes `length ** 2`)."""
        return sum((b.stop - b.start) * b.mask.shape[1] for b in self.blocks)


def block_mask(allowed: np.ndarray, device: Any = None, block: int = BLOCK) -> BlockTreeMask:
    """`allowed` (bool [n, n], True where query i may attend key j; every diagonal entry True) as query
    blocks of `block` rows, each with the key blocks any of its rows may attend."""
    import torch

    n = allowed.shape[0]
    if allowed.shape != (n, n) or not allowed[np.arange(n), np.arange(n)].all():
        raise ValueError("a tree mask must be square and let every token attend to itself")
    nb = -(-n // block)
    padded = np.zeros((nb * block, nb * block), dtype=bool)
    padded[:n, :n] = allowed
    touched = padded.reshape(nb, block, nb, block).any(axis=(1, 3))
    blocks = []
    for qb in range(nb):
        start, stop = qb * block, min(n, (qb + 1) * block)
        key_blocks = np.flatnonzero(touched[qb])
        if key_blocks.size and key_blocks[-1] - key_blocks[0] + 1 == key_blocks.size:
            first, last = key_blocks[0] * block, min(n, (key_blocks[-1] + 1) * block)
            keys: Any = slice(first, last)
            sub = allowed[start:stop, first:last]
        else:
            index = np.concatenate([np.arange(k * block, min(n, (k + 1) * block)) for k in key_blocks])
            keys = torch.from_numpy(index).to(device)
            sub = allowed[start:stop][:, index]
        blocks.append(QueryBlock(start, stop, keys, torch.from_numpy(np.ascontiguousarray(sub)).to(device)))
    return BlockTreeMask(n, tuple(blocks))


def block_tree_attention(
    module: Any,
    query: Any,
    key: Any,
    value: Any,
    attention_mask: Any,
    dropout: float = 0.0,
    scaling: float | None = None,
    softcap: float | None = None,
    **kwargs: Any,
) -> tuple[Any, None]:
    """transformers' attention-function signature: query [b, heads, n, d], key/value [b, kv_heads, n, d]
    -> (output [b, n, heads, d], no weights)."""
    import torch

    if not isinstance(attention_mask, BlockTreeMask):
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout,
                                      scaling=scaling, softcap=softcap, **kwargs)
    if softcap is not None or dropout:
        raise ValueError("tree attention supports neither attention-logit softcapping nor dropout")
    if query.shape[2] != attention_mask.length or key.shape[2] != attention_mask.length:
        raise ValueError(f"tree mask of {attention_mask.length} tokens for {query.shape[2]} queries, {key.shape[2]} keys")
    gqa = query.shape[1] != key.shape[1]
    outputs = []
    for b in attention_mask.blocks:
        if isinstance(b.keys, slice):
            k, v = key[:, :, b.keys], value[:, :, b.keys]
        else:
            k, v = key.index_select(2, b.keys), value.index_select(2, b.keys)
        outputs.append(torch.nn.functional.scaled_dot_product_attention(
            query[:, :, b.start:b.stop], k, v, attn_mask=b.mask[None, None], scale=scaling, enable_gqa=gqa))
    return torch.cat(outputs, dim=2).transpose(1, 2).contiguous(), None


def register() -> str:
    """Register `block_tree_attention` with transformers under `TREE_ATTENTION`; returns the name."""
    from transformers import AttentionInterface

    AttentionInterface.register(TREE_ATTENTION, block_tree_attention)
    return TREE_ATTENTION


#: Attention for training (`PDDLWORLDS_TRAIN_ATTENTION`): "tree" computes only the blocks the trie's mask
#: allows (`tree_attention.py`); "sdpa" is torch's fused attention over the whole dense mask, "eager" the
#: plain path. All three give the same losses; they differ in time.
ATTENTIONS = ("tree", "sdpa", "eager")


def attention_implementation(name: str | None = None) -> str:
    """The transformers attention implementation for `name` (default: `PDDLWORLDS_TRAIN_ATTENTION`, else
    "tree"), registering the tree one with transformers when it is chosen."""
    name = name or os.environ.get("PDDLWORLDS_TRAIN_ATTENTION") or "tree"
    if name not in ATTENTIONS:
        raise ValueError(f"PDDLWORLDS_TRAIN_ATTENTION={name!r}: one of {', '.join(ATTENTIONS)}")
    return register() if name == "tree" else name
