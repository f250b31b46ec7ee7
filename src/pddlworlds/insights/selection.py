"""Choosing the rules a new episode sees: general + its domain's + its task category's.

Within a scale, higher scores come first (older on a tie). With an embedding model configured the chosen
rules are ranked by similarity to the episode's goal instead, and `limit` keeps the most similar.
`InsightUse` says how (picklable, so it travels to worker processes); `InsightSelector` is what an agent
calls at reset: `(env, info) -> list of rule texts`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..env import StepInfo
from ..files import file_sha256
from .categories import task_category
from .embedding import Embedder, cosine_ranking, load_embedder
from .store import InsightStore, Rule

__all__ = ["InsightSelector", "InsightUse", "select_rules"]


def select_rules(
    store: InsightStore,
    domain: str,
    category: str,
    *,
    limit: int | None = None,
    query: str | None = None,
    embedder: Embedder | None = None,
) -> list[Rule]:
    """The rules for a problem of `domain` and task `category`, broadest scale first."""
    chosen: list[Rule] = []
    for scale in ("general", f"domain:{domain}", f"task:{category}"):
        chosen += sorted(store.by_scale(scale), key=lambda r: (-r.score, r.id))
    if embedder is not None and query is not None:
        chosen = [chosen[i] for i in cosine_ranking(query, [r.text for r in chosen], embedder)]
    return chosen if limit is None else chosen[:limit]


@dataclass(frozen=True, order=True)
class InsightUse:
    """Which store file an episode reads, how many rules at most, and the optional embedding model."""

    store: str
    limit: int | None = None
    embedding: str | None = None

    def describe(self) -> dict[str, Any]:
        """What a run's configuration records: the store by name and content, the options."""
        store = Path(self.store)
        digest = file_sha256(store)
        return {"store": store.name, "store_sha256": digest, "limit": self.limit, "embedding": self.embedding}

    def selector(self) -> InsightSelector:
        return InsightSelector(
            InsightStore.load(self.store),
            limit=self.limit,
            embedder=load_embedder(self.embedding) if self.embedding else None,
        )


@dataclass
class InsightSelector:
    """Called by an agent at reset with the env and its first info: the texts of the chosen rules."""

    store: InsightStore
    limit: int | None = None
    embedder: Embedder | None = None

    def __call__(self, env: Any, info: StepInfo) -> list[str]:
        category = task_category(env.unwrapped.world.lifted)
        rules = select_rules(
            self.store,
            info["domain"],
            category,
            limit=self.limit,
            query=str(info.get("goal", "")),
            embedder=self.embedder,
        )
        return [rule.text for rule in rules]
