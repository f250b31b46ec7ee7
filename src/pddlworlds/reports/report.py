"""The report of a run folder: `report.md` with tables in the paper's layout, PNG plots, Wilcoxon tests.

`write_report(out)` reads `config.json` and the episode lines (a run still going, or stopped, is reported
as far as it got) and writes `report.md`, `summary.json`, `progress.png` (PR at steps 5..30 per domain, one
line per agent) and `executability.png` (valid actions per step index per domain).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..artefacts.runs import (
    EPISODES_FILE,
    REPORT_FILE,
    SUMMARY_FILE,
    config_setting,
    is_errored,
    planned_episodes,
)
from ..files import atomic_write
from ..printable import printable
from ..scoring import metrics as M
from ..worlds.catalogue import AGENTBOARD_SPLIT
from ..worlds.profiles import AGENTBOARD_PROFILE
from .analysis import RunAnalysis, load_analysis
from .call_costs import call_costs_section
from .paper import AGENT_LABELS, PAPER_SOURCE, PAPER_TABLE1, PAPER_TYREWORLD_ABLATIONS, agent_label
from .plots import write_plots
from .report_tables import (
    MAIN_COLUMNS,
    PAPER_COLUMNS,
    cell,
    context_words,
    describe_model,
    domain_label,
    efficiency_columns,
    efficiency_rows,
    main_table_rows,
    md_table,
    progress_rows,
    shows_paper,
    summary_json,
    token_counting_words,
    wilcoxon_rows,
)
from .setting import comparable_with_published, setting_words

__all__ = ["AGENT_LABELS", "PAPER_SOURCE", "PAPER_TABLE1", "PAPER_TYREWORLD_ABLATIONS", "write_report"]


def write_report(out: str | Path, plots: bool = True, analysis: RunAnalysis | None = None) -> Path:
    """Write `<out>/report.md` (and the PNG plots); returns the report's path.

    `analysis` is `load_analysis(out)` when the caller has it already.
    """
    out = Path(out)
    analysis = analysis if analysis is not None else load_analysis(out)
    config, lines, data = analysis.config, analysis.lines, analysis.data
    if not lines:
        raise ValueError(f"{out} has no finished episode yet")
    agents, domains, summary = data["agents"], data["domains"], data["summary"]
    with_paper = shows_paper(config, lines, data)
    planned = planned_episodes(config) if config else None
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
        episodes += f"; {EPISODES_FILE} had {data['skipped']}, skipped"
    main_note = (
        "SR: episodes solved; PR: best fraction of goal conditions reached; steps: agent turns, an unsolved "
        f"episode counting the full budget ({data.get('budgets', data['max_steps'])}); context %: {context_words(data['context'])}, "
        "and time %: mean wall time per episode, both relative to STANDARD in the same domain "
        "(– when STANDARD was not run or no model was used; time depends on the machine's load and on "
        "--workers). Overall rows average over all episodes." + token_counting_words(config)
    )
    paper_note = (
        f"*Paper columns* are not ours: {PAPER_SOURCE}. The Tyreworld ablation rows give the paper's "
        f"SR / PR / steps only. Our model is {describe_model(config)}, so they are a reference point, not a target."
    )
    no_paper_note = (
        f"The paper's numbers ({PAPER_SOURCE}) cover STANDARD, HiAgent and HiAgent's ablations; none of "
        "those agents is in this run, so they are not shown."
    )
    if not comparable_with_published(config):
        no_paper_note = (
            f"The paper's numbers ({PAPER_SOURCE}) are not shown: this run's setting ({config_setting(config)}) "
            "is not comparable with published numbers, which are all free decoding with each domain's own "
            "observations."
        )
    efficiency_note = (
        "Steps / optimal and extra steps (agent steps minus the optimal plan's length, Plancraft's action "
        "efficiency) are means over the solved episodes whose optimal length is known (the shortest plan's, "
        "proven; *with optimal* counts them), never counting an unknown one as 0. Tokens per step: the action "
        "call's prompt, and every call of the step (summaries, retrievals) added up. Executability: fraction "
        "of the agent's actions that were valid."
    )
    costs = bool(data.get("costs"))
    if costs:
        efficiency_note += (
            " Cost (solved) and cost / optimal: the total action cost of solved episodes in domains with action "
            "costs, and its ratio to the cheapest plan's cost (proven by its own search: the cheapest plan may be "
            "longer than the shortest plan the steps are measured against), over the solved episodes where it "
            "is known (*with optimal cost* counts them)."
        )
    efficiency_header = ["Domain", "Agent", *(m.label for m in efficiency_columns(data["context"], costs))]
    about = [  # names from the run folder (a shared one is anyone's): shown inert, one line each (`printable`)
        f"# Evaluation report: `{out}`",
        "",
        f"- split: **{split}**; step budget: {data['max_steps']}; seeds: {seeds}",
        f"- agents: {', '.join(f'{agent_label(a)} (`{a}`)' for a in agents)}",
        f"- model: {describe_model(config)}; prompts version: {config.get('prompts_version') or '–'}; "
        + f"pddlworlds {config.get('package_version', '?')}",
        f"- problems: {problems}",
        f"- episodes: {episodes}",
        f"- environment profile: **{config.get('profile', 'pddlworlds')}**"
        + (f"; prompt file: `{config['prompt_file'].get('path')}` (sha256 {config['prompt_file'].get('sha256', '')[:12]}…)"
           if config.get("prompt_file") else "")
        + _example_words(config),
        f"- setting: {setting_words(config)}",
    ]
    md: list[str] = [
        *map(printable, about),
        "",
        "## Success, progress, steps, context and time (Table 1 layout)",
        "",
        main_note,
        "",
        md_table(
            MAIN_COLUMNS + (PAPER_COLUMNS if with_paper else []),
            main_table_rows(summary, agents, domains, with_paper),
        ),
        "",
    ]
    if with_paper:
        md += [paper_note, ""]
    elif split == AGENTBOARD_SPLIT:
        md += [no_paper_note, ""]
    md += [
        "## Efficiency: steps against the optimal plan, tokens, time, executability",
        "",
        efficiency_note,
        "",
        md_table(efficiency_header, efficiency_rows(summary, agents, domains, data["context"], costs)),
        "",
    ]
    kept = [line for line in lines if not is_errored(line)]
    md += call_costs_section(kept, agents, domains)
    md += ["## Progress rate at step k", ""]
    ks_header, pr_rows = progress_rows(summary, agents, domains)
    md += [md_table(["Domain", "Agent", *ks_header], pr_rows), ""]
    if plots and domains:
        write_plots(out, summary, data["executability_by_step"], agents, domains, data["max_steps"])
        md += ["![progress rate at steps 5..30](progress.png)", ""]
    md += ["## Executability per step", ""]
    step_header = [str(i) for i in range(1, data["max_steps"] + 1)]
    step_rows = []
    for (domain, agent), series in data["executability_by_step"].items():
        step_rows.append(
            [domain_label(domain), agent_label(agent)]
            + [cell(series.get(i), 0, 100) for i in range(1, data["max_steps"] + 1)]
        )
    md += ["Valid actions (%) among the episodes that took each step.", ""]
    md += [md_table(["Domain", "Agent", *step_header], step_rows), ""]
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
            md_table(
                ["A", "B", "Domain", "Metric", "pairs", "non-zero", "mean A", "mean B", "W", "p", "note"],
                wilcoxon_rows(data["wilcoxon"]),
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
            md_table(
                ["Agent", "Domain", "Problem", "Seed", "Fault", "Message", "Attempts"],
                _fault_rows(data["errored"]),
            ),
            "",
        ]
    if config.get("profile") == AGENTBOARD_PROFILE:
        md += _agentboard_section(agents, [line for line in lines if not is_errored(line)])
    from .published_report import published_section

    md += published_section(config, kept, agents, data["max_steps"], out if plots else None)
    from .impossible import impossible_section

    md += impossible_section(config, lines, out if plots else None)  # only for runs with unsolvable problems
    path = out / REPORT_FILE
    atomic_write(path, "\n".join(md))
    atomic_write(out / SUMMARY_FILE, json.dumps(summary_json(data), indent=2) + "\n")
    return path


def _fault_rows(errored: Sequence[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for line in errored:
        fault = line.get("error")
        fault = fault if isinstance(fault, dict) else {"kind": "error", "message": str(fault), "count": None}
        message = str(fault.get("message", ""))
        rows.append(
            [
                agent_label(line["agent"]),
                domain_label(line["domain"]),
                line["problem"],
                str(line.get("seed")),
                str(fault.get("kind")),
                message,
                str(fault.get("count", "–")),
            ]
        )
    return rows


def _example_words(config: dict[str, Any]) -> str:
    """Which problem each domain's in-context example came from (agents' flags), when any agent had one."""
    sources: dict[str, str] = {}
    for flags in config.get("agents", {}).values():
        examples = flags.get("examples")
        for domain, example in (examples.items() if isinstance(examples, dict) else ()):
            if isinstance(example, dict):
                sources.setdefault(domain, f"{example.get('problem')} (sha256 {str(example.get('sha256', ''))[:12]}…)")
    return "; in-context examples: " + ", ".join(sources[d] for d in sorted(sources)) if sources else ""


def _agentboard_section(agents: Sequence[str], lines: Sequence[dict[str, Any]]) -> list[str]:
    """AgentBoard's own scores beside ours: pooled over every problem of the run, as its PDDL task does."""
    from ..scoring.agentboard_scores import agentboard_scores

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
        ("As AgentBoard's PDDL task computes them: means over every episode of the run, all domains pooled "
         "(not a mean of per-domain means). Progress starts at 0 and rises only after an action that changed "
         "the state; grounding accuracy is valid steps over steps, `check valid actions` and `look around` "
         "counted valid."),
        "",
        md_table(["Agent", "episodes", "progress rate %", "success rate %", "grounding accuracy %"], rows),
        "",
    ]
