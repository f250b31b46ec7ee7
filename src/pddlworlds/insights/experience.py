"""Choosing the experiences one update learns from, in the two modes of MSI.

- `success`: each problem solved in this trial, once (its first successful episode);
- `pair`: each problem failed in this trial, once (its first failed episode), with a successful episode of
  the same problem (this trial first, then earlier trials, latest first) or, when the problem was never
  solved, of the same task category (same order); a failure with no successful partner is left out.

Episodes are the stored lines of a run (`EpisodeRecord.to_dict()` plus `meta`); episodes that ended in
a fault (`error` set) are never used. The order is fixed (domain, problem, agent, seed), so an update
replayed on resume makes the same calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .categories import category_of

__all__ = ["MODES", "Experience", "select_experiences"]

MODES = ("success", "pair")

Line = dict[str, Any]


@dataclass(frozen=True)
class Experience:
    """One generation call's material: one successful episode, or (failed, successful) episodes."""

    mode: str
    domain: str
    category: str
    episodes: tuple[Line, ...]

    @property
    def label(self) -> str:
        return " vs ".join(
            f"{e['agent']} {e['domain']}/{e['problem']} seed {e['seed']}" for e in self.episodes
        )


def _order(line: Line) -> tuple:
    return (line["domain"], line["problem"], line["agent"], -1 if line.get("seed") is None else line["seed"])


def select_experiences(
    mode: str,
    trial: Sequence[Line],
    earlier: Sequence[Sequence[Line]] = (),
    *,
    category: Callable[[str, str, str], str] = category_of,
) -> list[Experience]:
    """The experiences of one trial's episodes `trial`; `earlier` are the earlier trials' episodes, oldest
    first (only `pair` reads them, for successful partners)."""
    if mode not in MODES:
        raise ValueError(f"unknown experience mode {mode!r}; modes: {', '.join(MODES)}")
    usable = sorted((e for e in trial if not e.get("error")), key=_order)

    def cat(e: Line) -> str:
        return category(e["domain"], e["split"], e["problem"])

    def first_per_problem(lines: list[Line]) -> list[Line]:
        seen, out = set(), []
        for e in lines:
            key = (e["domain"], e["split"], e["problem"])
            if key not in seen:
                seen.add(key)
                out.append(e)
        return out

    if mode == "success":
        return [
            Experience("success", e["domain"], cat(e), (e,))
            for e in first_per_problem([e for e in usable if e.get("success")])
        ]
    pool = [usable] + [sorted((e for e in t if not e.get("error")), key=_order) for t in reversed(earlier)]
    out = []
    for failed in first_per_problem([e for e in usable if not e.get("success")]):
        same_problem = (failed["domain"], failed["split"], failed["problem"])
        partner = next(
            (
                e
                for lines in pool
                for e in lines
                if e.get("success") and (e["domain"], e["split"], e["problem"]) == same_problem
            ),
            None,
        )
        if partner is None:
            partner = next(
                (e for lines in pool for e in lines if e.get("success") and cat(e) == cat(failed)), None
            )
        if partner is not None:
            out.append(Experience("pair", failed["domain"], cat(failed), (failed, partner)))
    return out
