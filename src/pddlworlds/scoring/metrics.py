"""Scores of episodes: pure functions over `EpisodeRecord`s (or their dicts, as stored one per JSON line).

Every metric is computed per episode first, then averaged over episodes, per (domain, agent) and overall
per agent (the mean over all of that agent's episodes, so a domain with more problems weighs more), as
docs/method.md section 3 describes:

- progress rate (PR): best fraction of goal atoms reached; success rate (SR): PR = 1;
- steps: agent turns, an unsolved episode counting the whole budget (`max_steps`);
- steps / optimal and extra steps over optimal (action efficiency), on solved episodes whose optimal plan
  length is known (the shortest plan's, also where actions have costs; `n_solved_with_optimal` counts
  them); in a domain with action costs also the cost of solved episodes and cost / optimal cost (the
  cheapest plan's; `n_solved_with_optimal_cost` counts them) (`COST_METRICS`, shown only when some episode
  has a cost). A mean leaves out the episodes whose value is unknown, never counting them as 0;
- context tokens per step (context efficiency): the in-trial context (working memory) at each action call
  when the agent records it (`StepRecord.context_tokens`), else the whole prompt of that call; the whole
  prompt and the tokens of every call of the step (summaries, retrievals) are kept as their own columns;
- run time per episode; both relative to the STANDARD agent of the same domain when it was run;
- executability: the fraction of valid actions, per episode and per step index;
- progress at step k (k = 5, 10, ..., 30): PR after k steps.

The Wilcoxon tests between agents are `significance`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..records import EpisodeRecord
from ..worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS

__all__ = [
    "CONTEXT_MEASURES",
    "COST_METRICS",
    "METRICS",
    "OVERALL",
    "PROGRESS_STEPS",
    "REFERENCE_AGENT",
    "Metric",
    "Recordish",
    "aggregate",
    "as_record",
    "budget_steps",
    "context_measure",
    "context_tokens_per_step",
    "episode_metrics",
    "executability",
    "executability_by_step",
    "group_records",
    "mean",
    "metric_columns",
    "progress_at",
    "prompt_tokens_per_step",
    "summarize",
]

#: The step counts of the paper's progress-over-steps figure.
PROGRESS_STEPS: tuple[int, ...] = (5, 10, 15, 20, 25, 30)
#: Context and time are reported relative to this agent (100%).
REFERENCE_AGENT = "standard"
#: The domain label of the rows that pool every domain.
OVERALL = "overall"

Recordish = EpisodeRecord | Mapping[str, Any]


def as_record(item: Recordish) -> EpisodeRecord:
    """An `EpisodeRecord` from a record or a stored dict (keys that are not record fields are ignored)."""
    if isinstance(item, EpisodeRecord):
        return item
    return EpisodeRecord.from_stored(dict(item))


def mean(values: Iterable[float | None]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


# ------------------------------------------------------------------------------------------------
# Per episode.


def budget_steps(record: Recordish, max_steps: int = DEFAULT_MAX_EPISODE_STEPS) -> int:
    """Steps used; an unsolved episode counts the whole budget: its own where the record keeps it (a ladder's
    bands have budgets of their own), else `max_steps`, the run's."""
    r = as_record(record)
    if r.success:
        return r.steps
    return r.step_budget if r.step_budget is not None else max_steps


def progress_at(record: Recordish, k: int) -> float:
    """PR after k steps: the best progress reached by step k (the final one if the episode ended sooner)."""
    r = as_record(record)
    if not r.trajectory or k >= r.steps:
        return float(r.progress)
    best = 0.0
    for step in r.trajectory:
        if step.index <= k:
            best = step.progress
    return float(best)


def executability(record: Recordish) -> float | None:
    """Fraction of the episode's actions that were valid (None for an episode without steps)."""
    r = as_record(record)
    if not r.trajectory:
        return None
    return sum(1 for s in r.trajectory if s.valid) / len(r.trajectory)


def _uses_model(record: EpisodeRecord) -> bool:
    return any(s.prompt_tokens or s.calls for s in record.trajectory)


def prompt_tokens_per_step(record: Recordish, all_calls: bool = False) -> float | None:
    """Mean prompt tokens of the action call per step (or of every call, `all_calls`); None without a model."""
    r = as_record(record)
    if not r.trajectory or not _uses_model(r):
        return None
    values = [s.total_prompt_tokens if all_calls else s.prompt_tokens for s in r.trajectory]
    return sum(values) / len(values)


def context_tokens_per_step(record: Recordish) -> float | None:
    """Mean in-trial context tokens per step (`StepRecord.context_tokens`, the working memory at the action
    call, as the paper measures context); None unless every step of the episode has it."""
    r = as_record(record)
    values = [s.context_tokens for s in r.trajectory]
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None) / len(values)


# ------------------------------------------------------------------------------------------------
# The table of metrics: what each is per episode, how a group of episodes aggregates it, and how the
# report shows it. `episode_metrics`, `aggregate`, `summarize` and the report's tables all read it.


def _with_optimal(row: Mapping[str, Any]) -> bool:
    return row["steps_over_optimal"] is not None


def _mean_of(key: str, where: Callable[[Mapping[str, Any]], bool] | None = None) -> Callable[[list], Any]:
    return lambda rows: mean(m[key] for m in rows if where is None or where(m))


def _progress_at_means(rows: list[Mapping[str, Any]]) -> dict[int, float | None]:
    ks = sorted({k for m in rows for k in m["progress_at"]})
    return {k: mean(m["progress_at"].get(k) for m in rows) for k in ks}


def _solved_with_optimal(r: EpisodeRecord) -> bool:
    return r.success and r.optimal_length is not None and r.optimal_length > 0


def _cost_over_optimal(r: EpisodeRecord) -> float | None:
    """A solved episode's action cost over the optimal plan's cost (both known, costed domains only)."""
    if not (r.success and r.cost is not None and r.optimal_cost is not None):
        return None
    if r.optimal_cost == 0:
        return 1.0 if r.cost == 0 else None
    return r.cost / r.optimal_cost


@dataclass(frozen=True)
class Metric:
    """One metric. `episode(record, max_steps)` gives its per-episode value under `source` (default: `name`);
    `aggregate(rows)` turns a group's per-episode rows into the value under `name`; `relative` names another
    metric that this one divides by the reference agent's (`summarize`). `table` ("main", "efficiency")
    and `label` place it in the report; `digits`/`scale`/`suffix` format it, or `cell(row)` does."""

    name: str
    aggregate: Callable[[list[Mapping[str, Any]]], Any] | None = None
    episode: Callable[[EpisodeRecord, int], Any] | None = None
    source: str | None = None
    relative: str | None = None
    table: str | None = None
    label: str | None = None
    digits: int = 1
    scale: float = 1.0
    cell: Callable[[Mapping[str, Any]], str] | None = None

    @property
    def key(self) -> str:
        return self.source or self.name

    def format(self, row: Mapping[str, Any]) -> str:
        if self.cell is not None:
            return self.cell(row)
        value = row[self.name]
        return "–" if value is None else f"{value * self.scale:.{self.digits}f}"


#: The efficiency columns of action costs, shown only for runs with a domain that has them.
COST_METRICS = ("cost", "cost_over_optimal", "n_solved_with_optimal_cost")

#: The context measure `context_rel` divides: in-trial context when the run recorded it, else the prompt.
CONTEXT_MEASURES = ("context_tokens_per_step", "prompt_tokens_per_step")

METRICS: tuple[Metric, ...] = (
    Metric("n", lambda rows: len(rows), table="main", label="n", cell=lambda row: str(row["n"])),
    Metric(
        "n_solved",
        lambda rows: sum(1 for m in rows if m["success"]),
        table="efficiency",
        label="solved",
        cell=lambda row: f"{row['n_solved']}/{row['n']}",
    ),
    Metric(
        "n_solved_with_optimal",
        lambda rows: sum(1 for m in rows if _with_optimal(m)),
        table="efficiency",
        label="with optimal",
        cell=lambda row: str(row["n_solved_with_optimal"]),
    ),
    Metric("n_errors", lambda rows: sum(1 for m in rows if m["error"]), lambda r, _: r.error, source="error"),
    Metric(
        "sr",
        lambda rows: sum(1 for m in rows if m["success"]) / len(rows) if rows else None,
        lambda r, _: 1.0 if r.success else 0.0,
        source="success",
        table="main",
        label="SR %",
        scale=100,
    ),
    Metric(
        "pr",
        _mean_of("progress"),
        lambda r, _: float(r.progress),
        source="progress",
        table="main",
        label="PR %",
        scale=100,
    ),
    Metric("steps", _mean_of("steps"), lambda r, k: float(budget_steps(r, k)), table="main", label="Steps"),
    Metric(
        "steps_over_optimal",
        _mean_of("steps_over_optimal", _with_optimal),
        lambda r, k: budget_steps(r, k) / r.optimal_length if _solved_with_optimal(r) else None,
        table="efficiency",
        label="steps / optimal",
        digits=2,
    ),
    Metric(
        "extra_steps",
        _mean_of("extra_steps", _with_optimal),
        lambda r, k: float(budget_steps(r, k) - r.optimal_length) if _solved_with_optimal(r) else None,
        table="efficiency",
        label="extra steps",
    ),
    Metric(
        "cost",
        _mean_of("cost", lambda m: m["success"] and m["cost"] is not None),
        lambda r, _: float(r.cost) if r.cost is not None else None,
        table="efficiency",
        label="cost (solved)",
    ),
    Metric(
        "cost_over_optimal",
        _mean_of("cost_over_optimal", lambda m: m["cost_over_optimal"] is not None),
        lambda r, _: _cost_over_optimal(r),
        table="efficiency",
        label="cost / optimal",
        digits=2,
    ),
    Metric(
        "n_solved_with_optimal_cost",
        lambda rows: sum(1 for m in rows if m["cost_over_optimal"] is not None),
        table="efficiency",
        label="with optimal cost",
        cell=lambda row: str(row["n_solved_with_optimal_cost"]),
    ),
    Metric(
        "prompt_tokens_per_step",
        _mean_of("prompt_tokens_per_step"),
        lambda r, _: prompt_tokens_per_step(r),
        table="efficiency",
        label="tokens/step",
        digits=0,
    ),
    Metric(
        "all_prompt_tokens_per_step",
        _mean_of("all_prompt_tokens_per_step"),
        lambda r, _: prompt_tokens_per_step(r, all_calls=True),
        table="efficiency",
        label="tokens/step (all calls)",
        digits=0,
    ),
    Metric(
        "context_tokens_per_step",
        _mean_of("context_tokens_per_step"),
        lambda r, _: context_tokens_per_step(r),
        table="efficiency",
        label="in-trial tokens/step",
        digits=0,
    ),
    Metric(
        "run_time_s",
        _mean_of("run_time_s"),
        lambda r, _: float(r.run_time_s),
        table="efficiency",
        label="time/episode s",
        digits=2,
    ),
    Metric(
        "executability",
        _mean_of("executability"),
        lambda r, _: executability(r),
        table="efficiency",
        label="executability %",
        scale=100,
    ),
    Metric(
        "progress_at",
        _progress_at_means,
        lambda r, k: {step: progress_at(r, step) for step in PROGRESS_STEPS if step <= k},
    ),
    Metric("context_rel", relative="context", table="main", label="Context %", scale=100),
    Metric("time_rel", relative="run_time_s", table="main", label="Time %", scale=100),
)


def metric_columns(table: str, shown: Callable[[Metric], bool] = lambda m: True) -> list[Metric]:
    """The metrics of one report table, in column order."""
    return [m for m in METRICS if m.table == table and shown(m)]


def episode_metrics(record: Recordish, max_steps: int = DEFAULT_MAX_EPISODE_STEPS) -> dict[str, Any]:
    """Every per-episode number the aggregates are made of (`METRICS`' sources)."""
    r = as_record(record)
    return {m.key: m.episode(r, max_steps) for m in METRICS if m.episode is not None}


# ------------------------------------------------------------------------------------------------
# Aggregates.


def aggregate(records: Sequence[Recordish], max_steps: int = DEFAULT_MAX_EPISODE_STEPS) -> dict[str, Any]:
    """Means over a group of episodes (rates as fractions, not percents), one key per aggregated metric."""
    rows = [episode_metrics(r, max_steps) for r in records]
    return {m.name: m.aggregate(rows) for m in METRICS if m.aggregate is not None}


def _ratio(value: float | None, reference: float | None) -> float | None:
    if value is None or reference is None or reference == 0:
        return None
    return value / reference


def group_records(records: Iterable[Recordish]) -> dict[tuple[str, str], list[EpisodeRecord]]:
    """(domain, agent) -> its episodes, and (OVERALL, agent) -> all of the agent's, in record order."""
    groups: dict[tuple[str, str], list[EpisodeRecord]] = defaultdict(list)
    for item in records:
        r = as_record(item)
        groups[(r.domain, r.agent)].append(r)
        groups[(OVERALL, r.agent)].append(r)
    return dict(groups)


def context_measure(records: Iterable[Recordish]) -> str:
    """Which tokens "context" means for these episodes: the in-trial context (`context_tokens_per_step`) when
    any episode recorded it, else the action call's whole prompt (`prompt_tokens_per_step`)."""
    if any(context_tokens_per_step(r) is not None for r in records):
        return CONTEXT_MEASURES[0]
    return CONTEXT_MEASURES[1]


def summarize(
    records: Iterable[Recordish], max_steps: int = DEFAULT_MAX_EPISODE_STEPS, reference: str = REFERENCE_AGENT
) -> dict[tuple[str, str], dict[str, Any]]:
    """(domain, agent) -> `aggregate`, plus (OVERALL, agent) rows; with the relative metrics.

    `context_rel` / `time_rel` are the agent's mean context tokens per step (`context_measure`) / run
    time divided by the reference agent's in the same domain (1.0 = the same; None when the reference was
    not run or used no model). Overall rows divide the overall means.
    """
    records = [as_record(r) for r in records]
    measures = {"context": context_measure(records)}
    summary = {key: aggregate(rs, max_steps) for key, rs in group_records(records).items()}
    for (domain, _agent), row in summary.items():
        ref = summary.get((domain, reference))
        for metric in METRICS:
            if metric.relative is not None:
                source = measures.get(metric.relative, metric.relative)
                row[metric.name] = _ratio(row[source], ref and ref[source])
    return dict(sorted(summary.items(), key=lambda kv: (kv[0][0] == OVERALL, kv[0])))


def executability_by_step(records: Iterable[Recordish], max_steps: int = DEFAULT_MAX_EPISODE_STEPS) -> dict[int, float | None]:
    """Step index -> fraction of valid actions among the episodes that took that step (None: none did)."""
    valid: dict[int, int] = defaultdict(int)
    taken: dict[int, int] = defaultdict(int)
    for item in records:
        for step in as_record(item).trajectory:
            taken[step.index] += 1
            valid[step.index] += 1 if step.valid else 0
    return {i: (valid[i] / taken[i] if taken[i] else None) for i in range(1, max_steps + 1)}
