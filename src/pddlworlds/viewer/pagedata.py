"""What the page shows, computed here from the run folders' records: tables, curves and each episode's steps.

The page's script only lays this out; every figure (success rate, progress rate, steps, tokens, the
progress-at-step-k curves) is computed in this module, so it can be tested without a browser.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..artefacts.runs import RunFolder
from .pictures import picture_of
from .published import published_beside
from .replay import Replayer

__all__ = [
    "EpisodeDetail",
    "PageData",
    "episode_detail",
    "episode_row",
    "page_data",
    "progress_curve",
    "summary",
]

PageData = dict[str, Any]
EpisodeDetail = dict[str, Any]

#: Step fields the viewer lays out itself; anything else a record carries is shown as "more".
STEP_FIELDS = {
    "index",
    "action",
    "observation",
    "valid",
    "action_kind",
    "progress",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "raw_output",
    "raw_output_length",
    "subgoal_index",
    "subgoal",
    "memory_view",
    "calls",
}
#: Episode fields the viewer lays out itself (those of `EpisodeRecord` and the runner's `meta`).
EPISODE_FIELDS = {
    "solvable",
    "claimed_impossible",
    "agent",
    "domain",
    "split",
    "problem",
    "seed",
    "success",
    "progress",
    "steps",
    "optimal_length",
    "run_time_s",
    "goal",
    "initial_observation",
    "flags",
    "model",
    "trajectory",
    "memory",
    "error",
    "meta",
}


def _number(value: Any, default: float = 0.0) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def step_tokens(step: dict[str, Any]) -> tuple[int, int]:
    """(prompt, completion) tokens of a step: its calls' sums, or the step's own counts without calls."""
    calls = step.get("calls") or []
    if calls:
        return (
            int(sum(_number(c.get("prompt_tokens")) for c in calls)),
            int(sum(_number(c.get("completion_tokens")) for c in calls)),
        )
    return int(_number(step.get("prompt_tokens"))), int(_number(step.get("completion_tokens")))


def progress_curve(line: dict[str, Any], max_k: int) -> list[float]:
    """Progress after each step k = 0..max_k; an episode that ended keeps its last progress."""
    steps = line.get("trajectory") or []
    start = 0.0
    values = [start]
    best = start
    for k in range(1, max_k + 1):
        if k <= len(steps):
            best = max(best, _number(steps[k - 1].get("progress"), best))
        elif not steps:
            best = _number(line.get("progress"), best)
        values.append(best)
    return values


def episode_row(line: dict[str, Any], run: int, label: str, ident: int) -> dict[str, Any]:
    """The run page's table row of one episode."""
    steps = line.get("trajectory") or []
    prompt = completion = 0
    for step in steps:
        p, c = step_tokens(step)
        prompt += p
        completion += c
    return {
        "id": ident,
        "run": run,
        "agent": line["agent"],
        "label": label,
        "domain": line["domain"],
        "split": line.get("split"),
        "problem": line["problem"],
        "seed": line.get("seed"),
        "success": bool(line.get("success")),
        "progress": _number(line.get("progress"), _number(steps[-1].get("progress")) if steps else 0.0),
        "steps": int(_number(line.get("steps"), len(steps))),
        "optimal": line.get("optimal_length"),
        "tokens": prompt + completion,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "time_s": round(_number(line.get("run_time_s")), 3),
        "error": line.get("error"),
        "memory": any(s.get("memory_view") for s in steps),
    }


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (agent label, domain) and per agent label over all domains: episodes, SR, PR, steps, tokens."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["label"], row["domain"])].append(row)
        groups[(row["label"], "all")].append(row)
    out = []
    for (label, domain), members in groups.items():
        n = len(members)
        steps = sum(r["steps"] for r in members)
        out.append(
            {
                "label": label,
                "domain": domain,
                "episodes": n,
                "success_rate": sum(r["success"] for r in members) / n,
                "progress_rate": sum(r["progress"] for r in members) / n,
                "steps": steps / n,
                "tokens": sum(r["tokens"] for r in members) / n,
                "prompt_tokens_per_step": sum(r["prompt_tokens"] for r in members) / steps if steps else 0.0,
            }
        )
    out.sort(key=lambda s: (s["domain"] == "all", s["domain"], s["label"]))
    return out


def episode_detail(line: dict[str, Any], replayer: Replayer | None, domains_root: str | None = None) -> EpisodeDetail:
    """Everything the episode page shows of one episode, step by step (`domains_root`: the run's folder of
    domains, from its config, where the replay finds the problem)."""
    domain = line["domain"]
    parsed = replayer.replay(line, domains_root) if replayer is not None else []
    steps = []
    picture = picture_of(domain, line.get("initial_observation") or "")
    for i, step in enumerate(line.get("trajectory") or []):
        observation = step.get("observation") or ""
        picture = picture_of(domain, observation) or picture
        p = parsed[i] if i < len(parsed) else None
        prompt, completion = step_tokens(step)
        calls = [
            {
                "purpose": c.get("purpose"),
                "prompt_tokens": c.get("prompt_tokens"),
                "completion_tokens": c.get("completion_tokens"),
                "latency_s": c.get("latency_s"),
                "raw_output": c.get("raw_output"),
                "error": c.get("error"),
            }
            for c in step.get("calls") or []
        ]
        steps.append(
            {
                "index": step.get("index", i + 1),
                "raw_output": written(step),
                "action": step.get("action"),
                "canonical": p.canonical if p else None,
                "replayed": p is not None,
                "valid": step.get("valid"),
                "kind": step.get("action_kind"),
                "why": (p.error if p else None) if not step.get("valid", True) else None,
                "observation": observation,
                "progress": _number(step.get("progress")),
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "latency_s": round(
                    sum(_number(c.get("latency_s")) for c in step.get("calls") or [])
                    or _number(step.get("latency_s")),
                    4,
                ),
                "calls": calls,
                "subgoal_index": step.get("subgoal_index"),
                "subgoal": step.get("subgoal"),
                "memory_view": step.get("memory_view"),
                "picture": picture,
                "more": {k: v for k, v in step.items() if k not in STEP_FIELDS},
            }
        )
    known = EPISODE_FIELDS
    return {
        "goal": line.get("goal"),
        "initial_observation": line.get("initial_observation"),
        "initial_picture": picture_of(domain, line.get("initial_observation") or ""),
        "flags": line.get("flags") or {},
        "model": line.get("model"),
        "meta": line.get("meta") or {},
        "memory": line.get("memory") or [],
        "error": line.get("error"),
        "more": {k: v for k, v in line.items() if k not in known},
        "steps": steps,
    }


def written(step: dict[str, Any]) -> str | None:
    """What the model wrote for a step: the step's own `raw_output`, or (newer records store each reply
    once) that of the step's last action call."""
    if step.get("raw_output") is not None:
        return step["raw_output"]
    actions = [c for c in step.get("calls") or [] if c.get("purpose") == "action"]
    return actions[-1].get("raw_output") if actions else None


def _labels(runs: list[RunFolder]) -> list[str]:
    names = [run.path.resolve().name or str(run.path) for run in runs]
    seen: dict[str, int] = defaultdict(int)
    out = []
    for name in names:
        seen[name] += 1
        out.append(name if names.count(name) == 1 else f"{name}#{seen[name]}")
    return out


def page_data(runs: list[RunFolder], replay: bool = True) -> tuple[PageData, list[EpisodeDetail]]:
    """(the run page's data, each episode's detail in the order of `data["episodes"]` ids)."""
    replayer = Replayer() if replay else None
    names = _labels(runs)
    rows: list[dict[str, Any]] = []
    details: list[EpisodeDetail] = []
    max_k = 0
    for r, run in enumerate(runs):
        config_steps = run.config.get("max_steps")
        for line in run.lines:
            label = line["agent"] if len(runs) == 1 else f"{names[r]}:{line['agent']}"
            rows.append(episode_row(line, r, label, len(rows)))
            details.append(episode_detail(line, replayer, run.config.get("domains_root")))
            max_k = max(max_k, len(line.get("trajectory") or []), int(_number(config_steps)))
    curves: dict[tuple[str, str], list[list[float]]] = defaultdict(list)
    ident = 0
    for run in runs:
        for line in run.lines:
            curve = progress_curve(line, max_k)
            row = rows[ident]
            curves[(row["label"], row["domain"])].append(curve)
            curves[(row["label"], "all")].append(curve)
            ident += 1
    series = [
        {
            "label": label,
            "domain": domain,
            "episodes": len(members),
            "values": [round(sum(c[k] for c in members) / len(members), 4) for k in range(max_k + 1)],
        }
        for (label, domain), members in sorted(curves.items())
    ]
    data = {
        "runs": [
            {
                "name": names[r],
                "path": str(run.path),
                "config": run.config,
                "notes": run.notes,
                "episodes": len(run.lines),
            }
            for r, run in enumerate(runs)
        ],
        "episodes": rows,
        "summary": summary(rows),
        "curves": {"max_k": max_k, "series": series},
        "published": published_beside(rows),
    }
    return data, details
