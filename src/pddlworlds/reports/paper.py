"""The paper's reference numbers and agent names, carried over from the HiAgent paper (Hu et al., 2024) as
quoted in docs/method.md section 4, for the report to show beside ours."""

from __future__ import annotations

from typing import Any

__all__ = [
    "AGENT_LABELS",
    "PAPER_SOURCE",
    "PAPER_TABLE1",
    "PAPER_TYREWORLD_ABLATIONS",
    "agent_label",
    "paper_row",
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


def agent_label(agent: str) -> str:
    """An agent's name as the paper writes it (its own name when the paper has none)."""
    return AGENT_LABELS.get(agent, agent)


def paper_row(domain: str, agent: str) -> tuple[Any, ...] | None:
    """(SR %, PR %, steps, context %, time %) the paper reports for an agent in a domain (None: none)."""
    if (domain, agent) in PAPER_TABLE1:
        return PAPER_TABLE1[(domain, agent)]
    if domain == "tyreworld" and agent in PAPER_TYREWORLD_ABLATIONS:
        return (*PAPER_TYREWORLD_ABLATIONS[agent], None, None)
    return None
