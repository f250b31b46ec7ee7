"""AgentBoard's STANDARD agent, prompted from the user's own AgentBoard prompt file.

AgentBoard's vanilla agent (hkust-nlp/AgentBoard, agentboard/agents/vanilla_agent.py) reads, per game, a
system message, an instruction and hand-written examples from a JSON file, and asks the model for one
action line. This module reads a file of that layout (we ship none; point it at your AgentBoard checkout's
`agentboard/prompts/VanillaAgent/pddl_vanilla_prompt.json`) and builds the prompt in the same order:

    instruction
    "\\nHere are examples:\\n" + each example + "\\n"
    "You should perform actions to accomplish the goal: " + goal + "\\n"
    "You should use the following commands for help when your action cannot be understood: check valid actions\\n"
    "Observation: ..." / "Action: ..." lines (the last `memory_size` entries), joined by "\\n"
    "\\nAction: "

sent as a system message and one user message, with stop "\\n", at most 100 new tokens, temperature 0;
the reply goes through AgentBoard's reply clean-up before it is sent. Use it with
`gym.make(..., profile="agentboard")` to reproduce AgentBoard's setting.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from ..env import StepInfo
from ..llm import LLM, Message
from ..records import LLMCall
from .base import Agent

__all__ = [
    "AgentBoardPrompt",
    "AgentBoardPromptFile",
    "AgentBoardStandardAgent",
    "clean_reply",
    "load_prompt_file",
    "standard_prompt",
]

#: AgentBoard's game names where they differ from our domain names.
GAME_NAMES = {"blocksworld": "blockworld"}
CHECK_ACTIONS = "check valid actions"


@dataclass(frozen=True)
class AgentBoardPrompt:
    """One game's entry of an AgentBoard prompt file."""

    system_msg: str
    instruction: str
    examples: tuple[str, ...]


@dataclass(frozen=True)
class AgentBoardPromptFile:
    """A whole prompt file: its path, its sha256 (recorded with each run) and its entries by game name."""

    path: Path
    sha256: str
    games: dict[str, AgentBoardPrompt]

    def for_domain(self, domain: str) -> AgentBoardPrompt:
        """The entry for one of our domains (AgentBoard calls Blocksworld "blockworld")."""
        for key in (domain, GAME_NAMES.get(domain, domain)):
            if key in self.games:
                return self.games[key]
        raise KeyError(
            f"{self.path}: no entry for domain {domain!r}; entries: {', '.join(self.games) or 'none'}"
        )


def load_prompt_file(path: str | Path) -> AgentBoardPromptFile:
    """Read a prompt file in AgentBoard's PDDL layout: {game: {"system_msg", "instruction", "examples"}}."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the prompt file: {exc.strerror}") from exc
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(data, dict) or not data:
        raise ValueError(
            f"{path}: expected an object of games, each with system_msg, instruction and examples"
        )
    games: dict[str, AgentBoardPrompt] = {}
    for game, entry in data.items():
        if not isinstance(entry, dict):
            raise ValueError(f"{path}: entry {game!r} must be an object")  # noqa: TRY004  (bad file content)
        missing = [k for k in ("system_msg", "instruction", "examples") if k not in entry]
        if missing:
            raise ValueError(f"{path}: entry {game!r} lacks {', '.join(missing)}")
        examples = entry["examples"]
        examples = [examples] if isinstance(examples, str) else examples  # AgentBoard accepts one string too
        texts = (entry["system_msg"], entry["instruction"], *examples)
        if not isinstance(examples, list) or not all(isinstance(t, str) for t in texts):
            raise ValueError(
                f"{path}: entry {game!r}: system_msg, instruction and each example must be strings"
            )
        games[game] = AgentBoardPrompt(entry["system_msg"], entry["instruction"], tuple(examples))
    return AgentBoardPromptFile(path, hashlib.sha256(raw).hexdigest(), games)


def _query(prompt: AgentBoardPrompt, goal: str) -> str:
    query = prompt.instruction
    if prompt.examples:
        query += "\nHere are examples:\n" + "".join(example + "\n" for example in prompt.examples)
    query += "You should perform actions to accomplish the goal: " + goal + "\n"
    return (
        query
        + f"You should use the following commands for help when your action cannot be understood: {CHECK_ACTIONS}\n"
    )


def standard_prompt(prompt: AgentBoardPrompt, goal: str, history: list[tuple[str, str]]) -> str:
    """The user message of AgentBoard's STANDARD agent; `history` is ("Observation"|"Action", text) pairs."""
    return _query(prompt, goal) + "\n".join(f"{kind}: {text}" for kind, text in history) + "\nAction: "


def clean_reply(reply: str) -> str:
    """AgentBoard's clean-up of a model reply (its `action_parser_for_special_llms`): take what follows
    "Action:"-like labels, else the first line; strip spaces, quotes and slashes."""
    action = reply
    if "action" in reply.lower():
        lines = reply.split("\n")
        for k, line in enumerate(lines):
            if "next action" in line and ":" in line:
                action = next((later for later in lines[k + 1 :] if later), action)
            if line.split(":")[0].lower().endswith("with action input"):
                action = line
                break
            if "action" in line.lower() and ":" in line and ":".join(line.split(":")[1:]) != "":
                action = ":".join(line.split(":")[1:])
                break
            if "action" in line.lower() and "is to" in line and line.split("is to")[1] != "":
                action = line.split("is to")[1]
                break
    if action.strip() == "":
        action = reply.split("\n")[0]
    return action.strip().strip("'/").split("\n")[0]


class AgentBoardStandardAgent(Agent):
    """AgentBoard's STANDARD (vanilla) agent over any `LLM`, with the prompts of `prompt_file`.

    `context_length`, when given, drops the oldest history entries until the prompt and the reply fit,
    as AgentBoard does with its model's context length (tokens counted by the backend).
    """

    name = "agentboard-standard"

    def __init__(
        self,
        llm: LLM,
        prompt_file: str | Path,
        *,
        max_tokens: int = 100,
        memory_size: int = 100,
        context_length: int | None = None,
    ):
        self.llm = llm
        self.model = llm.model_id
        self.prompts = load_prompt_file(prompt_file)
        self.max_tokens = max_tokens
        self.memory_size = memory_size
        self.context_length = context_length
        self.prompt = AgentBoardPrompt("", "", ())
        self.goal = ""
        self.history: list[tuple[str, str]] = []
        self._details: dict[str, Any] = {}

    def flags(self) -> dict[str, Any]:
        return {
            "prompt_file": str(self.prompts.path),
            "prompt_sha256": self.prompts.sha256,
            "max_tokens": self.max_tokens,
            "memory_size": self.memory_size,
            "context_length": self.context_length,
            "stop": "\n",
            "temperature": 0.0,
        }

    def reset(self, observation: str, info: StepInfo, env: gym.Env, seed: int | None = None) -> None:
        self.prompt = self.prompts.for_domain(info["domain"])
        self.goal = info["goal"]
        self.history = [("Observation", observation)]
        self._details = {}

    def messages(self) -> list[Message]:
        """The two messages of the next call: the game's system message and the assembled prompt."""
        history = self.history[-self.memory_size :]
        while True:
            messages = [
                Message("system", self.prompt.system_msg),
                Message("user", standard_prompt(self.prompt, self.goal, history)),
            ]
            if self.context_length is None or not history:
                return messages
            used = sum(self.llm.count_tokens(m.content) for m in messages)
            if used <= self.context_length - self.max_tokens:
                return messages
            history = history[1:]

    def act(self, observation: str, info: StepInfo) -> str:
        messages = self.messages()
        completion = self.llm.chat(messages, max_tokens=self.max_tokens, stop=("\n",), temperature=0.0)
        raw = completion.text if completion.error is None else (completion.raw or completion.text)
        call = LLMCall("action", int(completion.prompt_tokens), int(completion.completion_tokens),
                       float(completion.latency_s), raw, completion.error)  # fmt: skip
        # A failed call ends AgentBoard's episode; here it sends the empty text, an invalid step.
        action = "" if completion.error else clean_reply(completion.text)
        self._details = {
            "prompt_tokens": call.prompt_tokens,
            "completion_tokens": call.completion_tokens,
            "latency_s": call.latency_s,
            "raw_output": raw,
            "memory_view": messages[1].content,
            "calls": [call],
        }
        return action

    def step_details(self) -> dict[str, Any]:
        return dict(self._details)

    def observe(self, action: str, observation: str, info: StepInfo) -> None:
        self.history += [("Action", action), ("Observation", observation)]
