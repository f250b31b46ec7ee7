"""The settings an LLM agent plays in: what the environment shows, what the prompt holds, how the action is
picked. One name per setting; an evaluation records it in `config.json` and the report's header.

- `free` (the default): the published form. The model writes its action as free text; the environment
  shows each domain's default observations (the full state in Blocksworld and Gripper, what changed in
  Tyreworld and Barman); numbers from this setting may stand beside published ones (in the AgentBoard
  profile).
- `admissible`: the same prompts and observations, but the model's summed log-probability of each whole
  reply picks among the valid actions and the meta-actions the prompt offers.
- `state-choice`: the form a small model can learn. The environment shows the current state after every
  action in every domain, so the last observation in the prompt is always the state the decision is made
  in (a Markov view), and the model picks among the actions legal in that state by a score normalised for
  length (`choice_score`), so a short candidate does not win by being short. The state after an action is
  every fact an action can change (observation mode "fluents"); the facts no action changes (Barman's
  recipes, "ball1 is a ball") are in the first observation, which the prompt always holds. That halves
  the observations of Gripper and Barman against mode "full" (also accepted: `--observation-mode full`). Meta-actions that only
  describe (`check valid actions`, `look around`) are not offered: the state is in view and every
  candidate is legal. HiAgent's `retrieve(k)` stays (it is part of its method), and its summariser reads
  each step of a finished subgoal as the action and what it changed. No in-context example is shown
  (the domains' examples show invalid actions and `check valid actions`, which this setting has no
  place for); the system text states the reply format.
- `state-choice-compact`: `state-choice` for a model trained in it, in the compact prompt form
  (`compact.py`): no action list, the goal, the facts no action changes, the history one line a step,
  the current state as facts and the candidates listed; about a tenth of `state-choice`'s tokens a call.
  The same candidates, scores and summariser calls; a prompt of its own, so a model is trained for it.
- `state-choice-diffs`: the compact form with the state given once, at the start, and each step's line
  saying what it made true and what it made false (`> unstack b1 from b3 -> holding b1, clear b3; not:
  on b1 b3, clear b1, handempty`); no State or Candidates block. A call adds one line to the one before it,
  so a prompt cache evaluates about 20-40 new tokens a step, and a trained episode is one short sequence
  (`training.packing`); the model has to track the state from the changes. HiAgent shows, after a finished
  subgoal's summary, the state its open subgoal started in.
- `state-choice-subgoals`: the diffs form with HiAgent's subgoal as a choice too (`subgoals="chosen"`): the
  world supplies the candidates (each goal condition not yet true, less those another of them comes before:
  `worlds/goal_orders.py`, a block not stacked on one that must still move), the model's score picks one, and the
  world says when it is finished: once its condition holds, once another goal condition comes true under it
  (where the teacher's segments end: the choice is made again), or after `subgoal_steps` steps without it
  (then it is folded as not met and the choice is made again, which may pick it again). Its summary is written
  from the world (`world_summary`): the facts its steps made true, met or not by the same check, with no
  model call. HiAgent as published writes its subgoal and decides when it is done; this is the embedded
  model's form of the same memory (a small model learns to pick a goal condition, not when to stop).
- `state-choice-subgoals-taught`: the same choice, with the summary written by the model's summariser call,
  as taught (`Met: ...`, `Summary: <facts>`).

Only backends that score given texts (the embedded model) play `admissible` and `state-choice`; neither
is ever set beside published numbers, which are all free decoding.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import Registry

__all__ = ["DEFAULT_SETTING", "SETTINGS", "Setting", "get_setting"]


@dataclass(frozen=True)
class Setting:
    """One setting: `observation_modes` the environment may use (the first is the default; none: the
    domain's default), `decoding` (how the action is picked: "free" or "admissible"), `choice_score` (the
    rule that ranks candidates, a name in `admissible.CHOICE_SCORES`), whether the prompt keeps the current
    state in view, whether the describing meta-actions are offered, and whether the summariser reads
    changes instead of whole observations, and the prompt form ("full" or "compact")."""

    name: str
    observation_modes: tuple[str, ...]
    decoding: str
    choice_score: str = "sum"
    describe_actions: bool = True  # `check valid actions` (and `look around` where offered) are candidates
    changes_to_summariser: bool = False
    example: bool = True  # the domain's in-context example is shown (unless the model or the caller says not)
    state_in_view: bool = False  # the prompt's last observation is always the current state
    comparable: bool = False  # may stand beside published numbers (with the AgentBoard profile)
    summary: str = ""
    prompt_form: str = "full"  # "full" (prompts.py) or "compact" (compact.py: a model trained in the form)
    diffs: bool = False  # compact form: the start state once and each step's changes, no State block
    subgoals: str = "written"  # HiAgent's subgoal: "written" by the model, or "chosen" among the world's candidates
    world_summary: bool = False  # a finished subgoal's summary and verdict come from the world, not a model call
    subgoal_steps: int = 10  # "chosen": steps a subgoal may stay open without being met before it is folded

    @property
    def observation_mode(self) -> str | None:
        """The environment's observation mode by default (None: each domain's own)."""
        return self.observation_modes[0] if self.observation_modes else None

    @property
    def chooses(self) -> bool:
        """The model picks among given candidates (needs a backend that scores texts)."""
        return self.decoding == "admissible"


DEFAULT_SETTING = "free"

SETTINGS: Registry[Setting] = Registry("setting", {
    "free": Setting(
        "free", (), "free", comparable=True,
        summary="free decoding, each domain's default observations (the published form)",
    ),
    "admissible": Setting(
        "admissible", (), "admissible", "sum",
        summary="the model's summed log-probability of each whole reply picks among the valid actions and "
        "the meta-actions the prompt offers; each domain's default observations",
    ),
    "state-choice": Setting(
        "state-choice", ("fluents", "full"), "admissible", "token-mean", describe_actions=False,
        changes_to_summariser=True, example=False, state_in_view=True,
        summary="the current state after every action; the model picks among the legal actions (and "
        "HiAgent's retrievals) by its mean log-probability per token",
    ),
    "state-choice-compact": Setting(
        "state-choice-compact", ("fluents", "full"), "admissible", "token-mean", describe_actions=False,
        changes_to_summariser=True, example=False, state_in_view=True, prompt_form="compact",
        summary="state-choice in the compact prompt form (goal, fixed facts, one line a step, the current "
        "state as facts, the candidates listed), for a model trained in that form",
    ),
    "state-choice-diffs": Setting(
        "state-choice-diffs", ("fluents", "full"), "admissible", "token-mean", describe_actions=False,
        changes_to_summariser=True, example=False, prompt_form="compact", diffs=True,
        summary="state-choice in the compact form with the start state once and each step's changes (what "
        "it made true and false), no state or candidates block: a call adds one line to the last",
    ),
    "state-choice-subgoals": Setting(
        "state-choice-subgoals", ("fluents", "full"), "admissible", "token-mean", describe_actions=False,
        changes_to_summariser=True, example=False, prompt_form="compact", diffs=True, subgoals="chosen",
        world_summary=True,
        summary="state-choice-diffs with HiAgent's subgoal picked among the goal conditions not yet true "
        "that no other open one comes before, "
        "finished when it holds, when another goal condition comes true, or after 10 steps, summarised "
        "from what its steps made true",
    ),
    "state-choice-subgoals-taught": Setting(
        "state-choice-subgoals-taught", ("fluents", "full"), "admissible", "token-mean", describe_actions=False,
        changes_to_summariser=True, example=False, prompt_form="compact", diffs=True, subgoals="chosen",
        summary="state-choice-subgoals with each finished subgoal summarised by the model's summariser call",
    ),
})


def get_setting(name: str) -> Setting:
    """The setting called `name` (an unknown name raises, listing the settings)."""
    return SETTINGS[name]
