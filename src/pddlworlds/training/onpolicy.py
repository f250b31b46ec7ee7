"""On-policy rounds (DAgger): the current adapter plays, the expert labels every call from where it is.

Trained only on the expert's own states, a model never sees the states its own mistakes lead to. Here
the real STANDARD and HiAgent play generated training problems with the current model (their real
prompts, free decoding; the agent acts on the model's reply), and `RelabelLLM` records every call the
agent makes with the reply the expert would give from the state the episode is in:
- an action call: the next action of an optimal plan from the current state (`expert.StateExpert`);
  for HiAgent with `Subgoal: <line>` first when the expert's first subgoal from this state (cut and named
  as the teacher cuts them, `agents.segments.segment_plan`) is not the subgoal the agent is working on;
- a summary call (HiAgent finishing a subgoal): `Met: yes|no` (yes when the facts the subgoal made true,
  named as the teacher names subgoals, restate its line) and the facts it made true;
- at a dead end (no plan from the state) the call is kept with `reply: null` and `label: "dead-end"`;
  training skips such calls.
The agent's own earlier, possibly wrong, actions stay in the prompts, so the model learns to recover.

In a setting that chooses among candidates (`agents.SETTINGS`: `state-choice`), a turn is the model's
pick (`choose`; HiAgent writes its subgoal line first, a `head` call that passes through unrecorded) and
is recorded once, as the prompt and the reply the expert would give: ` <action>` for STANDARD, `Action:
<action>` or `Subgoal: <line>\nAction: <action>` for HiAgent, ended by a line end as the candidates are.
Its subgoals follow the plan's own structure (`agents.segments.goal_segment`: the goal conditions the
plan's next segment makes true) and its summaries say what the finished subgoal made true (both as facts
in the compact prompt form, `agents.compact`). Where the world opens HiAgent's subgoals (`Setting.subgoals
== "chosen"`: the model's score picks among the goal conditions not yet true, scored after `Subgoal:`), a
turn is labelled as it is played: `Subgoal: <the condition the planner's next segment makes true>` before
the action on a turn that opens a subgoal, the bare `Action: <action>` under an open one.
`ExpertPlayer` plays in the model's place (the expert's pick, now and then, seeded, another legal action),
so the same labelling makes expert data and on-policy data.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from ..agents import compact, get_setting, make_agent, prompts
from ..agents.admissible import HEAD_STOP, SUBGOAL_HEAD
from ..agents.hiagent import HiAgent, same_subgoal
from ..agents.segments import goal_segment, goal_segment_facts, made_true, name_progress, segment_plan
from ..llm import LLM, Choice, ChoiceRank, Completion, Message
from .expert import StateExpert
from .teacher import MAX_SUBGOAL_STEPS

__all__ = ["CHOICE_END", "ExpertPlayer", "LabelledCall", "RelabelLLM", "StateTrail", "play_labelled"]

#: What ends a trained reply of a choosing setting: the line end every candidate ends with.
CHOICE_END = ("\n",)


@dataclass(frozen=True)
class LabelledCall:
    messages: tuple[Message, ...]
    reply: str | None  # the expert's reply from this state; None at a dead end
    label: str  # "expert" or "dead-end"
    purpose: str  # "action" or "summary"
    stop: tuple[str, ...]
    max_tokens: int
    model_reply: str  # what the model wrote (the agent acted on it)
    state: int


class StateTrail(gym.Wrapper):
    """Keeps the state after every step: `states[k]` is the state after step k (`states[0]` at reset).
    With `end_at_dead_end`, the episode is truncated once `dead_end` is set (by the labeller: no plan
    exists from the state, nor from any state after it)."""

    def __init__(self, env: gym.Env, end_at_dead_end: bool = False) -> None:
        super().__init__(env)
        self.states: list[int] = []
        self.end_at_dead_end = end_at_dead_end
        self.dead_end = False

    def reset(self, **kwargs: Any):
        result = self.env.reset(**kwargs)
        self.states = [self.env.unwrapped.state]
        self.dead_end = False
        return result

    def step(self, action: str):
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.states.append(self.env.unwrapped.state)
        return observation, reward, terminated, truncated or (self.end_at_dead_end and self.dead_end), info


class RelabelLLM:
    """An `LLM` (and, over a model that scores texts, a `CandidateScorer`): the model answers and the agent
    acts on that; each call is recorded with the expert's reply from the episode's current state. `agent`
    is set once the agent exists; `setting` is the agent's."""

    def __init__(self, model: LLM, expert: StateExpert, trail: StateTrail, setting: str = "free") -> None:
        self.model = model
        self.expert = expert
        self.trail = trail
        self.setting = get_setting(setting)
        self.agent: Any = None
        self.calls: list[LabelledCall] = []

    @property
    def model_id(self) -> str:
        return self.model.model_id

    @property
    def in_context_example(self) -> bool:
        return bool(getattr(self.model, "in_context_example", True))

    def count_tokens(self, text: str) -> int:
        return self.model.count_tokens(text)

    def chat(
        self, messages: Sequence[Message], *, max_tokens: int = 128, stop: Sequence[str] = (), temperature: float = 0.0
    ) -> Completion:
        completion = self.model.chat(messages, max_tokens=max_tokens, stop=stop, temperature=temperature)
        if tuple(stop) == HEAD_STOP:  # HiAgent's subgoal line before a pick: its label is the pick's
            return completion
        purpose = "action" if tuple(stop) == tuple(prompts.ACTION_STOP) else "summary"
        state = self.trail.unwrapped.state
        reply = self.action_label(state) if purpose == "action" else self.summary_label(state)
        self.calls.append(LabelledCall(tuple(messages), reply, "expert" if reply is not None else "dead-end",
                                       purpose, tuple(stop), int(max_tokens), completion.text, state))
        return completion

    def choose(
        self, messages: Sequence[Message], continuations: Sequence[str], prefix: str = "", rank: ChoiceRank | None = None
    ) -> Choice:
        if prefix == SUBGOAL_HEAD:  # a chosen subgoal: the pick after it carries the label (as a written one's)
            return self.model.choose(messages, continuations, prefix=prefix, rank=rank)  # type: ignore[attr-defined]
        state = self.trail.unwrapped.state
        reply = self.action_label(state, prefix)
        choice = self.model.choose(messages, continuations, prefix=prefix, rank=rank)  # type: ignore[attr-defined]
        written = prefix + continuations[choice.index].rstrip("\n")
        self.calls.append(LabelledCall(tuple(messages), reply, "expert" if reply is not None else "dead-end",
                                       "action", CHOICE_END, 0, written, state))
        return choice

    def action_label(self, state: int, prefix: str | None = None) -> str | None:
        """The reply the expert gives to an action call from `state` (None at a dead end). A chosen
        subgoal's action pick (`prefix`: what the world wrote before the action) is labelled as it is played:
        `Subgoal: <the expert's pick>` first where the world opened a subgoal this turn (the head scored
        after `Subgoal:` learns the planner's segment), the bare action where the subgoal goes on."""
        plan = None if self.trail.dead_end else self.expert.plan_from(state)  # no way back from a dead end
        if not plan:  # a dead end (the goal ends the episode before any call)
            self.trail.dead_end = True
            return None
        world = self.expert.world
        action = world.action_text(plan[0])
        if not isinstance(self.agent, HiAgent):
            return f" {action}"
        if self.setting.subgoals == "chosen" and prefix is not None:
            if not prefix.startswith(SUBGOAL_HEAD):
                return f"Action: {action}"
            return f"{SUBGOAL_HEAD} {self.subgoal_pick(state)}\nAction: {action}"
        first = self._first_subgoal(plan, state)
        current = self.agent.wm.current
        if current is not None and current.text and same_subgoal(current.text, first):
            return f"Action: {action}"
        return f"Subgoal: {first}\nAction: {action}"

    def _first_subgoal(self, plan: Sequence[int], state: int) -> str:
        """The expert's first subgoal of `plan` from `state`, named as the teacher names it."""
        world = self.expert.world
        if self.setting.chooses and self.setting.changes_to_summariser:  # the plan's own structure
            if self.setting.prompt_form == "compact":  # the goal conditions it makes true, as facts
                return goal_segment_facts(world, plan, state)
            return goal_segment(world, plan, state).text
        return segment_plan(world, plan, MAX_SUBGOAL_STEPS, same=same_subgoal, start=state)[0].text

    def subgoal_label(self, state: int) -> str | None:
        """The expert's next subgoal from `state` (None at a dead end): what a chosen-subgoal turn should
        pick (`Setting.subgoals == "chosen"`)."""
        plan = None if self.trail.dead_end else self.expert.plan_from(state)
        return self._first_subgoal(plan, state) if plan else None

    def subgoal_pick(self, state: int) -> str:
        """The goal condition not yet true that a chosen-subgoal turn should pick in `state`: the first
        (in the world's order) that the expert's next segment makes true; the first at a dead end."""
        options = [text for text, _ in compact.open_goal_conditions(self.trail.unwrapped.world, state)]
        named = compact.conditions_of(self.subgoal_label(state) or "")
        return next((text for text in options if text in named), options[0])

    def summary_label(self, state: int) -> str:
        """The reply the expert gives to the summary call of the subgoal being finished."""
        subgoal = self.agent.wm.subgoals[-1]  # the one being finished
        steps = [p.step for p in subgoal.env_pairs]
        states = self.trail.states
        before = states[steps[0] - 1] if steps else state
        last = states[steps[-1] - 1] if steps else state
        world = self.expert.world
        if self.setting.changes_to_summariser:
            facts_form = self.setting.prompt_form == "compact"
            met = subgoal.text and _goal_line_holds(world, before, state, subgoal.text, facts_form)
            facts = compact.changed_text(world, before, state) if facts_form else made_true(world, before, state)
            return f"Met: {'yes' if met else 'no'}\nSummary: {facts}"
        named, summary = name_progress(world, before, last, state)
        met = "yes" if subgoal.text and same_subgoal(subgoal.text, named) else "no"
        return f"Met: {met}\nSummary: {summary}"


def _goal_line_holds(world: Any, before: int, after: int, text: str, facts: bool = False) -> bool:
    """Whether `text` names (as the teacher names subgoals; as facts with `facts`) goal conditions that
    went from false at `before` to true at `after`, all of them holding at `after`."""
    task = world.task
    new = task.goal_pos & after & ~before
    if not new:
        return False
    atoms = [task.atoms[i] for i in range(len(task.atoms)) if new >> i & 1]
    if facts:
        lines = [compact.atoms_text(atoms), *(compact.atoms_text([atom]) for atom in atoms)]
    else:
        named = [prompts.clause(world.templates.sentence(atom)) for atom in atoms]
        lines = [_join(named), *named]
    return any(same_subgoal(text, line) for line in lines)


def _join(lines: list[str]) -> str:
    from ..worlds.text import join_and

    return join_and(lines)


class ExpertPlayer:
    """The expert in the model's place, for a choosing setting: each pick is the expert's next action from
    the episode's state, except that with chance `detour` (seeded by `rng`) it is another legal action, so
    the data holds states off the expert's path; HiAgent's subgoal lines and summaries are the teacher's
    (`labels`, the `RelabelLLM` recording the episode)."""

    model_id = "expert"
    in_context_example = False

    def __init__(self, labels: RelabelLLM, rng: random.Random, detour: float = 0.15) -> None:
        self.labels = labels
        self.rng = rng
        self.detour = detour

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def chat(
        self, messages: Sequence[Message], *, max_tokens: int = 128, stop: Sequence[str] = (), temperature: float = 0.0
    ) -> Completion:
        state = self.labels.trail.unwrapped.state
        if tuple(stop) == HEAD_STOP:
            label = self.labels.action_label(state) or "Action:"
            head = label.partition("Action:")[0]  # "Subgoal: <line>\n" or nothing (the subgoal goes on)
            return Completion(head, 0, 0, 0.0)
        return Completion(self.labels.summary_label(state), 0, 0, 0.0)

    def choose(
        self, messages: Sequence[Message], continuations: Sequence[str], prefix: str = "", rank: ChoiceRank | None = None
    ) -> Choice:
        """The expert's pick (or, at the detour rate, another); every score given, so `rank` changes nothing.
        A chosen subgoal's turn picks the candidate the expert's next subgoal names (else the first)."""
        state = self.labels.trail.unwrapped.state
        if prefix == SUBGOAL_HEAD:
            pick = self.labels.subgoal_pick(state)
            index = next((i for i, c in enumerate(continuations) if c.strip() == pick), 0)
            scores = tuple(0.0 if i == index else -1.0 for i in range(len(continuations)))
            return Choice(index, scores, 0, 0, 0.0, tuple(1 for _ in continuations))
        label = self.labels.action_label(state)
        wanted = f" {label.rpartition('Action: ')[2] if 'Action: ' in label else label.strip()}\n" if label else None
        index = continuations.index(wanted) if wanted in continuations else self.rng.randrange(len(continuations))
        if wanted is not None and self.rng.random() < self.detour:
            others = [i for i, c in enumerate(continuations) if i != index and "retrieve(" not in c]
            index = self.rng.choice(others) if others else index
        scores = tuple(0.0 if i == index else -1.0 for i in range(len(continuations)))
        return Choice(index, scores, 0, 0, 0.0, tuple(1 for _ in continuations))


def play_labelled(
    env: gym.Env,
    model: LLM | None,
    agent_name: str,
    expert: StateExpert,
    seed: int = 0,
    *,
    setting: str = "free",
    detour: float = 0.15,
) -> tuple[Any, list[LabelledCall]]:
    """Play one episode of `agent_name` with `model` on `env` in `setting`; (its record, every call with its
    label). `model` None: the expert plays (`ExpertPlayer`, a choosing setting only), with detours seeded by
    `seed` and the episode."""
    trail = StateTrail(env, end_at_dead_end=model is None)  # the expert playing on from a dead end teaches nothing
    llm = RelabelLLM(model, expert, trail, setting)  # type: ignore[arg-type]
    if model is None:
        if not llm.setting.chooses:
            raise ValueError(f"the expert plays as the model only in a setting that chooses, not {setting!r}")
        problem = getattr(env.unwrapped, "problem_names", ["?"])[0]
        llm.model = ExpertPlayer(llm, random.Random(f"{seed}/{agent_name}/{problem}"), detour)  # type: ignore[assignment]
    agent = make_agent(agent_name, llm, setting=setting)
    llm.agent = agent
    record = agent.run(trail, seed=seed)
    return record, llm.calls
