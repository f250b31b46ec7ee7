"""The report's tables as text cells, in the paper's layout, and the main table in the terminal (or as CSV or
JSON rows for programs)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..printable import markdown_cell, printable
from ..scoring import metrics as M
from ..worlds.catalogue import AGENTBOARD_SPLIT
from .analysis import RunAnalysis, load_analysis
from .paper import agent_label, paper_row
from .setting import comparable_with_published

__all__ = [
    "MAIN_COLUMNS",
    "PAPER_COLUMNS",
    "cell",
    "context_words",
    "describe_model",
    "domain_label",
    "efficiency_columns",
    "efficiency_rows",
    "main_table_rows",
    "md_table",
    "print_main_table",
    "progress_rows",
    "shows_paper",
    "summary_json",
    "summary_keys",
    "summary_rows",
    "token_counting_words",
    "wilcoxon_rows",
]


def cell(value: float | None, digits: int = 1, scale: float = 1.0, suffix: str = "") -> str:
    return "–" if value is None else f"{value * scale:.{digits}f}{suffix}"


MAIN_COLUMNS = ["Domain", "Agent", *(m.label for m in M.metric_columns("main"))]


PAPER_COLUMNS = ["Paper SR %", "Paper PR %", "Paper steps", "Paper context %", "Paper time %"]


def domain_label(domain: str) -> str:
    return "Overall" if domain == M.OVERALL else domain.capitalize()


def summary_rows(summary, agents: Sequence[str], domains: Sequence[str]):
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
    for domain, agent, row in summary_rows(summary, agents, domains):
        cells = [
            domain_label(domain),
            agent_label(agent),
            *(m.format(row) for m in M.metric_columns("main")),
        ]
        if with_paper:
            paper = paper_row(domain, agent)
            cells += [cell(v, 1) for v in paper] if paper else ["–"] * len(PAPER_COLUMNS)
        rows.append(cells)
    return rows


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table; every cell escaped (stored text, a server's message, cannot end a cell or a row)."""
    align = ["---" if i < 2 else "---:" for i in range(len(header))]
    lines = ["| " + " | ".join(map(markdown_cell, header)) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(map(markdown_cell, r)) + " |" for r in rows]
    return "\n".join(lines)


def efficiency_columns(context: str, costs: bool = False) -> list[M.Metric]:
    """The efficiency table's metrics; the in-trial context column only when the run recorded it, the cost
    columns only when some episode played a domain with action costs."""
    return M.metric_columns(
        "efficiency",
        lambda m: (m.name != "context_tokens_per_step" or m.name == context)
        and (costs or m.name not in M.COST_METRICS),
    )


def efficiency_rows(summary, agents, domains, context: str, costs: bool = False) -> list[list[str]]:
    columns = efficiency_columns(context, costs)
    return [
        [domain_label(domain), agent_label(agent), *(m.format(row) for m in columns)]
        for domain, agent, row in summary_rows(summary, agents, domains)
    ]


def progress_rows(summary, agents, domains) -> tuple[list[str], list[list[str]]]:
    ks = sorted({k for row in summary.values() for k in row["progress_at"]})
    rows = [
        [domain_label(domain), agent_label(agent)] + [cell(row["progress_at"].get(k), 1, 100) for k in ks]
        for domain, agent, row in summary_rows(summary, agents, domains)
    ]
    return [f"PR@{k} %" for k in ks], rows


def wilcoxon_rows(results: Sequence[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for r in results:
        scale = 100 if r["metric"] == "progress" else 1
        rows.append(
            [
                agent_label(r["agent_a"]),
                agent_label(r["agent_b"]),
                domain_label(r["domain"]),
                "PR %" if r["metric"] == "progress" else "steps",
                str(r["n_pairs"]),
                str(r["n_nonzero"]),
                cell(r["mean_a"], 1, scale),
                cell(r["mean_b"], 1, scale),
                cell(r["statistic"], 1),
                "–" if r["p_value"] is None else f"{r['p_value']:.4g}",
                r["note"],
            ]
        )
    return rows


def describe_model(config: dict[str, Any]) -> str:
    from ..llm import BACKENDS

    llm = config.get("llm")
    if not llm:
        return "none (the agents need no model)"
    backend = BACKENDS.get(str(llm.get("backend")))
    if backend is None:  # a backend registered by the run's own code, not in this process
        return f"{llm.get('backend')} {llm.get('model') or llm.get('model_id') or ''}".strip()
    return backend.describe_entry(llm)


def context_words(measure: str) -> str:
    """What the Context % column divides, for the report's header."""
    if measure == "context_tokens_per_step":
        return (
            "mean in-trial context tokens per step (the working memory at the action call: goal, observations, "
            "actions, subgoals, summaries, retrieved pairs; not the fixed instructions and example; the whole "
            "prompt is the efficiency table's tokens/step)"
        )
    return "mean prompt tokens per step of the action call"


def token_counting_words(config: dict[str, Any]) -> str:
    """How the run's backend counted tokens (recorded in its configuration), as a sentence, if it says."""
    counting = (config.get("llm") or {}).get("token_counting")
    return f" Tokens counted by {counting}." if counting else ""


def shows_paper(config: dict[str, Any], lines: Sequence[dict[str, Any]], data: dict[str, Any]) -> bool:
    """Whether the paper's numbers go beside ours: the agentboard split, with an agent the paper ran, in a
    setting comparable with published numbers (`comparable_with_published`; never a choosing one)."""
    agentboard = config.get("split", lines[0]["split"]) == AGENTBOARD_SPLIT
    return (
        agentboard
        and comparable_with_published(config)
        and any(paper_row(d, a) for d in data["domains"] for a in data["agents"])
    )


def summary_keys() -> list[str]:
    """The keys of every row of `summary.json` (and of `eval`/`report --format csv|json`), in order."""
    aggregated = [m.name for m in M.METRICS if m.aggregate is not None]
    relative = [m.name for m in M.METRICS if m.relative is not None and m.name not in aggregated]
    return ["domain", "agent", *aggregated, *relative]


def summary_json(data: dict[str, Any]) -> dict[str, Any]:
    """What `summary.json` holds: the step budget, one row per (domain, agent), the Wilcoxon tests."""
    return {
        "max_steps": data["max_steps"],
        "rows": [{"domain": d, "agent": a, **row} for (d, a), row in data["summary"].items()],
        "wilcoxon": data["wilcoxon"],
    }


def print_main_table(
    out: str | Path, console: Any = None, analysis: RunAnalysis | None = None, fmt: str = "table"
) -> None:
    """The main table of a run folder in the terminal (rich), or with `fmt` "csv"/"json" its rows as
    summary.json holds them (`analyse`'s summary, keyed by domain and agent); `analysis` is
    `load_analysis(out)` when the caller has it already."""
    from ..tables import Column, make_console, print_rows

    analysis = analysis if analysis is not None else load_analysis(out)
    config, lines, data = analysis.config, analysis.lines, analysis.data
    if fmt != "table":  # the same columns whether or not there are rows: a header even with no episode
        rows = summary_json(data)["rows"] if data else []
        print_rows(rows, [Column(k, k) for k in summary_keys()], fmt)
        console = make_console(sys.stderr)  # what follows is for people
        if data and data["errored"]:
            console.print(f"{len(data['errored'])} episode(s) stopped by a fault of the model endpoint are left out")
        return
    if console is None:
        console = make_console()
    if not lines:
        console.print(printable(f"{out}: no finished episode yet"), markup=False)
        return
    with_paper = shows_paper(config, lines, data)
    header = MAIN_COLUMNS + (["Paper SR/PR/steps"] if with_paper else [])
    table_rows = []
    for cells in main_table_rows(data["summary"], data["agents"], data["domains"], with_paper):
        if with_paper:
            paper = cells[len(MAIN_COLUMNS) :]
            cells = cells[: len(MAIN_COLUMNS)] + ["–" if paper[0] == "–" else " / ".join(paper[:3])]
        table_rows.append(dict(zip(header, cells)))
    print_rows(
        table_rows,
        [Column(h, h, "left" if i < 2 else "right") for i, h in enumerate(header)],
        title=f"{out}: {len(lines)} episodes, model {describe_model(config)}",
        section_key=header[0],
        file=console.file,
    )
    if data["errored"]:
        console.print(
            f"[bold red]{len(data['errored'])} episode(s) stopped by a fault of the model endpoint are left out "
            "of these scores[/bold red] (listed in report.md; the same eval command re-runs them)."
        )
    if with_paper:
        console.print("[dim]Paper: HiAgent paper, Table 1, GPT-4-turbo (docs/method.md section 4).[/dim]")
