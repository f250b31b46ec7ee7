"""What planner calls return: statuses and plain dataclasses, so callers never see engine objects."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

__all__ = ["Action", "ExpertStep", "Plan", "PlanCheck", "PlanStatus", "action_pddl"]

#: A ground action as (schema, arguments), names lower case as in IPC plans.
Action = tuple[str, tuple[str, ...]]


def action_pddl(action: Action) -> str:
    """`(schema arg1 arg2)`, as one line of an IPC plan."""
    schema, args = action
    return "(" + " ".join((schema, *args)) + ")"


class PlanStatus(str, enum.Enum):
    SOLVED_OPTIMALLY = "solved_optimally"
    SOLVED_SATISFICING = "solved_satisficing"
    UNSOLVABLE = "unsolvable"
    TIMEOUT = "timeout"
    ERROR = "error"

    @property
    def solved(self) -> bool:
        return self in (PlanStatus.SOLVED_OPTIMALLY, PlanStatus.SOLVED_SATISFICING)


@dataclass
class Plan:
    """The outcome of one planner call; `actions` and `text` are empty unless solved."""

    domain: str
    problem: str
    planner: str
    status: PlanStatus
    actions: tuple[Action, ...] = ()
    text: tuple[str, ...] = ()  # the environment's text of each action
    length: int | None = None
    #: The plan's cost: the sum of its ground actions' costs (its length where the task has no action costs).
    cost: int | None = None
    optimal: bool = False  # cost-optimal where the task has action costs
    time_s: float = 0.0  # wall clock of the whole call, child process start-up included
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)  # engine, engine status, log tail, worker pid

    @property
    def solved(self) -> bool:
        return self.status.solved

    @property
    def pddl(self) -> list[str]:
        return [action_pddl(a) for a in self.actions]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        d["actions"] = [[s, list(a)] for s, a in self.actions]
        d["text"] = list(self.text)
        return d


@dataclass
class PlanCheck:
    """What `validate_plan` found; `valid` needs both the world replay and unified-planning."""

    valid: bool
    env_valid: bool  # every step was a valid action in the text world and the goal holds at the end
    up_valid: bool | None  # unified-planning's PlanValidator (None when not run)
    goal_reached: bool
    steps_valid: int  # how many steps replayed before the first invalid one
    message: str = ""

    def __bool__(self) -> bool:
        return self.valid


class ExpertStep(NamedTuple):
    observation: str
    action: str
    next_observation: str
    progress: float
