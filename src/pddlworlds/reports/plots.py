"""The report's figures: progress rate at steps 5..30 and executability per step, one panel per domain."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..files import write_figure
from ..scoring import metrics as M
from .paper import agent_label

__all__ = ["write_plots"]


def write_plots(out: Path, summary, by_step, agents, domains, max_steps: int) -> None:
    """`progress.png` (PR at steps 5..30) and `executability.png` (valid actions per step), a panel per domain."""

    def progress(ax, domain: str) -> None:
        for agent in agents:
            row = summary.get((domain, agent))
            if row is None:
                continue
            ks = sorted(row["progress_at"])
            ys = [row["progress_at"][k] for k in ks]
            ax.plot(ks, [None if y is None else 100 * y for y in ys], marker="o", label=agent_label(agent))

    def executability(ax, domain: str) -> None:
        for agent in agents:
            series = by_step.get((domain, agent))
            if not series:
                continue
            xs = [i for i in range(1, max_steps + 1) if series.get(i) is not None]
            ax.plot(xs, [100 * series[i] for i in xs], marker=".", label=agent_label(agent))

    panels = [*domains, M.OVERALL] if len(domains) > 1 else list(domains)
    _panel_figure(out / "progress.png", panels, progress, "step", "progress rate %")
    _panel_figure(out / "executability.png", panels, executability, "step index", "valid actions %")


def _panel_figure(path: Path, panels: Sequence[str], draw, xlabel: str, ylabel: str) -> None:
    """One panel per domain, side by side on a shared 0-100 % axis; `draw(ax, domain)` adds the lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.4), squeeze=False, sharey=True)
    for ax, domain in zip(axes[0], panels):
        draw(ax, domain)
        ax.set_title(domain.capitalize())
        ax.set_xlabel(xlabel)
        ax.set_ylim(-2, 102)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(ylabel)
    axes[0][-1].legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    write_figure(path, fig, dpi=110)
    plt.close(fig)
