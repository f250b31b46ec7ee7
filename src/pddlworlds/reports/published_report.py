"""The report's section on the models AgentBoard published: beside the run under the `agentboard`
profile in a comparable setting (free decoding), apart (and said to be not comparable) otherwise."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..artefacts.runs import config_setting
from ..files import write_figure
from ..published import (
    MODEL_LABELS,
    PUBLISHED_SOURCE,
    PUBLISHED_SPLIT,
    PUBLISHED_STEPS,
    PublishedEpisode,
    model_label,
)
from ..scoring.metrics import PROGRESS_STEPS
from .paper import agent_label
from .published import REFERENCE_MODEL, Comparison, ProblemRow, ScoreRow, compare_with_published, label
from .setting import comparable_with_published

__all__ = ["PLOT_FILE", "published_section", "write_published_plot"]

PLOT_FILE = "published_progress.png"
#: Published models whose episodes get a column of their own in the problem table.
PROBLEM_COLUMNS = ("gpt-4", "claude2")
#: The run's agents, in colours the published models' gradient does not use.
RUN_COLOURS = ("#000000", "#d62728", "#ff7f0e", "#e377c2", "#8c564b", "#7f7f7f")


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 2) -> list[str]:
    align = ["---" if i < left else "---:" for i in range(len(header))]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    return out + ["| " + " | ".join(row) + " |" for row in rows]


def _names(problems: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{d} {p}" for d, p in problems) if problems else "none"


def _steps_shown(max_steps: int) -> list[int]:
    return [k for k in PROGRESS_STEPS if k <= max_steps]


def _score_rows(rows: Sequence[ScoreRow], ks: Sequence[int]) -> list[list[str]]:
    out = []
    for row in rows:
        curve = [("–" if row.curve is None else _pct(row.curve[k - 1])) for k in ks]
        out.append(
            [
                label(row),
                "published" if row.published else "this run",
                str(row.episodes),
                _pct(row.success_rate),
                _pct(row.progress_rate),
                _pct(row.grounding_accuracy),
                *curve,
            ]
        )
    return out


def _published_cell(episode: PublishedEpisode) -> str:
    if episode.success:
        step = episode.full_progress_step
        return "yes" + (f" (step {step})" if step is not None else "")
    return f"no, {episode.progress:.2f}"


def _agent_cell(row: ProblemRow, agent: str) -> str:
    solved, episodes = row.solved[agent]
    if episodes == 1:
        return "yes" if solved else f"no, {row.progress[agent]:.2f}"
    return f"{solved}/{episodes} solved, {row.progress[agent]:.2f}"


def _problem_table(comparison: Comparison) -> list[str]:
    header = [
        "Domain",
        "Problem",
        "optimal",
        *(model_label(m) for m in PROBLEM_COLUMNS),
        f"published solved (of {len(MODEL_LABELS)})",
        *(agent_label(a) for a in comparison.agents),
    ]
    rows = [
        [
            row.domain,
            row.problem,
            "–" if row.optimal is None else str(row.optimal),
            *(_published_cell(row.published[m]) for m in PROBLEM_COLUMNS),
            str(row.published_solved),
            *(_agent_cell(row, a) for a in comparison.agents),
        ]
        for row in comparison.problem_rows
    ]
    return _table(header, rows)


def _scope_words(comparison: Comparison) -> str:
    n = len(comparison.problems)
    scope = (
        "all 60 problems, so the published rows are AgentBoard's leaderboard numbers"
        if n == 60
        else f"the {n} problems of the 60 that this run played (pooled over all 60 they are the leaderboard's "
        "numbers: docs/agentboard.md)"
    )
    if comparison.left_out:
        scope += f"; left out, as the published models did not play them: {_names(comparison.left_out)}"
    return scope


def _budget_words(max_steps: int) -> str:
    """A warning when the run's step budget is not the published runs' 30 steps."""
    if max_steps == PUBLISHED_STEPS:
        return ""
    return (
        f" **This run's step budget is {max_steps}, theirs was {PUBLISHED_STEPS}**: SR and PR are not measured "
        f"alike; compare PR@k for k up to {min(max_steps, PUBLISHED_STEPS)}."
    )


def published_section(
    config: dict[str, Any],
    lines: Sequence[dict[str, Any]],
    agents: Sequence[str],
    max_steps: int,
    out: Path | None,
) -> list[str]:
    """The section's markdown lines (none when the run played no problem of the published 60); writes
    the progress plot into `out` when given and the run is comparable."""
    split = config.get("split", lines[0]["split"] if lines else None)
    if split != PUBLISHED_SPLIT or not lines:
        return []
    comparison = compare_with_published(lines, agents, max_steps)
    if comparison is None:
        return []
    profile = config.get("profile", "pddlworlds")
    ks = _steps_shown(max_steps)
    header = [
        "Model or agent",
        "source",
        "episodes",
        "SR %",
        "PR %",
        "grounding %",
        *(f"PR@{k} %" for k in ks),
    ]
    if profile != "agentboard" or not comparable_with_published(config):
        published = [row for row in comparison.rows if row.published]
        why = (
            f"This run played under the `{profile}` profile: its feedback and its progress (which credits goal "
            "conditions already true at reset) differ from AgentBoard's, so its numbers are **not comparable** "
            "with these and are not set beside them. Run the same problems with `--profile agentboard` to compare."
            if profile != "agentboard" else
            f"This run played in the `{config_setting(config)}` setting, which no published run used (theirs are "
            "all free decoding with each domain's own observations), so its numbers are **not comparable** with "
            "these and are not set beside them."
        )
        return [
            "## The models AgentBoard published (not comparable with this run)",
            "",
            f"{why} Source: {PUBLISHED_SOURCE}. Pooled AgentBoard's way over {_scope_words(comparison)}.",
            "",
            *_table(header, _score_rows(published, ks)),
            "",
        ]
    md = [
        "## Beside the models AgentBoard published",
        "",
        (
            f"Source: {PUBLISHED_SOURCE}. Pooled AgentBoard's way (means over episodes, every domain together) "
            f"over {_scope_words(comparison)}. Their agent, prompts and models are theirs: the numbers place this "
            "run, they are not a target. Grounding: valid steps over steps. PR@k: progress after k steps; "
            "DeepSeek-67B's file does not record the steps (–)." + _budget_words(max_steps)
        ),
        "",
        *_table(header, _score_rows(comparison.rows, ks)),
        "",
    ]
    if out is not None:
        write_published_plot(out / PLOT_FILE, comparison)
        md += [f"![progress by step beside the published models]({PLOT_FILE})", ""]
    reference = model_label(REFERENCE_MODEL)
    md += ["### Problem by problem", ""]
    for agent in comparison.agents:
        ahead, behind = comparison.solved_not_reference[agent], comparison.reference_not_solved[agent]
        md.append(
            f"- **{agent_label(agent)}** solved {len(ahead)} problem(s) that {reference} did not: {_names(ahead)}; "
            f"{reference} solved {len(behind)} that {agent_label(agent)} did not: {_names(behind)}."
        )
    md += [
        "",
        (
            "A published cell: yes (the step at which every goal condition held), or no and the progress "
            "reached. A cell of this run: solved episodes over episodes when the problem was played more than "
            "once, and the mean progress."
        ),
        "",
        *_problem_table(comparison),
        "",
    ]
    return md


def write_published_plot(path: Path, comparison: Comparison) -> None:
    """Progress after k steps, pooled over the run's problems: the run's agents bold, the published
    models thin (those whose steps are recorded)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    steps = list(range(1, comparison.max_steps + 1))
    published = [row for row in comparison.rows if row.published and row.curve is not None]
    shades = plt.get_cmap("viridis")
    for i, row in enumerate(published):  # a gradient from the strongest published model to the weakest
        colour = shades(0.9 * i / max(1, len(published) - 1))
        ax.plot(steps, [100 * y for y in row.curve], lw=1.1, ls="--", color=colour, label=label(row))
    ours = [row for row in comparison.rows if not row.published and row.curve is not None]
    for i, row in enumerate(ours):
        ax.plot(
            steps,
            [100 * y for y in row.curve],
            lw=2.6,
            marker="o",
            markersize=3,
            color=RUN_COLOURS[i % len(RUN_COLOURS)],
            label=f"{label(row)} (this run)",
            zorder=3,
        )
    ax.set_title(f"Progress by step, {len(comparison.problems)} problems pooled")
    ax.set_xlabel("step")
    ax.set_ylabel("progress rate %")
    ax.set_ylim(-2, 102)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    write_figure(path, fig, dpi=110)
    plt.close(fig)
