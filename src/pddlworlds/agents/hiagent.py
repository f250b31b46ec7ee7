"""HiAgent: working memory in subgoal chunks, with summaries of finished subgoals and trajectory retrieval.

Each turn the model writes `Subgoal: ...` and `Action: ...` (a new subgoal) or only `Action: ...`
(continuing the current one); a subgoal that restates the current one in other words continues it
(`sameness.same_subgoal`: the same names in the same order, and words that say the same thing). When a new subgoal is written, the finished one's
action/observation pairs leave the prompt and a summary takes their place; the summary comes from the
summariser, a separate call with its own prompt that sees only the finished subgoal and its pairs and
says whether it was met (yes, no, or unknown when the reply does not say). `Action: retrieve(k)` shows
finished subgoal k's pairs at k's place instead of its summary until the current subgoal finishes, and
asks again without an environment step; after `max_retrievals_in_a_row` of them the prompt asks for a
world action, and a further `retrieve` goes to the world, which rejects it.

In a setting with chosen subgoals (`state-choice-subgoals`, `Setting.subgoals == "chosen"`) the model
does not write the subgoal: while the open one is unmet, no other goal condition has come true under it, and
it is younger than `Setting.subgoal_steps` steps it goes on (`Action:` alone), else the world lists the goal
conditions not yet true, less those another of them comes before (`worlds/goal_orders.py`: a block put on
one that must still move), and the model's score picks one (`Subgoal: <condition>`, on the same prompt as the
action), after which the open one is folded:
its summary is then the world's (what its steps made true, met when its condition holds) or, in
`state-choice-subgoals-taught`, the summariser's.

Ablations (flags of this one class):
- `summarize=False` (w/o OS): no summary call; the summary is the subgoal's last observation;
- `retrieve=False` (w/o TR): retrieval is not offered, and `retrieve(k)` goes to the world as an action;
- `hide_finished=False` (task decomposition): subgoals are written but nothing is hidden, so there is
  neither summarisation nor retrieval.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from ..env import StepInfo
from ..llm import LLM, Message
from ..records import HEAD_PURPOSE, LLMCall
from ..registry import Registry
from . import compact, prompts
from .admissible import SUBGOAL_HEAD, choose_action
from .llm_agent import ERROR_ACTION, Insights, LLMAgent
from .memory import Pair, Subgoal, WorkingMemory
from .parsing import Reply, parse_reply, parse_retrieve, parse_summary
from .sameness import same_subgoal
from .settings import DEFAULT_SETTING

__all__ = ["HIAGENT_CONFIGS", "HiAgent", "hiagent_name", "same_subgoal"]


#: HiAgent configurations by name: (summarize, retrieve, hide_finished), the flags as the agent keeps them
#: (with nothing hidden there is nothing to summarise or retrieve, so those are off).
HIAGENT_CONFIGS: Registry[tuple[bool, bool, bool]] = Registry("HiAgent configuration", {
    "hiagent": (True, True, True),
    "hiagent-no-summary": (False, True, True),
    "hiagent-no-retrieval": (True, False, True),
    "hiagent-no-summary-no-retrieval": (False, False, True),
    "task-decomposition": (False, False, False),
})
_NAMES = {flags: name for name, flags in HIAGENT_CONFIGS.items()}


#: When a chosen subgoal ends (recorded in the agent's flags): its condition holds, another goal condition
#: came true under it, or `Setting.subgoal_steps` steps passed.
SUBGOAL_ENDS = "met, other goal progress, or subgoal_steps"
#: What a chosen subgoal is picked among (recorded in the agent's flags): `compact.open_goal_conditions`.
SUBGOAL_CANDIDATES = "open goal conditions no other open one comes before (reasonable orders)"


def hiagent_name(*, summarize: bool, retrieve: bool, hide_finished: bool) -> str:
    return _NAMES[(summarize and hide_finished, retrieve and hide_finished, hide_finished)]


class HiAgent(LLMAgent):
    def __init__(
        self,
        llm: LLM,
        *,
        summarize: bool = True,
        retrieve: bool = True,
        hide_finished: bool = True,
        max_retrievals_in_a_row: int = 2,
        max_tokens: int = 96,
        summary_max_tokens: int = 96,
        example: bool | None = None,
        name: str | None = None,
        insights: Insights = None,
        setting: str = DEFAULT_SETTING,
        choice_score: str | None = None,
        score_all: bool = False,
    ):
        super().__init__(
            llm, max_tokens=max_tokens, example=example, insights=insights, setting=setting, choice_score=choice_score,
            score_all=score_all,
        )
        self.hide_finished = hide_finished
        # With nothing hidden there is nothing to summarise or to bring back.
        self.summarize = summarize and hide_finished
        self.retrieve = retrieve and hide_finished
        self.max_retrievals_in_a_row = max(0, int(max_retrievals_in_a_row))
        self.summary_max_tokens = summary_max_tokens
        self.name = name or hiagent_name(summarize=summarize, retrieve=retrieve, hide_finished=hide_finished)
        self.wm = WorkingMemory()
        self._state = ""

    def flags(self) -> dict[str, Any]:
        return {
            **super().flags(),
            "summarize": self.summarize,
            "retrieve": self.retrieve,
            "hide_finished": self.hide_finished,
            "max_retrievals_in_a_row": self.max_retrievals_in_a_row,
            "summary_max_tokens": self.summary_max_tokens,
            **({"subgoal_steps": self.setting.subgoal_steps, "subgoal_ends": SUBGOAL_ENDS,
                "subgoal_candidates": SUBGOAL_CANDIDATES}
               if self.setting.subgoals == "chosen" else {}),
        }

    def _system_text(self, world) -> str:
        return prompts.hiagent_system(
            world,
            self.example,
            look_around=self.look_around,
            hide_finished=self.hide_finished,
            summarize=self.summarize,
            retrieve=self.retrieve,
            describe=self.setting.describe_actions,
        )

    def _compact_system(self) -> str:
        return compact.hiagent_system(retrieve=self.retrieve, listed=not self.setting.diffs)

    def reset(self, observation: str, info: StepInfo, env: gym.Env, seed: int | None = None) -> None:
        super().reset(observation, info, env, seed)
        self.wm = WorkingMemory()
        self._state = observation  # the last full observation, for what a step made true (state-choice)

    def memory(self) -> list[dict[str, Any]]:
        return self.wm.to_list()

    def memory_text(self) -> str:
        """The working-memory part of the prompt, exactly as it is sent."""
        if self.compact:
            return compact.render_subgoals(self.wm.subgoals, hide_finished=self.hide_finished, summarize=self.summarize,
                                           start_states=self.setting.diffs)
        return prompts.render_subgoals(self.wm.subgoals, hide_finished=self.hide_finished, summarize=self.summarize)

    # ---- one turn ------------------------------------------------------------------------------

    def act(self, observation: str, info: StepInfo) -> str:
        calls: list[LLMCall] = []
        retrievals = 0
        while True:
            forced = self.retrieve and retrievals >= self.max_retrievals_in_a_row
            current = self.wm.current
            if self.compact:
                cue = compact.hiagent_cue()
            else:
                cue = prompts.hiagent_cue(current.index if current else None, forced=forced)
            offered = [s.index for s in self.wm.finished()] if self.retrieve and not forced else []
            memory, messages = self.view(self.memory_text(), observation, cue, offered)
            chosen = None
            if self.setting.subgoals == "chosen":  # the world's candidates; the model's score picks
                chosen = self._choose_subgoal(messages, calls)
                head = f"{SUBGOAL_HEAD} {chosen[0]}\nAction:" if chosen else "Action:"
                reply, call = self._admissible_reply(messages, calls, head=head, retrievable=offered)
            elif self.setting.chooses:  # the model writes its subgoal line; the action is chosen
                reply, call = self._admissible_reply(messages, calls, head=True, retrievable=offered)
            else:
                completion, call = self._call("action", messages, self.max_tokens, prompts.ACTION_STOP)
                calls.append(call)
                reply = Reply(None, ERROR_ACTION) if completion.error else parse_reply(completion.text)
            is_retrieval, k = parse_retrieve(reply.action)
            retrieving = self.retrieve and is_retrieval and not forced
            if retrieving:
                call.purpose = "retrieve"
            if chosen is not None:
                self._open_chosen(*chosen, calls)
            elif reply.subgoal is not None:
                self._new_subgoal(reply.subgoal, calls)
            subgoal = self.wm.ensure_current()
            if retrieving:
                self._retrieve(subgoal, reply.action, k)
                retrievals += 1
                continue
            self._set_details(call, calls, memory, subgoal_index=subgoal.index, subgoal=subgoal.text)
            return reply.action

    def observe(self, action: str, observation: str, info: StepInfo) -> None:
        """Record the step; refused retrievals before it leave the prompt (they said nothing about the
        world, and a model that keeps asking would otherwise fill its memory with them)."""
        subgoal = self.wm.ensure_current()
        subgoal.pairs = [p for p in subgoal.pairs if not (p.kind == "retrieval" and p.retrieved is None)]
        change = self.step_change()
        if change is None and self.setting.changes_to_summariser:
            change = prompts.change_text(self._state, observation)
        subgoal.pairs.append(Pair(action, observation, step=int(info["step"]), change=change))
        self._state = observation

    # ---- subgoals ------------------------------------------------------------------------------

    def _new_subgoal(self, text: str, calls: list[LLMCall]) -> None:
        current = self.wm.current
        if current is not None:
            if same_subgoal(current.text, text):
                return  # the model restated the subgoal it is working on
            if not current.env_pairs:  # nothing was done under it: the new statement replaces it
                current.text = text
                return
            self._finish(current, calls)
        self._opened(self.wm.open(text))

    def _opened(self, subgoal: Subgoal) -> Subgoal:
        """Note the state `subgoal` starts in (for the world's verdict and summary, and, in the diffs
        variant, shown once its predecessors are folded)."""
        base = self._env.unwrapped
        subgoal.start_state = int(base.state)
        if self.setting.diffs:
            subgoal.start_facts = compact.state_lines(base.world, subgoal.start_state)
        return subgoal

    def _choose_subgoal(self, messages: list[Message], calls: list[LLMCall]) -> tuple[str, int] | None:
        """A chosen subgoal's turn (`Setting.subgoals == "chosen"`): None while the open subgoal is unmet, no
        other goal condition not true where it started has come true, and it is younger than `subgoal_steps`
        steps (it goes on); else the goal condition not yet true that the model's score puts first (its line
        and mask), scored as the line after `Subgoal:` on the prompt the action is chosen on. One candidate
        needs no call; a call the backend cannot score keeps the subgoal. (The second rule cuts the agent's
        steps where the teacher cuts the planner's, `segments.goal_segment`: the world moved on, so the
        subgoal is chosen again.)"""
        base = self._env.unwrapped
        state = int(base.state)
        current = self.wm.current
        going_on = current is not None and current.text and not current.holds_in(state)
        if going_on and current.start_state is not None:  # another goal condition came true under it
            going_on = not base.world.task.goal_pos & state & ~current.start_state & ~current.atoms
        if going_on and len(current.env_pairs) < self.setting.subgoal_steps:
            return None
        options = compact.open_goal_conditions(base.world, state)
        if len(options) == 1:
            return options[0]
        pick = choose_action(self.llm, messages, [text for text, _ in options], head=SUBGOAL_HEAD,
                             rule=self.choice_score, score_all=self.score_all)
        pick.call.purpose = HEAD_PURPOSE
        calls.append(pick.call)
        if pick.call.error is not None:
            return None
        return next(option for option in options if option[0] == pick.action)

    def _open_chosen(self, text: str, mask: int, calls: list[LLMCall]) -> None:
        """Fold the open subgoal (met, or open too long) and open the chosen one, even when it names the same
        condition again (a fresh start on it, the steps before folded into their summary)."""
        current = self.wm.current
        if current is not None and not current.env_pairs:  # nothing done under it: the choice replaces it
            current.text, current.atoms = text, mask
            return
        if current is not None:
            self._finish(current, calls)
        self._opened(self.wm.open(text)).atoms = mask

    def _finish(self, subgoal: Subgoal, calls: list[LLMCall]) -> None:
        subgoal.finished = True
        for other in self.wm.subgoals:  # retrieved pairs fold back into their summaries
            other.retrieved_now = False
        if not self.hide_finished:
            return
        fallback = subgoal.last_observation
        if self.compact and subgoal.env_pairs:  # the compact form's observation: what the last step made true
            fallback = subgoal.env_pairs[-1].change
        if not self.summarize:
            subgoal.summary = fallback
            return
        if self.setting.world_summary and subgoal.start_state is not None:  # the world's verdict and facts, no call
            state = int(self._env.unwrapped.state)
            subgoal.met = subgoal.holds_in(state)
            subgoal.summary = compact.changed_text(self._env.unwrapped.world, subgoal.start_state, state)
            return
        changes = self.setting.changes_to_summariser
        if self.compact:
            messages = [Message("system", compact.summarizer_system()), Message("user", compact.summary_request(subgoal))]
        else:
            messages = [
                Message("system", prompts.summarizer_system(changes=changes)),
                Message("user", prompts.summary_request(subgoal, changes=changes)),
            ]
        completion, call = self._call("summary", messages, self.summary_max_tokens, prompts.SUMMARY_STOP)
        calls.append(call)
        met, summary = (None, None) if completion.error else parse_summary(completion.text)
        subgoal.met = met
        subgoal.summary = summary or fallback

    def _retrieve(self, subgoal: Subgoal, action: str, k: int | None) -> None:
        """Show finished subgoal k in full at its place (no environment step), or note why not."""
        finished = [s.index for s in self.wm.finished()]
        action = f"retrieve({k})" if k is not None else action
        target = self.wm.get(k) if k is not None else None
        words = compact if self.compact else prompts
        if target is None or not target.finished:
            subgoal.pairs.append(Pair(action, words.retrieval_error(k, finished), kind="retrieval"))
        else:
            target.retrieved_now = True
            subgoal.pairs.append(Pair(action, words.retrieval_note(k), kind="retrieval", retrieved=k))
