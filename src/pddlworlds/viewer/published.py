"""The published models' result on each problem of a page, to show beside an episode of that problem."""

from __future__ import annotations

from typing import Any

from ..published import PUBLISHED_SOURCE, PUBLISHED_SPLIT, model_label, published_results

__all__ = ["published_beside"]


def published_beside(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """{"source", "problems": {"domain|problem": [row per model]}} for the page's episodes of the split
    the models played; a row gives the model, success, progress and the steps at which progress rose
    (numbered as ours, None where the file does not record them)."""
    wanted = {(r["domain"], r["problem"]) for r in rows if r.get("split") == PUBLISHED_SPLIT}
    problems: dict[str, list[dict[str, Any]]] = {}
    if wanted:
        for model, episodes in published_results().items():
            for e in episodes:
                if (e.domain, e.problem) in wanted:
                    problems.setdefault(f"{e.domain}|{e.problem}", []).append(
                        {
                            "model": model_label(model),
                            "success": e.success,
                            "progress": round(e.progress, 4),
                            "rises": None if e.rises is None else [[s, round(p, 4)] for s, p in e.rises],
                        }
                    )
    return {"source": PUBLISHED_SOURCE, "split": PUBLISHED_SPLIT, "problems": problems}
