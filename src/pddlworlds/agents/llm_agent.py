"""The base of the LLM agents: the prompt prefix built at `reset`, one model call with its `LLMCall`
record, and the per-step details `Agent.run` stores (including the in-trial context size).

A reply the backend reports as unusable (`Completion.error`, e.g. an empty or malformed reply) never
raises: the step sends the empty action, which the environment counts as an invalid step. An exception
raised by `llm.chat` itself propagates, so the runner records it as the episode's fault.

`setting` (`settings.SETTINGS`) says what the agent plays in: `free` (the model writes its action),
`admissible` or `state-choice` (the action calls choose among the legal actions, `admissible.py`; a
backend that cannot score texts is refused). A setting other than `free` is recorded in the agent's flags.
In a setting of the compact prompt form (`state-choice-compact`, `compact.py`) the agent builds its calls
from the environment's state (the goal and state as facts, the candidates listed); the form and its
version are recorded in the flags too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from ..env import StepInfo
from ..llm import LLM, Completion, Message, candidate_scorer
from ..records import LLMCall
from ..worlds.catalogue import domains
from . import compact, prompts
from .admissible import CHOICE_SCORES, candidate_actions, choose_action, free_head
from .base import Agent
from .examples import Example, example_file, load_example
from .parsing import Reply, parse_reply
from .settings import DEFAULT_SETTING, get_setting
from .unsolvable_rule import with_impossible_rule

__all__ = ["ERROR_ACTION", "Insights", "LLMAgent"]

#: Cross-trial insights an agent shows under one heading: fixed rule texts, or a function of the episode's
#: env and first info that picks them at each reset (e.g. `pddlworlds.insights.InsightSelector`).
Insights = Sequence[str] | Callable[[gym.Env, dict[str, Any]], Sequence[str]] | None

#: What is sent to the environment when the model gave no usable reply: the env rejects it as empty.
ERROR_ACTION = ""


class LLMAgent(Agent):
    """Shared plumbing of the LLM agents; subclasses write `_system_text` and `act`."""

    def __init__(
        self,
        llm: LLM,
        *,
        max_tokens: int,
        example: bool | None = None,
        insights: Insights = None,
        setting: str = DEFAULT_SETTING,
        choice_score: str | None = None,
        score_all: bool = False,
    ):
        self.setting = get_setting(setting)  # an unknown name raises here, listing the settings
        if self.setting.chooses:
            candidate_scorer(llm)  # a backend that cannot score candidates is refused here, before any episode
        elif choice_score is not None:
            raise ValueError(f"choice_score ranks candidates; setting {setting!r} does not choose among them")
        if choice_score is not None:
            CHOICE_SCORES[choice_score]  # an unknown rule raises here, listing the rules
        self.choice_score = choice_score or self.setting.choice_score
        if score_all and not self.setting.chooses:
            raise ValueError(f"score_all scores candidates; setting {setting!r} does not choose among them")
        self.score_all = score_all  # every candidate scored whole (the record then holds every sum), not only the pick
        self.llm = llm
        self.insights = insights
        self.insight_texts: list[str] = []
        self.model = llm.model_id
        self.max_tokens = max_tokens
        # None: as the model and the setting ask (a model trained without the example says so); else the
        # caller's choice.
        wanted = bool(getattr(llm, "in_context_example", True)) and self.setting.example
        self.use_example = wanted if example is None else example
        self.example: Example | None = None
        self._examples: dict[tuple[str, str], Example | None] = {}
        self.system = ""
        self.task = ""
        self._details: dict[str, Any] = {}
        self._env: gym.Env | None = None
        self._bits = 0  # the state after the last step (compact form: what a step made true)

    @property
    def compact(self) -> bool:
        """Whether the agent's calls are in the compact form (`compact.py`)."""
        return self.setting.prompt_form == "compact"

    def flags(self) -> dict[str, Any]:
        """What the run configuration records: the prompts' version, and each shipped domain's example
        (its source problem and the sha256 of its file), plus the one of the last episode's domain."""
        examples: dict[str, dict[str, str] | None] = {}
        if self.use_example:
            for name, domain in domains().items():
                if example_file(domain.folder).is_file():
                    examples[name] = _example_flags(self._example_for(domain.folder, "full"))
        return {
            "prompts_version": prompts.PROMPTS_VERSION,
            "example": self.use_example,
            "example_problem": self.example.problem if self.example else None,
            "example_sha256": self.example.sha256 if self.example else None,
            "examples": examples,
            "max_tokens": self.max_tokens,
            **({"insights": list(self.insight_texts)} if self.insights is not None else {}),
            **({"setting": self.setting.name} if self.setting.name != DEFAULT_SETTING else {}),
            **({"choice_score": self.choice_score} if self.choice_score != self.setting.choice_score else {}),
            **({"score_all": True} if self.score_all else {}),
            **({"prompt_form": "compact", "compact_version": compact.COMPACT_VERSION} if self.compact else {}),
            **({"diffs_version": compact.DIFFS_VERSION} if self.setting.diffs else {}),
        }

    def _example_for(self, folder: Path, mode: str) -> Example | None:
        key = (str(folder), mode)
        if key not in self._examples:
            self._examples[key] = load_example(folder, mode)
        return self._examples[key]

    def reset(self, observation: str, info: StepInfo, env: gym.Env, seed: int | None = None) -> None:
        self._env = env
        base = env.unwrapped
        world = base.world
        modes = self.setting.observation_modes
        if modes and base.observation_mode not in modes:
            raise ValueError(
                f"setting {self.setting.name!r} needs an environment made with observation_mode "
                f"{' or '.join(map(repr, modes))}, not {base.observation_mode!r}"
            )
        self.look_around = base.observation_mode == "changes" and self.setting.describe_actions
        folder = Path(base.domain_file).resolve().parent
        self.example = self._example_for(folder, base.observation_mode) if self.use_example else None
        self.system = self._compact_system() if self.compact else self._system_text(world)
        self.system = with_impossible_rule(self.system, env)  # the `impossible` action, when offered
        self.insight_texts = self._pick_insights(env, info)
        self.system = prompts.with_insights(self.system, self.insight_texts)  # cross-trial insights, last
        if self.compact:
            self.task = compact.goal_block(world, info["goal"])
            if self.setting.diffs:  # the state once; every step's line says what it changed
                self.task += compact.start_block(world)
        else:
            self.task = prompts.problem_text(info["goal"], observation)
        self._bits = int(base.state)
        self._details = {}

    def _system_text(self, world) -> str:
        raise NotImplementedError

    def _compact_system(self) -> str:
        raise NotImplementedError

    def _pick_insights(self, env: gym.Env, info: StepInfo) -> list[str]:
        if self.insights is None:
            return []
        texts = self.insights(env, info) if callable(self.insights) else self.insights
        return [" ".join(str(t).split()) for t in texts if str(t).strip()]

    def in_view(self, memory: str, observation: str) -> str:
        """`memory`, followed by the current state where the setting keeps it in view (state-choice) and the
        prompt's last observation is not it (after a retrieval, say)."""
        if not self.setting.state_in_view or (self.task + memory).endswith(f"Observation: {observation}\n"):
            return memory
        return memory + prompts.state_line(observation)

    def view(
        self, memory: str, observation: str, cue: str, retrievable: list[int] | None = None
    ) -> tuple[str, list[Message]]:
        """(what the prompt shows after the problem, the prompt) for a turn: the memory in view (`in_view`)
        in the full form; in the compact form the memory, the current state as facts and the candidates the
        turn chooses among (`retrievable`: HiAgent's finished subgoals offered); in its diffs variant the
        memory alone (the start state is in the problem, each step's line says what it changed)."""
        if not self.compact:
            memory = self.in_view(memory, observation)
            return memory, self.messages(memory, cue)
        if self.setting.diffs:  # the start state and the steps' changes are the state
            return memory, self.messages(memory, cue)
        base = self._env.unwrapped
        actions = candidate_actions(
            self._env, look_around=self.look_around, retrievable=retrievable or [],
            describe=self.setting.describe_actions,
        )
        memory += compact.state_block(base.world, int(base.state)) + compact.candidates_block(actions)
        return memory, self.messages(memory, cue)

    def step_change(self) -> str | None:
        """In the compact form, the facts the step just taken made true (in the diffs variant, and those it
        made false), from the environment's state, which becomes the state the next step is compared with;
        None in the full form."""
        if not self.compact:
            return None
        base = self._env.unwrapped
        after = int(base.state)
        diff = compact.diff_text if self.setting.diffs else compact.changed_text
        text = diff(base.world, self._bits, after)
        self._bits = after
        return text

    def messages(self, memory: str, cue: str) -> list[Message]:
        """The prompt: fixed system text, then the problem, the memory and the cue (in that order)."""
        return [Message("system", self.system), Message("user", f"{self.task}{memory}{cue}")]

    def _call(
        self, purpose: str, messages: list[Message], max_tokens: int, stop: tuple[str, ...] = ()
    ) -> tuple[Completion, LLMCall]:
        completion = self.llm.chat(messages, max_tokens=max_tokens, stop=stop, temperature=0.0)
        call = LLMCall(
            purpose=purpose,
            prompt_tokens=int(completion.prompt_tokens),
            completion_tokens=int(completion.completion_tokens),
            latency_s=float(completion.latency_s),
            raw_output=_raw(completion),
            error=completion.error,
            cached_tokens=completion.cached_tokens,
            prompt_eval_s=completion.prompt_eval_s,
            generation_s=completion.generation_s,
        )
        return completion, call

    def _admissible_reply(
        self, messages: list[Message], calls: list[LLMCall], *, head: bool | str, retrievable: list[int] | None = None
    ) -> tuple[Reply, LLMCall]:
        """The turn's reply in the admissible setting: the most probable valid action or offered
        meta-action, after the model's own subgoal line when `head` is True (the reply format states one), or
        after `head` itself when it is a text (a subgoal chosen before: `Subgoal: <line>\nAction:`)."""
        text = head if isinstance(head, str) else ""
        if head is True:
            text, head_call = free_head(self.llm, messages, self.max_tokens)
            calls.append(head_call)
        actions = candidate_actions(
            self._env, look_around=self.look_around, retrievable=retrievable or [],
            describe=self.setting.describe_actions,
        )
        pick = choose_action(self.llm, messages, actions, text, rule=self.choice_score, score_all=self.score_all)
        calls.append(pick.call)
        if pick.call.error is not None:
            return Reply(None, ERROR_ACTION), pick.call
        return Reply(parse_reply(pick.reply).subgoal, pick.action), pick.call

    def step_details(self) -> dict[str, Any]:
        return dict(self._details)

    def _set_details(self, action_call: LLMCall, calls: list[LLMCall], memory: str, **extra: Any) -> None:
        """Details of the call that produced the action; `calls` has every call of the step.

        `context_tokens` is the in-trial context as the paper counts it: the problem (goal and first
        observation) and the working memory, not the fixed instructions, example or cue.
        """
        self._details = {
            "prompt_tokens": action_call.prompt_tokens,
            "context_tokens": int(self.llm.count_tokens(self.task + memory)),
            "completion_tokens": action_call.completion_tokens,
            "latency_s": action_call.latency_s,
            "raw_output": action_call.raw_output,
            "memory_view": memory,
            "calls": list(calls),
            **extra,
        }


def _example_flags(example: Example | None) -> dict[str, str] | None:
    return None if example is None else {"problem": example.problem, "sha256": example.sha256}


def _raw(completion: Completion) -> str:
    if completion.error is None:
        return completion.text
    return completion.raw if completion.raw is not None else completion.text
