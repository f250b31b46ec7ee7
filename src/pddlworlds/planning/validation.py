"""`validate_plan`: a plan replayed as text on the problem's `World`, and checked by unified-planning."""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..worlds.catalogue import DEFAULT_SPLIT
from ..worlds.grounding import Atom
from ..worlds.pddl import PDDLError
from .results import Action, PlanCheck, action_pddl
from .store import as_actions
from .targets import resolve_target, world_of
from .up_adapter import read_problem, up_validate

__all__ = ["validate_plan"]


def validate_plan(
    domain: str | os.PathLike,
    problem: str | os.PathLike,
    actions: Iterable[Action | str],
    split: str = DEFAULT_SPLIT,
    *,
    initial_atoms: Iterable[Atom] | None = None,
    use_up: bool = True,
) -> PlanCheck:
    """Replay `actions` ((schema, args) pairs or IPC plan text) through the text world and with unified-planning.

    Each step is played as the environment's text of the action, so a plan passes only if the text parser
    reads every action back as itself.
    """
    target = resolve_target(domain, problem, split)
    actions = as_actions([actions] if isinstance(actions, str) else actions)
    world = world_of(target)
    mode = world.templates.after_action
    state = world.initial_state if initial_atoms is None else world.task.state_of(initial_atoms)
    steps_valid = 0
    message = ""
    for step, action in enumerate(actions, start=1):
        index = world.action_of(*action)
        if index is None:
            message = f"step {step}: {action_pddl(action)} is not an action of this problem"
            break
        outcome = world.step(state, world.action_text(index), mode)
        expected = world.task.apply(state, index)
        if not outcome.valid:
            message = f"step {step}: {action_pddl(action)} invalid: {outcome.observation}"
            break
        state = outcome.state
        if state != expected:
            message = f"step {step}: {action_pddl(action)} parsed as {outcome.action!r}, a different action"
            break
        steps_valid += 1
    goal = steps_valid == len(actions) and world.task.is_goal(state)
    if not message and not goal:
        message = "the goal does not hold at the end"
    env_valid = not message
    up_valid = None
    if use_up:
        try:
            problem_up = read_problem(target.domain_file, target.problem_file, initial_atoms)
        except PDDLError as exc:  # a file unified-planning's reader refuses: our check stands alone
            up_valid, up_message = None, f"unified-planning cannot read the files ({exc})"
        else:
            up_valid, up_message = up_validate(problem_up, actions)
        if up_valid is None:
            message = (message + "; " if message else "") + f"not checked by unified-planning: {up_message}"
        elif not up_valid:
            message = (message + "; " if message else "") + f"unified-planning: {up_message or 'invalid plan'}"
    return PlanCheck(env_valid and up_valid is not False, env_valid, up_valid, goal, steps_valid, message)
