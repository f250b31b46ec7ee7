"""A run folder read and analysed: every figure the report and the terminal table show, computed once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..artefacts.runs import CONFIG_FILE, EPISODES_FILE, RunFolder, is_errored, read_run
from ..scoring import metrics as M
from ..scoring.significance import wilcoxon_all_pairs
from ..worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS

__all__ = ["RunAnalysis", "analyse", "load_analysis", "load_run", "run_order", "step_budget"]


def run_order(config: dict[str, Any], lines: Sequence[dict[str, Any]]) -> tuple[list[str], list[str]]:
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


def step_budget(config: dict[str, Any], lines: Sequence[dict[str, Any]]) -> int:
    if config.get("max_steps") is not None:
        return int(config["max_steps"])
    budgets = ((line.get("meta") or {}).get("max_steps") for line in lines)
    return max((int(b) if isinstance(b, int) else int(line["steps"]) for b, line in zip(budgets, lines)),
               default=DEFAULT_MAX_EPISODE_STEPS)


def budget_span(config: dict[str, Any], lines: Sequence[dict[str, Any]]) -> str:
    """The step budget the run's episodes had, as the report says it: one number, or "least-most" where a
    ladder's bands gave them budgets of their own."""
    if config.get("max_steps") is not None:
        return str(int(config["max_steps"]))
    budgets = sorted({int(b) for b in ((line.get("meta") or {}).get("max_steps") for line in lines)
                      if isinstance(b, int)})
    if not budgets:
        return str(DEFAULT_MAX_EPISODE_STEPS)
    return str(budgets[0]) if len(budgets) == 1 else f"{budgets[0]}-{budgets[-1]}, each episode its own"


def analyse(
    config: dict[str, Any], lines: Sequence[dict[str, Any]], include_errored: bool = False
) -> dict[str, Any]:
    """Everything the report shows, as data (also handy in notebooks). Episodes stopped by a fault outside
    the agent are left out of every score (`include_errored` puts them back) and listed as `errored`."""
    errored = [line for line in lines if is_errored(line)]
    if not include_errored:
        lines = [line for line in lines if not is_errored(line)]
    records = [M.as_record(line) for line in lines]
    max_steps = step_budget(config, lines)
    agents, domains = run_order(config, lines)
    summary = M.summarize(records, max_steps)
    groups = M.group_records(records)
    by_step = {
        (domain, agent): M.executability_by_step(groups[(domain, agent)], max_steps)
        for domain in [*domains, M.OVERALL]
        for agent in agents
        if (domain, agent) in groups
    }
    wilcoxon = wilcoxon_all_pairs(records, agents, max_steps, domains if len(domains) > 1 else None)
    return {
        "max_steps": max_steps,
        # a ladder run's budgets differ by band: "30-80" (each unsolved episode counts its own)
        "budgets": budget_span(config, lines),
        "agents": agents,
        "domains": domains,
        "summary": summary,
        "executability_by_step": by_step,
        "wilcoxon": wilcoxon,
        "context": M.context_measure(records),
        "costs": any(r.cost is not None for r in records),
        "errored": errored,
    }


@dataclass
class RunAnalysis:
    """A run folder's configuration ({} when it has none), its episode lines and what `analyse` makes of
    them (None before any episode has ended), with the torn and duplicate lines it skipped in words."""

    config: dict[str, Any]
    lines: list[dict[str, Any]]
    data: dict[str, Any] | None


def load_run(out: str | Path) -> RunFolder:
    """A run folder as the report reads it: a line that is not an episode record stops it (file and line
    named), torn and duplicate lines are skipped and counted."""
    run = read_run(out, strict=True)
    if not run.config and not run.lines:
        raise ValueError(f"{run.path} holds no run (no {CONFIG_FILE}, no episode in {EPISODES_FILE})")
    return run


def load_analysis(out: str | Path) -> RunAnalysis:
    """`load_run` and `analyse`, read and computed once for both the report file and the table on screen."""
    run = load_run(out)
    data = analyse(run.config, run.lines) if run.lines else None
    if data is not None:
        data["skipped"] = run.episodes.skipped_words()
    return RunAnalysis(run.config, run.lines, data)
