"""Block-sparse tree attention equals dense attention with the same mask: outputs and gradients."""

from __future__ import annotations

import random

import numpy as np
import pytest

from pddlworlds.training.packing import PackedSequence, tree_masks

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from pddlworlds.training.tree_attention import BlockTreeMask, block_mask, block_tree_attention


def _random_trie(n: int, seed: int) -> PackedSequence:
    """A trie shaped like packed episodes: long chains, short reply branches, a few restarts from far back."""
    rng = random.Random(seed)
    parents, positions = [], []
    for i in range(n):
        r = rng.random()
        parent = -1 if i == 0 else (i - 1 if r < 0.85 else rng.randrange(-1, i))
        parents.append(parent)
        positions.append(0 if parent < 0 else positions[parent] + 1)
    return PackedSequence(input_ids=[0] * n, parents=parents, positions=positions)


def _dense(query, key, value, allowed, scale):
    mask = torch.from_numpy(allowed)[None, None]
    return torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=mask, scale=scale,
                                                            enable_gqa=True).transpose(1, 2)


@pytest.mark.parametrize(("n", "window", "block"), [(700, 64, 128), (300, None, 64), (257, 32, 256), (5, 3, 4)])
def test_block_attention_equals_dense_attention_with_gradients(n, window, block):
    seq = _random_trie(n, seed=n)
    full, sliding = tree_masks(seq, window)
    gen = torch.Generator().manual_seed(n)
    for allowed in (full, sliding):
        q = torch.randn(1, 4, n, 32, generator=gen, dtype=torch.float64, requires_grad=True)
        k = torch.randn(1, 1, n, 32, generator=gen, dtype=torch.float64, requires_grad=True)
        v = torch.randn(1, 1, n, 32, generator=gen, dtype=torch.float64, requires_grad=True)
        weights = torch.randn(1, n, 4, 32, generator=gen, dtype=torch.float64)
        mask = block_mask(allowed, block=block)
        assert isinstance(mask, BlockTreeMask) and mask.length == n and mask.pairs <= (-(-n // block) * block) ** 2
        ours, _ = block_tree_attention(None, q, k, v, mask, scaling=0.125)
        grads = torch.autograd.grad((ours * weights).sum(), (q, k, v))
        dense = _dense(q, k, v, allowed, 0.125)
        dense_grads = torch.autograd.grad((dense * weights).sum(), (q, k, v))
        assert torch.allclose(ours, dense, atol=1e-10)
        for a, b in zip(grads, dense_grads):
            assert torch.allclose(a, b, atol=1e-10)


def test_a_sliding_window_mask_computes_a_fraction_of_the_pairs():
    """What the block form is for: a 512-position window over 6,144 chained tokens touches at most
    (512 + 2 * 256) keys per query block, a sixth of the dense pairs."""
    seq = PackedSequence(input_ids=[0] * 6144, parents=list(range(-1, 6143)), positions=list(range(6144)))
    _, sliding = tree_masks(seq, 512)
    mask = block_mask(sliding)
    assert mask.pairs <= 6144 * (512 + 2 * 256) < 6144 ** 2 / 5


def test_a_mask_without_its_diagonal_is_refused():
    allowed = np.tril(np.ones((4, 4), dtype=bool))
    allowed[2, 2] = False
    with pytest.raises(ValueError, match="attend to itself"):
        block_mask(allowed)
