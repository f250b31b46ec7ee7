"""The `info` dict the environment returns from `reset` and `step`, key by key (`env.StepInfo` re-exports
it): its own module so that the keys' meanings are read in one place, apart from the stepping code."""

from __future__ import annotations

from typing import TypedDict

__all__ = ["StepInfo"]


class _ListingInfo(TypedDict, total=False):
    #: After a "check valid actions" step only: the executable actions, in the profile's wording.
    valid_actions: list[str]
    #: Only when the environment offers the `impossible` action: whether the agent claimed it.
    claimed_impossible: bool


class StepInfo(_ListingInfo):
    """The `info` dict of `reset` and `step`: every key the environment returns, and what it means.

    (`valid_actions`, from the base, is present only after a "check valid actions" step.)
    """

    #: The domain's name (the folder name for shipped domains and for PDDL of your own).
    domain: str
    #: The problem split ("agentboard", "generated", ..., or "custom" for files given to `make_env`).
    split: str
    #: The problem being played (its file name without ".pddl").
    problem: str
    #: The goal in words, as the profile writes it.
    goal: str
    #: Steps taken this episode (0 at reset); meta-actions and invalid actions count.
    step: int
    #: Best fraction of goal conditions reached so far, under the profile's rule (see `profile`).
    progress: float
    #: Whether the goal has been reached (`progress` is 1.0).
    success: bool
    #: Whether the last text was executed (an action, or a meta-action); False for invalid text.
    action_valid: bool
    #: "reset", "action", "invalid", "check valid actions" or "look around".
    action_kind: str
    #: The canonical text of the parsed action (also when it could not be applied), else None.
    action: str | None
    #: Why the text was invalid ("unknown_verb", "wrong_arity", "precondition", ...), else None.
    error: str | None
    #: Length of the stored optimal plan of this problem, None if unknown: the shortest plan's, also on a
    #: domain with action costs (where the cheapest plan may be longer).
    optimal_length: int | None
    #: On a domain with action costs, the cost of the stored cheapest plan (proven optimal); None without
    #: action costs (a plan's cost is then its length) or when unknown.
    optimal_cost: int | None
    #: The profile the environment plays by ("pddlworlds" or "agentboard").
    profile: str
    #: False when a stored proof says no plan exists, True when a plan is stored, None if unknown.
    solvable: bool | None
    #: What the actions applied this episode cost in all: their `total-cost` increases in a domain with
    #: action costs (`:metric minimize (total-cost)`), else one per applied action.
    cost: int
    #: Steps this episode gets before the environment truncates it: `step_budget` when given, else the
    #: problem's own (a ladder band's, 30 elsewhere: `worlds.ladder.step_budget`); None: no limit.
    step_budget: int | None
