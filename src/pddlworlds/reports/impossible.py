"""The report's section on unsolvable problems and the `impossible` action: a table and a plot of the
claim scores (`scoring.unsolvable`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..files import write_figure
from ..scoring.unsolvable import OVERALL, ClaimScores, claim_scores, has_impossible, records_from_lines

__all__ = ["HEADER", "impossible_rows", "impossible_section"]


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def impossible_rows(scores: dict[tuple[str, str], ClaimScores]) -> list[list[str]]:
    """Table rows, domains in name order then overall, agents in the order they first appear."""
    agents = list(dict.fromkeys(agent for agent, _ in scores))
    domains = sorted({d for _, d in scores if d != OVERALL}) + [OVERALL]
    rows = []
    for domain in domains:
        for agent in agents:
            s = scores.get((agent, domain))
            if s is None:
                continue
            rows.append([
                domain.capitalize(), agent, str(s.unsolvable), str(s.solvable),
                f"{s.true_positives}/{s.false_positives}/{s.false_negatives}",
                _pct(s.precision), _pct(s.recall), _pct(s.f1), _pct(s.solvable_success_rate),
                _num(s.unsolvable_steps), _num(s.unsolvable_tokens),
            ])
    return rows


HEADER = ["Domain", "Agent", "unsolvable", "solvable", "TP/FP/FN", "precision %", "recall %", "F1 %",
          "SR solvable %", "steps on unsolvable", "tokens on unsolvable"]


def _plot(path: Path, scores: dict[tuple[str, str], ClaimScores]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents = list(dict.fromkeys(agent for agent, _ in scores))
    domains = sorted({d for _, d in scores if d != OVERALL}) + [OVERALL]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    width = 0.8 / max(1, len(agents))
    for i, agent in enumerate(agents):
        xs = [j + i * width for j in range(len(domains))]
        f1 = [100 * (scores[(agent, d)].f1 or 0) if (agent, d) in scores else 0 for d in domains]
        sr = [100 * (scores[(agent, d)].solvable_success_rate or 0) if (agent, d) in scores else 0 for d in domains]
        axes[0].bar(xs, f1, width, label=agent)
        axes[1].bar(xs, sr, width, label=agent)
    for ax, title in zip(axes, ("F1 of impossible claims", "success on solvable problems")):
        ax.set_xticks([j + width * (len(agents) - 1) / 2 for j in range(len(domains))])
        ax.set_xticklabels([d.capitalize() for d in domains], fontsize="small")
        ax.set_title(title)
        ax.set_ylim(0, 105)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("%")
    axes[1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    write_figure(path, fig, dpi=110)
    plt.close(fig)


def impossible_section(config: dict[str, Any], lines: Sequence[dict[str, Any]], plot_dir: Path | None = None) -> list[str]:
    """The report's markdown lines for these scores (none when the run has no unsolvable problem and no
    claim); with `plot_dir`, also writes `impossible.png` there."""
    records = records_from_lines(lines)
    if not has_impossible(records):
        return []
    scores = claim_scores(records)
    offered = "offered" if config.get("allow_impossible") else "not offered"
    md = [
        "## Unsolvable problems and the `impossible` action",
        "",
        (f"The `impossible` action was {offered} in this run. A positive is an episode on a problem with a "
         "stored proof that no plan exists (`planners/unsolvable.csv`); a claim on a solvable problem is a false "
         "positive and ends that episode unsolved. SR solvable: success rate on the solvable problems. Steps and "
         "tokens on unsolvable: mean per unsolvable episode, up to the claim or the end of the budget "
         "(tokens: prompt plus completion, every model call)."),
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "|".join("---" for _ in HEADER) + "|",
    ]
    md += ["| " + " | ".join(row) + " |" for row in impossible_rows(scores)]
    md.append("")
    if plot_dir is not None:
        _plot(Path(plot_dir) / "impossible.png", scores)
        md += ["![F1 of impossible claims and success on solvable problems](impossible.png)", ""]
    return md
