"""Expert trajectories: the stored plan (or a fresh fd-sat plan) played on the problem's `World`.

The steps read exactly as an environment episode of the problem would (its first observation is the full
state, later ones follow the domain's observation mode, progress is the best so far), without building
an environment: the planner sits above the environment layer.
"""

from __future__ import annotations

from ..worlds.catalogue import DEFAULT_SPLIT
from .results import Action, ExpertStep
from .solving import solve_target
from .store import stored_plan
from .targets import replay, resolve_target, world_of

__all__ = ["expert_trajectory"]


def expert_trajectory(
    domain: str, problem: str, split: str = DEFAULT_SPLIT, *, timeout: float = 120, nice: int = 0
) -> list[ExpertStep]:
    """The expert's episode: the stored plan (or, without one, an fd-sat plan) played in the problem's world."""
    target = resolve_target(domain, problem, split)
    world = world_of(target)
    actions: list[Action] | None = stored_plan(target.domain, target.problem) if target.shipped else None
    played = None if actions is None else replay(world, actions, world.initial_state)
    if played is None or played.indices is None:  # no stored plan, or a stale one: plan afresh
        plan = solve_target(target, "fd-sat", timeout, nice=nice)
        if not plan.solved:
            raise RuntimeError(f"no expert plan for {target.domain}/{target.problem}: {plan.status.value}: {plan.message}")
        played = replay(world, plan.actions, world.initial_state)  # solve_target has replayed it: it applies
    assert played.indices is not None
    mode = world.templates.after_action  # the environment's default observation mode for this domain
    state = world.initial_state
    best = world.task.progress(state)
    observation = world.observe(state, "full")
    steps: list[ExpertStep] = []
    for index in played.indices:
        text = world.action_text(index)
        outcome = world.step(state, text, mode)
        if not outcome.valid:
            raise RuntimeError(f"expert plan step {text!r} rejected: {outcome.observation}")
        state = outcome.state
        best = max(best, world.task.progress(state))
        steps.append(ExpertStep(observation, text, outcome.observation, float(best)))
        observation = outcome.observation
    if not world.task.is_goal(state):
        raise RuntimeError(f"expert plan for {target.domain}/{target.problem} does not reach the goal")
    return steps
