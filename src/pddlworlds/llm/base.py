"""What agents see of a language model: the `LLM` protocol and the records it trades in.

Agents only call ``chat(messages) -> Completion`` and ``count_tokens(text)``. A reply the model gave but
that is unusable comes back as a `Completion` with ``error`` set (``text`` ""), so an agent can record an
invalid step and go on. Benchmark defaults: temperature 0, top_p 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["LLM", "Completion", "LLMUnavailableError", "Message"]


@dataclass(frozen=True)
class Message:
    """One chat turn; ``role`` is "system", "user" or "assistant"."""

    role: str
    content: str


@dataclass(frozen=True)
class Completion:
    """A backend's answer. ``error`` is set (and ``text`` is "") for failed or unusable replies.

    ``raw`` keeps the unparsed reply when it was unusable, for debugging records.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    error: str | None = None
    raw: str | None = None


@runtime_checkable
class LLM(Protocol):
    """What agents need from a language model."""

    @property
    def model_id(self) -> str: ...

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 128,
        stop: Sequence[str] = (),
        temperature: float = 0.0,
    ) -> Completion: ...

    def count_tokens(self, text: str) -> int: ...


class LLMUnavailableError(RuntimeError):
    """The backend cannot be used at all (endpoint down, bad credentials): stop the evaluation."""
