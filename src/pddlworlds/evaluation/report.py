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
from .configuration import decoding_words
from .paper import AGENT_LABELS, PAPER_SOURCE, PAPER_TABLE1, PAPER_TYREWORLD_ABLATIONS, agent_label, paper_row
from .plots import write_plots
from .spec import specs_from
from .store import EpisodeFile, RunStore, is_errored

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


def _f(value: float | None, digits: int = 1, scale: float = 1.0, suffix: str = "") -> str:
    return "–" if value is None else f"{value * scale:.{digits}f}{suffix}"


# ------------------------------------------------------------------------------------------------
# Reading a run.


def load_run(out: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(config, episode lines) of a run folder; the config is {} if the folder has none."""
    config, found = read_run(out)
    return config, found.lines


def read_run(out: str | Path) -> tuple[dict[str, Any], EpisodeFile]:
    """`load_run`, with what the episode file skipped (torn and duplicate lines)."""
    store = RunStore(out)
    if not store.out.is_dir():
        raise ValueError(f"no run folder {store.out}")
    config = store.read_config() or {}
    found = store.read_episodes(repair=False)
    if not config and not found.lines:
        raise ValueError(f"{store.out} holds no run (no config.json, no episodes.jsonl)")
    return config, found


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

MAIN_COLUMNS = ["Domain", "Agent", *(m.label for m in M.metric_columns("main"))]
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
            agent_label(agent),
            *(m.format(row) for m in M.metric_columns("main")),
        ]
        if with_paper:
            paper = paper_row(domain, agent)
            cells += [_f(v, 1) for v in paper] if paper else ["–"] * len(PAPER_COLUMNS)
        rows.append(cells)
    return rows


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    align = ["---" if i < 2 else "---:" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _efficiency_columns(context: str) -> list[M.Metric]:
    """The efficiency table's metrics; the in-trial context column only when the run recorded it."""
    return M.metric_columns("efficiency", lambda m: m.name != "context_tokens_per_step" or m.name == context)


def _efficiency_rows(summary, agents, domains, context: str) -> list[list[str]]:
    columns = _efficiency_columns(context)
    return [
        [_domain_label(domain), agent_label(agent), *(m.format(row) for m in columns)]
        for domain, agent, row in _summary_rows(summary, agents, domains)
    ]


def _progress_rows(summary, agents, domains) -> tuple[list[str], list[list[str]]]:
    ks = sorted({k for row in summary.values() for k in row["progress_at"]})
    rows = [
        [_domain_label(domain), agent_label(agent)] + [_f(row["progress_at"].get(k), 1, 100) for k in ks]
        for domain, agent, row in _summary_rows(summary, agents, domains)
    ]
    return [f"PR@{k} %" for k in ks], rows


def _wilcoxon_rows(results: Sequence[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for r in results:
        scale = 100 if r["metric"] == "progress" else 1
        rows.append(
            [
                agent_label(r["agent_a"]),
                agent_label(r["agent_b"]),
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
# The report.


def _describe_model(config: dict[str, Any]) -> str:
    from ..llm import BACKENDS

    llm = config.get("llm")
    if not llm:
        return "none (the agents need no model)"
    backend = BACKENDS.get(str(llm.get("backend")))
    if backend is None:  # a backend registered by the run's own code, not in this process
        return f"{llm.get('backend')} {llm.get('model') or llm.get('model_id') or ''}".strip()
    return backend.describe_entry(llm)


def _context_words(measure: str) -> str:
    """What the Context % column divides, for the report's header."""
    if measure == "context_tokens_per_step":
        return (
            "mean in-trial context tokens per step (the working memory at the action call: goal, observations, "
            "actions, subgoals, summaries, retrieved pairs; not the fixed instructions and example; the whole "
            "prompt is the efficiency table's tokens/step)"
        )
    return "mean prompt tokens per step of the action call"


def _token_counting_words(config: dict[str, Any]) -> str:
    """How the run's backend counted tokens (recorded in its configuration), as a sentence, if it says."""
    counting = (config.get("llm") or {}).get("token_counting")
    return f" Tokens counted by {counting}." if counting else ""


def analyse(
    config: dict[str, Any], lines: Sequence[dict[str, Any]], include_errored: bool = False
) -> dict[str, Any]:
    """Everything the report shows, as data (also handy in notebooks). Episodes stopped by a fault outside
    the agent are left out of every score (`include_errored` puts them back) and listed as `errored`."""
    errored = [line for line in lines if is_errored(line)]
    if not include_errored:
        lines = [line for line in lines if not is_errored(line)]
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
        "context": M.context_measure(records),
        "errored": errored,
    }


def load_analysis(out: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """A run folder's configuration, records and `analyse` result (None before any episode has ended):
    read and computed once for both the report file and the table on screen."""
    config, found = read_run(out)
    lines = found.lines
    data = analyse(config, lines) if lines else None
    if data is not None:
        data["skipped"] = found.skipped()
    return config, lines, data


def _with_paper(config: dict[str, Any], lines: Sequence[dict[str, Any]], data: dict[str, Any]) -> bool:
    """Whether the paper's numbers go beside ours: the agentboard split, with an agent the paper ran."""
    agentboard = config.get("split", lines[0]["split"]) == "agentboard"
    return agentboard and any(paper_row(d, a) for d in data["domains"] for a in data["agents"])


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
        episodes += (
            f"; {errors} stopped by a fault outside the agent (the model endpoint), **left out of every score** "
            "and listed at the end: the same `eval` command re-runs them"
        )
    if data.get("skipped"):
        episodes += f"; episodes.jsonl had {data['skipped']}, skipped"
    main_note = (
        "SR: episodes solved; PR: best fraction of goal conditions reached; steps: agent turns, an unsolved "
        f"episode counting the full budget ({data['max_steps']}); context %: {_context_words(data['context'])}, "
        "and time %: mean wall time per episode, both relative to STANDARD in the same domain "
        "(– when STANDARD was not run or no model was used; time depends on the machine's load and on "
        "--workers). Overall rows average over all episodes." + _token_counting_words(config)
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
    efficiency_header = ["Domain", "Agent", *(m.label for m in _efficiency_columns(data["context"]))]
    md: list[str] = [
        f"# Evaluation report: `{out}`",
        "",
        f"- split: **{split}**; step budget: {data['max_steps']}; seeds: {seeds}",
        f"- agents: {', '.join(f'{agent_label(a)} (`{a}`)' for a in agents)}",
        f"- model: {_describe_model(config)}; prompts version: {config.get('prompts_version') or '–'}; "
        + f"pddlworlds {config.get('package_version', '?')}",
        f"- problems: {problems}",
        f"- episodes: {episodes}",
        f"- environment profile: **{config.get('profile', 'pddlworlds')}**"
        + (f"; prompt file: `{config['prompt_file']['path']}` (sha256 {config['prompt_file']['sha256'][:12]}…)"
           if config.get("prompt_file") else "")
        + _example_words(config),
        f"- decoding: {decoding_words(config)}",
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
        _md_table(efficiency_header, _efficiency_rows(summary, agents, domains, data["context"])),
        "",
        "## Progress rate at step k",
        "",
    ]
    ks_header, progress_rows = _progress_rows(summary, agents, domains)
    md += [_md_table(["Domain", "Agent", *ks_header], progress_rows), ""]
    if plots and domains:
        write_plots(out, summary, data["executability_by_step"], agents, domains, data["max_steps"])
        md += ["![progress rate at steps 5..30](progress.png)", ""]
    md += ["## Executability per step", ""]
    step_header = [str(i) for i in range(1, data["max_steps"] + 1)]
    step_rows = []
    for (domain, agent), series in data["executability_by_step"].items():
        step_rows.append(
            [_domain_label(domain), agent_label(agent)]
            + [_f(series.get(i), 0, 100) for i in range(1, data["max_steps"] + 1)]
        )
    md += ["Valid actions (%) among the episodes that took each step.", ""]
    md += [_md_table(["Domain", "Agent", *step_header], step_rows), ""]
    if plots and domains:
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
    if data["errored"]:
        md += [
            "## Episodes stopped by a fault outside the agent",
            "",
            (
                "Left out of every score above. Fix the endpoint and run the same `eval` command again: it "
                "re-runs these episodes, and only these."
            ),
            "",
            _md_table(
                ["Agent", "Domain", "Problem", "Seed", "Fault", "Message", "Attempts"],
                _fault_rows(data["errored"]),
            ),
            "",
        ]
    if config.get("profile") == "agentboard":
        md += _agentboard_section(agents, [line for line in lines if not is_errored(line)])
    from .unsolvable import impossible_section

    md += impossible_section(config, lines, out if plots else None)  # only for runs with unsolvable problems
    path = out / "report.md"
    atomic_write(path, "\n".join(md))
    atomic_write(out / "summary.json", json.dumps(_summary_json(data), indent=2) + "\n")
    return path


def _fault_rows(errored: Sequence[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for line in errored:
        fault = line.get("error")
        fault = fault if isinstance(fault, dict) else {"kind": "error", "message": str(fault), "count": None}
        message = str(fault.get("message", "")).replace("|", "\\|").replace("\n", " ")
        rows.append(
            [
                agent_label(line["agent"]),
                _domain_label(line["domain"]),
                line["problem"],
                str(line.get("seed")),
                str(fault.get("kind")),
                message,
                str(fault.get("count", "–")),
            ]
        )
    return rows


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
    if data["errored"]:
        console.print(
            f"[bold red]{len(data['errored'])} episode(s) stopped by a fault of the model endpoint are left out "
            "of these scores[/bold red] (listed in report.md; the same eval command re-runs them)."
        )
    if with_paper:
        console.print("[dim]Paper: HiAgent paper, Table 1, GPT-4-turbo (docs/method.md section 4).[/dim]")


def _example_words(config: dict[str, Any]) -> str:
    """Which problem each domain's in-context example came from (agents' flags), when any agent had one."""
    sources: dict[str, str] = {}
    for flags in config.get("agents", {}).values():
        for domain, example in (flags.get("examples") or {}).items():
            sources.setdefault(domain, f"{example.get('problem')} (sha256 {str(example.get('sha256', ''))[:12]}…)")
    return "; in-context examples: " + ", ".join(sources[d] for d in sorted(sources)) if sources else ""


def _agentboard_section(agents: Sequence[str], lines: Sequence[dict[str, Any]]) -> list[str]:
    """AgentBoard's own scores beside ours: pooled over every problem of the run, as its PDDL task does."""
    from .agentboard_scores import agentboard_scores

    rows = []
    for agent in agents:
        records = [M.as_record(line) for line in lines if line["agent"] == agent]
        if records:
            scores = agentboard_scores(records)
            rows.append([
                agent_label(agent), str(scores.episodes), f"{100 * scores.progress_rate:.1f}",
                f"{100 * scores.success_rate:.1f}", f"{100 * scores.grounding_accuracy:.1f}",
            ])
    return [
        "## AgentBoard's scores (profile `agentboard`)",
        "",
        "As AgentBoard's PDDL task computes them: means over every episode of the run, all domains pooled "
        "(not a mean of per-domain means). Progress starts at 0 and rises only after an action that changed "
        "the state; grounding accuracy is valid steps over steps, `check valid actions` and `look around` "
        "counted valid.",
        "",
        _md_table(["Agent", "episodes", "progress rate %", "success rate %", "grounding accuracy %"], rows),
        "",
    ]
