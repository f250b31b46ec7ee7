"""The data a fit reads: one or several dataset folders (expert data and on-policy rounds), each whole or
as a seeded sample of its episodes (`FOLDER:0.25`, a replay share of earlier data), their calls and
manifests, and how long the calls are per domain (what `--max-len` would skip)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .data import load_calls
from .problems import TrainingProblem, find_overlaps

__all__ = [
    "DataSource",
    "TrainingData",
    "data_folders",
    "data_sources",
    "length_report",
    "load_training_data",
    "read_manifest",
    "training_rows",
]


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


@dataclass(frozen=True)
class DataSource:
    """One dataset folder of `--data`, and the share of its episodes a fit trains on."""

    folder: Path
    fraction: float = 1.0


def data_sources(data: str) -> list[DataSource]:
    """`TrainConfig.data`: dataset folders separated by commas (expert data and rounds), each optionally
    `FOLDER:FRACTION`, a fraction in (0, 1] of its episodes; ValueError naming the entry otherwise."""
    sources = []
    for part in (p.strip() for p in data.split(",")):
        if not part:
            continue
        head, sep, tail = part.rpartition(":")
        try:
            fraction = float(tail) if sep and head else None
        except ValueError:
            fraction = None  # a colon that belongs to the path
        if fraction is None:
            sources.append(DataSource(Path(part)))
            continue
        if not 0 < fraction <= 1:
            raise ValueError(f"--data entry {part!r}: the share after ':' must be above 0 and at most 1")
        sources.append(DataSource(Path(head), fraction))
    if not sources:
        raise ValueError("no dataset folder given")
    return sources


def data_folders(data: str) -> list[Path]:
    """The folders of `TrainConfig.data`, without their shares."""
    return [source.folder for source in data_sources(data)]


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


def _sample_episodes(rows: list[dict[str, Any]], fraction: float, seed: Sequence[int]) -> tuple[list[dict[str, Any]], int, int]:
    """A seeded sample of `fraction` of the rows' episodes (at least one), whole episodes in file order, so
    the calls that share a conversation prefix stay together; also the episodes there are and kept. A row
    without an `episode` key is an episode of its own."""
    import numpy as np

    keys = [row.get("episode", f"#{i}") for i, row in enumerate(rows)]
    episodes = list(dict.fromkeys(keys))
    if fraction >= 1:
        return rows, len(episodes), len(episodes)
    n = max(1, round(fraction * len(episodes)))
    chosen = np.random.default_rng(list(seed)).choice(len(episodes), size=n, replace=False)
    kept = {episodes[int(i)] for i in chosen}
    return [row for row, key in zip(rows, keys) if key in kept], len(episodes), n


@dataclass
class TrainingData:
    """The calls a fit trains on, and per folder what was taken from it."""

    rows: list[dict[str, Any]]
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)


def equal_to_shipped(folder: Path, rows: Sequence[dict[str, Any]]) -> dict[str, str]:
    """`domain/problem` -> the shipped or held-out problem it equals up to renaming, for the rows' problems
    whose files the folder holds (`problems/<domain>/<name>.pddl`). Checked at every fit, not only when the
    data was drawn: a split shipped later (as `heldout` was) must not be trained on by older data."""
    problems = []
    for domain, name in sorted({(str(r.get("domain")), str(r.get("problem"))) for r in rows}):
        path = folder / "problems" / domain / f"{name}.pddl"
        if path.is_file():
            problems.append(TrainingProblem(domain=domain, level="", index=0, seed=0, name=name, path=path,
                                            parameters={}))
    return dict(find_overlaps(problems))


def load_training_data(
    data: str, agents: Sequence[str] = (), domains: Sequence[str] = (), seed: int = 0
) -> TrainingData:
    """The calls of every dataset folder, in order, each folder whole or sampled by episode with `seed`
    (the same seed, the same sample); calls without a reply (an on-policy round's dead ends) and calls on a
    problem equal to a shipped or held-out one (`equal_to_shipped`) are left out."""
    rows: list[dict[str, Any]] = []
    sources: dict[str, dict[str, Any]] = {}
    for index, source in enumerate(data_sources(data)):
        mine, episodes, kept = _sample_episodes(load_calls(source.folder), source.fraction, (seed, index))
        mine = [r for r in mine if r.get("reply") is not None]
        shipped = equal_to_shipped(source.folder, mine)
        mine = [r for r in mine if f"{r.get('domain')}/{r.get('problem')}" not in shipped]
        sources[str(source.folder)] = {"fraction": source.fraction, "episodes": episodes,
                                       "episodes_kept": kept, "calls_kept": len(mine),
                                       "dropped_as_shipped": shipped}
        rows += mine
    if agents:
        rows = [r for r in rows if r["agent"] in agents]
    if domains:
        rows = [r for r in rows if r["domain"] in domains]
    if not rows:
        raise ValueError(
            f"{data}: no calls to train on (agents {agents or 'all'}, domains {domains or 'all'})"
        )
    return TrainingData(rows, sources)


def training_rows(
    data: str, agents: Sequence[str] = (), domains: Sequence[str] = (), seed: int = 0
) -> list[dict[str, Any]]:
    """The calls `load_training_data` gives, without the per-folder account."""
    return load_training_data(data, agents, domains, seed).rows
