"""The data a fit reads: one or several dataset folders (expert data and on-policy rounds), their calls
and manifests, and how long the calls are per domain (what `--max-len` would skip)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .data import load_calls

__all__ = ["data_folders", "length_report", "read_manifest", "training_rows"]


def length_report(domains: Sequence[str], lengths: Sequence[int], max_len: int) -> dict[str, dict[str, Any]]:
    """Per domain: calls, the share longer than `max_len` (skipped), and the call length distribution."""
    import numpy as np

    report = {}
    for domain in sorted(set(domains)):
        mine = np.array([n for d, n in zip(domains, lengths) if d == domain])
        skipped = int((mine > max_len).sum())
        report[domain] = {
            "calls": int(mine.size),
            "skipped_too_long": skipped,
            "skipped_share": round(skipped / mine.size, 4),
            "tokens_p50": int(np.percentile(mine, 50)),
            "tokens_p90": int(np.percentile(mine, 90)),
            "tokens_p99": int(np.percentile(mine, 99)),
            "tokens_max": int(mine.max()),
        }
    return report


def data_folders(data: str) -> list[Path]:
    """`TrainConfig.data`: one dataset folder, or several separated by commas (expert data and rounds)."""
    folders = [Path(part.strip()) for part in data.split(",") if part.strip()]
    if not folders:
        raise ValueError("no dataset folder given")
    return folders


def read_manifest(folder: Path) -> dict[str, Any]:
    """The folder's `manifest.json` ({} when it has none); ValueError when it is not a JSON object."""
    manifest_path = folder / "manifest.json"
    manifest: Any = {}
    if manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"{manifest_path}: not valid JSON ({exc})") from None
        if not isinstance(manifest, dict):
            raise ValueError(f"{manifest_path}: expected a JSON object, found {type(manifest).__name__}")
    return manifest


def training_rows(data: str, agents: Sequence[str] = (), domains: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The calls of every dataset folder, in order; calls without a reply (an on-policy round's dead
    ends) are left out."""
    rows: list[dict[str, Any]] = []
    for folder in data_folders(data):
        rows += load_calls(folder)
    rows = [r for r in rows if r.get("reply") is not None]
    if agents:
        rows = [r for r in rows if r["agent"] in agents]
    if domains:
        rows = [r for r in rows if r["domain"] in domains]
    if not rows:
        raise ValueError(
            f"{data}: no calls to train on (agents {agents or 'all'}, domains {domains or 'all'})"
        )
    return rows
