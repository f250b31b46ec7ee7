"""Optional embedding models that rank rules by similarity to the task, by name (`EMBEDDERS`).

An embedder maps texts to one vector each. `load_embedder("transformers:<model id or folder>")` mean-pools
a Hugging Face encoder (e.g. a sentence-transformers checkpoint already on disk); torch and transformers
are imported only then. A new kind is one `EMBEDDERS` entry: name -> factory(argument) -> embedder.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from ..registry import Registry

__all__ = ["EMBEDDERS", "Embedder", "cosine_ranking", "load_embedder"]

Embedder = Callable[[Sequence[str]], np.ndarray]


def _transformers(model: str) -> Embedder:
    """Mean-pooled last hidden states of a local or cached Hugging Face encoder, L2-normalised."""
    if not model:
        raise ValueError("the transformers embedder needs a model: transformers:<model id or folder>")
    try:
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise ValueError(f"embedding ranking needs torch and transformers ({exc})") from exc
    try:
        tokenizer = AutoTokenizer.from_pretrained(model)
        encoder = AutoModel.from_pretrained(model)
    except OSError as exc:
        raise ValueError(f"cannot load embedding model {model!r}: {exc}") from exc
    encoder.eval()

    def embed(texts: Sequence[str]) -> np.ndarray:
        batch = tokenizer(list(texts), padding=True, truncation=True, max_length=256, return_tensors="pt")
        with torch.no_grad():
            hidden = encoder(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return torch.nn.functional.normalize(pooled, dim=-1).numpy()

    return embed


EMBEDDERS: Registry[Callable[[str], Embedder]] = Registry(
    "embedding kind", {"transformers": _transformers}, plural="kinds"
)


@functools.lru_cache(maxsize=4)
def load_embedder(spec: str) -> Embedder:
    """`<kind>:<argument>` (e.g. `transformers:/models/all-MiniLM-L6-v2`), loaded once per process."""
    kind, _, argument = spec.partition(":")
    factory = EMBEDDERS.get(kind)
    if factory is None:
        raise ValueError(f"unknown embedding {spec!r}; kinds: {', '.join(EMBEDDERS)} (as <kind>:<model>)")
    return factory(argument)


def cosine_ranking(query: str, texts: Sequence[str], embed: Embedder) -> list[int]:
    """Indices of `texts`, most similar to `query` first (ties keep the given order)."""
    if not texts:
        return []
    vectors = np.asarray(embed([query, *texts]), dtype=float)
    norms = np.linalg.norm(vectors, axis=1)
    norms[norms == 0] = 1.0
    unit = vectors / norms[:, None]
    similarity = unit[1:] @ unit[0]
    return sorted(range(len(texts)), key=lambda i: (-float(similarity[i]), i))
