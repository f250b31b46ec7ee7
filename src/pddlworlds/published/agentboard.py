"""The twelve models AgentBoard's authors published, episode by episode, on the 60 public problems.

The files under `agentboard_results/` are theirs, unchanged (origin in that folder's README.md): one line
per episode, in AgentBoard's test order, which names no problem. `index.csv` beside them maps each line to
our problem names; tests/reports/test_published.py checks that mapping problem by problem against the goal sizes
and the proven optimal plan lengths.

Steps here are numbered as in our records: the first action is step 1. AgentBoard logs a rise of progress
with its loop's 0-based step index, so a logged `(s, p)` is our `(s + 1, p)`.
"""

from __future__ import annotations

import ast
import csv
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources

__all__ = [
    "MODELS",
    "MODEL_LABELS",
    "PUBLISHED_SOURCE",
    "PUBLISHED_SPLIT",
    "PUBLISHED_STEPS",
    "PublishedEpisode",
    "PublishedError",
    "PublishedScores",
    "load_model",
    "model_label",
    "parse_results",
    "pooled",
    "problem_order",
    "published_results",
]

#: The split whose 60 problems the published episodes were played on, and their step budget.
PUBLISHED_SPLIT = "agentboard"
PUBLISHED_STEPS = 30

PUBLISHED_SOURCE = (
    'AgentBoard (Ma et al., 2024, "AgentBoard: An Analytical Evaluation Board of Multi-turn LLM Agents"), '
    "per-episode results of its leaderboard (hkust-nlp/hkust-nlp.github.io, "
    "agentboard/data/baseline_results/<model>/pddl.txt, commit 5d72338): AgentBoard's Act-style agent with "
    "its own prompts and one example, 30 steps, temperature 0"
)

#: Models in the order of the leaderboard's PDDL progress rate, with the names AgentBoard's table uses.
MODEL_LABELS: dict[str, str] = {
    "gpt-4": "GPT-4",
    "claude2": "Claude 2",
    "text-davinci-003": "text-davinci-003",
    "gpt-35-turbo": "GPT-3.5-Turbo",
    "gpt-35-turbo-16k": "GPT-3.5-Turbo-16k",
    "deepseek-67b": "DeepSeek-67B",
    "codellama-34b": "CodeLlama-34B",
    "lemur-70b": "Lemur-70B",
    "codellama-13b": "CodeLlama-13B",
    "llama2-70b": "Llama-2-70B",
    "vicuna-13b-16k": "Vicuna-13B-16k",
    "llama2-13b": "Llama-2-13B",
}
MODELS: tuple[str, ...] = tuple(MODEL_LABELS)

_DATA = "agentboard_results"
_LINE = re.compile(
    r"^\[EXP\] (?P<index>\d+): \[(?:sr|success rate)\]: (?P<success>[01]), "
    r"\[(?:score|progress rate)\]: (?P<progress>[0-9.eE+-]+), \[grounding_acc\]: (?P<grounding>[0-9.eE+-]+)"
    r"(?:, \[score_state\]: (?P<state>\[.*\]))?\s*$"
)


class PublishedError(ValueError):
    """A published-results file does not read as expected; the message names the file and line."""


@dataclass(frozen=True)
class PublishedEpisode:
    """One published episode, placed on our problem names."""

    model: str
    index: int  # the line's number in the file: AgentBoard's test order
    domain: str
    problem: str
    success: bool
    progress: float  # AgentBoard's progress rate: best fraction of goal conditions, from 0 at reset
    grounding_accuracy: float  # valid steps over steps
    rises: tuple[tuple[int, float], ...] | None  # (step, progress) where progress rose; None: not recorded

    def progress_at(self, k: int) -> float | None:
        """Progress after k steps (None when the file does not record the steps)."""
        if self.rises is None:
            return None
        return max((p for step, p in self.rises if step <= k), default=0.0)

    @property
    def full_progress_step(self) -> int | None:
        """The step at which every goal condition held (None: never, or not recorded)."""
        if self.rises is None or not self.success:
            return None
        return next((step for step, p in self.rises if p >= 1.0 - 1e-9), None)


@dataclass(frozen=True)
class PublishedScores:
    """A model's pooled numbers over a set of problems, AgentBoard's way (means over episodes; fractions)."""

    model: str
    episodes: int
    success_rate: float
    progress_rate: float
    grounding_accuracy: float


def model_label(model: str) -> str:
    """A model's name as AgentBoard's leaderboard writes it."""
    return MODEL_LABELS.get(model, model)


def _read(name: str) -> str:
    return resources.files(__package__).joinpath(_DATA, name).read_text(encoding="utf-8")


def problem_order() -> list[tuple[str, str]]:
    """(domain, problem) of each line index of the published files, from `index.csv`."""
    rows = list(csv.DictReader(io.StringIO(_read("index.csv"))))
    order = []
    for number, row in enumerate(rows):
        if int(row["index"]) != number:
            raise PublishedError(
                f"{_DATA}/index.csv, row {number + 2}: index {row['index']}, expected {number}"
            )
        order.append((row["domain"], row["problem"]))
    return order


def _rises(text: str, where: str) -> tuple[tuple[int, float], ...]:
    try:
        points = ast.literal_eval(text)
        return tuple((int(step) + 1, float(p)) for step, p in points)
    except (ValueError, SyntaxError, TypeError) as exc:
        raise PublishedError(f"{where}: score_state {text[:60]!r} is not a list of (step, progress)") from exc


def parse_results(
    text: str, model: str, order: Sequence[tuple[str, str]], source: str = ""
) -> list[PublishedEpisode]:
    """The episodes of one file's text. A file that logs no rise at all although some episode made
    progress did not record its steps (DeepSeek-67B's): its episodes get `rises=None`."""
    where = source or model
    found: list[tuple[int, bool, float, float, tuple[tuple[int, float], ...] | None]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _LINE.match(line.strip())
        if m is None:
            raise PublishedError(f"{where}, line {number}: not an [EXP] line: {line[:80]!r}")
        index = int(m["index"])
        if index != len(found):
            raise PublishedError(f"{where}, line {number}: episode {index}, expected {len(found)}")
        state = _rises(m["state"], f"{where}, line {number}") if m["state"] is not None else None
        found.append((index, m["success"] == "1", float(m["progress"]), float(m["grounding"]), state))
    if len(found) != len(order):
        raise PublishedError(f"{where}: {len(found)} episodes, expected {len(order)}")
    recorded = any(state for *_, state in found) or not any(progress > 0 for _, _, progress, _, _ in found)
    return [
        PublishedEpisode(
            model=model,
            index=index,
            domain=order[index][0],
            problem=order[index][1],
            success=success,
            progress=progress,
            grounding_accuracy=grounding,
            rises=state if recorded and state is not None else None,
        )
        for index, success, progress, grounding, state in found
    ]


def load_model(model: str) -> list[PublishedEpisode]:
    """The 60 episodes of one published model, in the file's order."""
    if model not in MODEL_LABELS:
        raise ValueError(f"no published results for model {model!r}; models: {', '.join(MODELS)}")
    name = f"{model}.txt"
    return parse_results(_read(name), model, problem_order(), source=f"{_DATA}/{name}")


def published_results(models: Iterable[str] = MODELS) -> dict[str, list[PublishedEpisode]]:
    """model -> its episodes, for every shipped model (leaderboard order)."""
    return {model: load_model(model) for model in models}


def pooled(
    episodes: Sequence[PublishedEpisode], problems: Iterable[tuple[str, str]] | None = None
) -> PublishedScores:
    """Means over the episodes (every domain pooled, as AgentBoard's PDDL task computes them), over
    `problems` ((domain, problem) pairs) only when given."""
    if problems is not None:
        keep = set(problems)
        episodes = [e for e in episodes if (e.domain, e.problem) in keep]
    if not episodes:
        raise ValueError("no published episode on the problems asked for")
    n = len(episodes)
    return PublishedScores(
        model=episodes[0].model,
        episodes=n,
        success_rate=sum(e.success for e in episodes) / n,
        progress_rate=sum(e.progress for e in episodes) / n,
        grounding_accuracy=sum(e.grounding_accuracy for e in episodes) / n,
    )
