"""The report of a run folder: `report.md` with tables in the paper's layout, PNG plots, Wilcoxon tests.

`write_report(out)` reads `config.json` and `episodes.jsonl` (a run still going, or stopped, is reported
as far as it got) and writes `report.md`, `progress.png` (PR at steps 5..30 per domain, one line per
agent) and `executability.png` (valid actions per step index per domain). `print_main_table` shows the
main table in the terminal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..files import atomic_write
from . import metrics as M
from .runner import RunStore, specs_from

__all__ = [
    "AGENT_LABELS",
    "PAPER_SOURCE",
    "PAPER_TABLE1",
    "PAPER_TYREWORLD_ABLATIONS",
    "load_analysis",
    "load_run",
    "main_table_rows",
    "print_main_table",
    "write_report",
]

PAPER_SOURCE = (
    'HiAgent paper (Hu et al., 2024, "HiAgent: Hierarchical Working Memory Management for Solving '
    "Long-Horizon Agent Tasks with Large Language Model\"), Table 1: GPT-4-turbo on AgentBoard's PDDL tasks, "
    "30 steps; as quoted in docs/method.md section 4"
)

#: (domain, agent) -> (SR %, PR %, steps, context %, time %), from docs/method.md section 4.
PAPER_TABLE1: dict[tuple[str, str], tuple[float, float, float, float | None, float | None]] = {
    ("blocksworld", "standard"): (30.0, 35.0, 25.0, 100.0, 100.0),
    ("blocksworld", "hiagent"): (60.0, 80.0, 18.6, 67.5, 63.5),
    ("gripper", "standard"): (50.0, 87.8, 25.2, 100.0, 100.0),
    ("gripper", "hiagent"): (50.0, 86.3, 24.8, 50.0, 70.5),
    ("tyreworld", "standard"): (10.0, 39.3, 28.4, 100.0, 100.0),
    ("tyreworld", "hiagent"): (60.0, 75.8, 19.0, 73.6, 77.6),
    ("barman", "standard"): (10.0, 17.5, 26.9, 100.0, 100.0),
    ("barman", "hiagent"): (30.0, 40.8, 24.5, 67.0, 95.5),
}

#: Tyreworld ablations (SR %, PR %, steps), same source.
PAPER_TYREWORLD_ABLATIONS: dict[str, tuple[float, float, float]] = {
    "hiagent": (60.0, 75.8, 19.0),
    "hiagent-no-summary": (30.0, 68.2, 24.2),
    "hiagent-no-retrieval": (50.0, 76.9, 21.2),
    "hiagent-no-summary-no-retrieval": (30.0, 62.4, 26.2),
    "task-decomposition": (40.0, 67.4, 22.8),
}

AGENT_LABELS = {
    "standard": "STANDARD",
    "hiagent": "HiAgent",
    "hiagent-no-summary": "HiAgent w/o OS",
    "hiagent-no-retrieval": "HiAgent w/o TR",
    "hiagent-no-summary-no-retrieval": "HiAgent w/o OS & TR",
    "task-decomposition": "TD only",
    "expert": "expert (planner)",
    "random": "random",
}


def _label(agent: str) -> str:
    return AGENT_LABELS.get(agent, agent)


def _paper(domain: str, agent: str) -> tuple[Any, ...] | None:
    if (domain, agent) in PAPER_TABLE1:
        return PAPER_TABLE1[(domain, agent)]
    if domain == "tyreworld" and agent in PAPER_TYREWORLD_ABLATIONS:
        return (*PAPER_TYREWORLD_ABLATIONS[agent], None, None)
    return None


def _f(value: float | None, digits: int = 1, scale: float = 1.0, suffix: str = "") -> str:
    return "–" if value is None else f"{value * scale:.{digits}f}{suffix}"


# ------------------------------------------------------------------------------------------------
# Reading a run.


def load_run(out: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(config, episode lines) of a run folder; the config is {} if the folder has none."""
    store = RunStore(out)
    if not store.out.is_dir():
        raise ValueError(f"no run folder {store.out}")
    config = store.read_config() or {}
    lines = store.load_lines(repair=False)
    if not config and not lines:
        raise ValueError(f"{store.out} holds no run (no config.json, no episodes.jsonl)")
    return config, lines


def _order(config: dict[str, Any], lines: Sequence[dict[str, Any]]) -> tuple[list[str], list[str]]:
    agents = list(config.get("agents", {}))
    domains = list(config.get("domains", []))
    for line in lines:
        if line["agent"] not in agents:
            agents.append(line["agent"])
        if line["domain"] not in domains:
            domains.append(line["domain"])
    present_agents = {line["agent"] for line in lines}
    present_domains = {line["domain"] for line in lines}
    return [a for a in agents if a in present_agents], [d for d in domains if d in present_domains]


def _max_steps(config: dict[str, Any], lines: Sequence[dict[str, Any]]) -> int:
    if "max_steps" in config:
        return int(config["max_steps"])
    return max((int(line.get("meta", {}).get("max_steps", line["steps"])) for line in lines), default=30)


# ------------------------------------------------------------------------------------------------
# Tables.

MAIN_COLUMNS = ["Domain", "Agent", "n", "SR %", "PR %", "Steps", "Context %", "Time %"]
PAPER_COLUMNS = ["Paper SR %", "Paper PR %", "Paper steps", "Paper context %", "Paper time %"]


def _domain_label(domain: str) -> str:
    return "Overall" if domain == M.OVERALL else domain.capitalize()


def _summary_rows(summary, agents: Sequence[str], domains: Sequence[str]):
    """(domain, agent, row) in table order: each domain's agents, then the overall rows."""
    for domain in [*domains, M.OVERALL]:
        for agent in agents:
            row = summary.get((domain, agent))
            if row is not None:
                yield domain, agent, row


def main_table_rows(
    summary: dict[tuple[str, str], dict[str, Any]],
    agents: Sequence[str],
    domains: Sequence[str],
    with_paper: bool,
) -> list[list[str]]:
    """Rows domain x agent (then overall) of the paper's Table 1 layout, as text cells."""
    rows = []
    for domain, agent, row in _summary_rows(summary, agents, domains):
        cells = [
            _domain_label(domain),
            _label(agent),
            str(row["n"]),
            _f(row["sr"], 1, 100),
            _f(row["pr"], 1, 100),
            _f(row["steps"], 1),
            _f(row["context_rel"], 1, 100),
            _f(row["time_rel"], 1, 100),
        ]
        if with_paper:
            paper = _paper(domain, agent)
            cells += [_f(v, 1) for v in paper] if paper else ["–"] * len(PAPER_COLUMNS)
        rows.append(cells)
    return rows


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    align = ["---" if i < 2 else "---:" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _efficiency_rows(summary, agents, domains) -> list[list[str]]:
    return [
        [
            _domain_label(domain),
            _label(agent),
            f"{row['n_solved']}/{row['n']}",
            str(row["n_solved_with_optimal"]),
            _f(row["steps_over_optimal"], 2),
            _f(row["extra_steps"], 1),
            _f(row["prompt_tokens_per_step"], 0),
            _f(row["all_prompt_tokens_per_step"], 0),
            _f(row["run_time_s"], 2),
            _f(row["executability"], 1, 100),
        ]
        for domain, agent, row in _summary_rows(summary, agents, domains)
    ]


def _progress_rows(summary, agents, domains) -> tuple[list[str], list[list[str]]]:
    ks = sorted({k for row in summary.values() for k in row["progress_at"]})
    rows = [
        [_domain_label(domain), _label(agent)] + [_f(row["progress_at"].get(k), 1, 100) for k in ks]
        for domain, agent, row in _summary_rows(summary, agents, domains)
    ]
    return [f"PR@{k} %" for k in ks], rows


def _wilcoxon_rows(results: Sequence[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for r in results:
        scale = 100 if r["metric"] == "progress" else 1
        rows.append(
            [
                _label(r["agent_a"]),
                _label(r["agent_b"]),
                _domain_label(r["domain"]),
                "PR %" if r["metric"] == "progress" else "steps",
                str(r["n_pairs"]),
                str(r["n_nonzero"]),
                _f(r["mean_a"], 1, scale),
                _f(r["mean_b"], 1, scale),
                _f(r["statistic"], 1),
                "–" if r["p_value"] is None else f"{r['p_value']:.4g}",
                r["note"],
            ]
        )
    return rows


# ------------------------------------------------------------------------------------------------
# Plots.


def _plot(out: Path, summary, by_step, agents, domains, max_steps: int) -> None:
    def progress(ax, domain: str) -> None:
        for agent in agents:
            row = summary.get((domain, agent))
            if row is None:
                continue
            ks = sorted(row["progress_at"])
            ys = [row["progress_at"][k] for k in ks]
            ax.plot(ks, [None if y is None else 100 * y for y in ys], marker="o", label=_label(agent))

    def executability(ax, domain: str) -> None:
        for agent in agents:
            series = by_step.get((domain, agent))
            if not series:
                continue
            xs = [i for i in range(1, max_steps + 1) if series.get(i) is not None]
            ax.plot(xs, [100 * series[i] for i in xs], marker=".", label=_label(agent))

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
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------------------------
# The report.


def _describe_model(config: dict[str, Any]) -> str:
    llm = config.get("llm")
    if not llm:
        return "none (the agents need no model)"
    if llm.get("backend") == "embedded":
        sha = llm.get("model_sha256") or ""
        return f"embedded {llm.get('model_id')} (sha256 {sha[:16]}…)"
    return f"{llm.get('model')} at {llm.get('base_url')}"


def analyse(config: dict[str, Any], lines: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Everything the report shows, as data (also handy in notebooks)."""
    records = [M.as_record(line) for line in lines]
    max_steps = _max_steps(config, lines)
    agents, domains = _order(config, lines)
    summary = M.summarize(records, max_steps)
    groups = M.group_records(records)
    by_step = {
        (domain, agent): M.executability_by_step(groups[(domain, agent)], max_steps)
        for domain in [*domains, M.OVERALL]
        for agent in agents
        if (domain, agent) in groups
    }
    wilcoxon = M.wilcoxon_all_pairs(records, agents, max_steps, domains if len(domains) > 1 else None)
    return {
        "max_steps": max_steps,
        "agents": agents,
        "domains": domains,
        "summary": summary,
        "executability_by_step": by_step,
        "wilcoxon": wilcoxon,
    }


def load_analysis(out: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """A run folder's configuration, records and `analyse` result (None before any episode has ended):
    read and computed once for both the report file and the table on screen."""
    config, lines = load_run(out)
    return config, lines, (analyse(config, lines) if lines else None)


def _with_paper(config: dict[str, Any], lines: Sequence[dict[str, Any]], data: dict[str, Any]) -> bool:
    """Whether the paper's numbers go beside ours: the agentboard split, with an agent the paper ran."""
    agentboard = config.get("split", lines[0]["split"]) == "agentboard"
    return agentboard and any(_paper(d, a) for d in data["domains"] for a in data["agents"])


def write_report(out: str | Path, plots: bool = True, analysis: tuple | None = None) -> Path:
    """Write `<out>/report.md` (and the PNG plots); returns the report's path.

    `analysis` is `load_analysis(out)` when the caller has it already.
    """
    out = Path(out)
    config, lines, data = analysis if analysis is not None else load_analysis(out)
    if not lines:
        raise ValueError(f"{out} has no finished episode yet")
    agents, domains, summary = data["agents"], data["domains"], data["summary"]
    with_paper = _with_paper(config, lines, data)
    planned = len(specs_from(config)) if config else None
    errors = sum(1 for line in lines if line.get("error"))

    split = config.get("split", lines[0]["split"])
    seeds = ", ".join(map(str, config.get("seeds", []))) or "–"
    problems = "; ".join(f"{d}: {', '.join(p)}" for d, p in config.get("problems", {}).items())
    episodes = f"{len(lines)}" + (f" of {planned} planned" if planned is not None else "")
    if planned and len(lines) < planned:
        episodes += " (**incomplete run**: resume it with the same `eval` command)"
    if errors:
        episodes += f"; {errors} stopped by an error outside the agent"
    main_note = (
        "SR: episodes solved; PR: best fraction of goal conditions reached; steps: agent turns, an unsolved "
        f"episode counting the full budget ({data['max_steps']}); context %: mean prompt tokens per step of the "
        "action call, and time %: mean wall time per episode, both relative to STANDARD in the same domain "
        "(– when STANDARD was not run or no model was used; time depends on the machine's load and on "
        "--workers). Overall rows average over all episodes."
    )
    paper_note = (
        f"*Paper columns* are not ours: {PAPER_SOURCE}. The Tyreworld ablation rows give the paper's "
        f"SR / PR / steps only. Our model is {_describe_model(config)}, so they are a reference point, not a target."
    )
    no_paper_note = (
        f"The paper's numbers ({PAPER_SOURCE}) cover STANDARD, HiAgent and HiAgent's ablations; none of "
        "those agents is in this run, so they are not shown."
    )
    efficiency_note = (
        "Steps / optimal and extra steps (agent steps minus optimal plan length, Plancraft's action "
        "efficiency) are means over solved episodes whose optimal length is known. Tokens per step: the action "
        "call's prompt, and every call of the step (summaries, retrievals) added up. Executability: fraction "
        "of the agent's actions that were valid."
    )
    efficiency_header = [
        "Domain",
        "Agent",
        "solved",
        "with optimal",
        "steps / optimal",
        "extra steps",
        "tokens/step",
        "tokens/step (all calls)",
        "time/episode s",
        "executability %",
    ]
    md: list[str] = [
        f"# Evaluation report: `{out}`",
        "",
        f"- split: **{split}**; step budget: {data['max_steps']}; seeds: {seeds}",
        f"- agents: {', '.join(f'{_label(a)} (`{a}`)' for a in agents)}",
        f"- model: {_describe_model(config)}; prompts version: {config.get('prompts_version') or '–'}; "
        + f"pddlworlds {config.get('package_version', '?')}",
        f"- problems: {problems}",
        f"- episodes: {episodes}",
        "",
        "## Success, progress, steps, context and time (Table 1 layout)",
        "",
        main_note,
        "",
        _md_table(
            MAIN_COLUMNS + (PAPER_COLUMNS if with_paper else []),
            main_table_rows(summary, agents, domains, with_paper),
        ),
        "",
    ]
    if with_paper:
        md += [paper_note, ""]
    elif split == "agentboard":
        md += [no_paper_note, ""]
    md += [
        "## Efficiency: steps against the optimal plan, tokens, time, executability",
        "",
        efficiency_note,
        "",
        _md_table(efficiency_header, _efficiency_rows(summary, agents, domains)),
        "",
        "## Progress rate at step k",
        "",
    ]
    ks_header, progress_rows = _progress_rows(summary, agents, domains)
    md += [_md_table(["Domain", "Agent", *ks_header], progress_rows), ""]
    if plots:
        _plot(out, summary, data["executability_by_step"], agents, domains, data["max_steps"])
        md += ["![progress rate at steps 5..30](progress.png)", ""]
    md += ["## Executability per step", ""]
    step_header = [str(i) for i in range(1, data["max_steps"] + 1)]
    step_rows = []
    for (domain, agent), series in data["executability_by_step"].items():
        step_rows.append(
            [_domain_label(domain), _label(agent)]
            + [_f(series.get(i), 0, 100) for i in range(1, data["max_steps"] + 1)]
        )
    md += ["Valid actions (%) among the episodes that took each step.", ""]
    md += [_md_table(["Domain", "Agent", *step_header], step_rows), ""]
    if plots:
        md += ["![executability per step](executability.png)", ""]
    md += ["## Significance: Wilcoxon signed-rank tests on paired episodes", ""]
    if len(agents) < 2:
        md += ["Only one agent was run: nothing to compare.", ""]
    else:
        md += [
            "Pairs: the same domain, problem and seed played by both agents. Two-sided scipy.stats.wilcoxon, "
            + "zero differences dropped; W is the smaller rank sum.",
            "",
            _md_table(
                ["A", "B", "Domain", "Metric", "pairs", "non-zero", "mean A", "mean B", "W", "p", "note"],
                _wilcoxon_rows(data["wilcoxon"]),
            ),
            "",
        ]
    from .impossible import impossible_section

    md += impossible_section(config, lines, out if plots else None)  # only for runs with unsolvable problems
    path = out / "report.md"
    atomic_write(path, "\n".join(md))
    atomic_write(out / "summary.json", json.dumps(_summary_json(data), indent=2) + "\n")
    return path


def _summary_json(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "max_steps": data["max_steps"],
        "rows": [{"domain": d, "agent": a, **row} for (d, a), row in data["summary"].items()],
        "wilcoxon": data["wilcoxon"],
    }


def print_main_table(out: str | Path, console: Any = None, analysis: tuple | None = None) -> None:
    """The main table of a run folder in the terminal (rich); `analysis` as for `write_report`."""
    from rich.console import Console
    from rich.table import Table

    config, lines, data = analysis if analysis is not None else load_analysis(out)
    if console is None:
        import sys

        console = Console(width=None if sys.stdout.isatty() else 150)
    if not lines:
        console.print(f"{out}: no finished episode yet")
        return
    with_paper = _with_paper(config, lines, data)
    table = Table(title=f"{out}: {len(lines)} episodes, model {_describe_model(config)}")
    header = MAIN_COLUMNS + (["Paper SR/PR/steps"] if with_paper else [])
    for i, column in enumerate(header):
        table.add_column(column, justify="left" if i < 2 else "right")
    previous = None
    for cells in main_table_rows(data["summary"], data["agents"], data["domains"], with_paper):
        if with_paper:
            paper = cells[len(MAIN_COLUMNS) :]
            cells = cells[: len(MAIN_COLUMNS)] + ["–" if paper[0] == "–" else " / ".join(paper[:3])]
        if previous is not None and cells[0] != previous:
            table.add_section()
        previous = cells[0]
        table.add_row(*cells)
    console.print(table)
    if with_paper:
        console.print("[dim]Paper: HiAgent paper, Table 1, GPT-4-turbo (docs/method.md section 4).[/dim]")
