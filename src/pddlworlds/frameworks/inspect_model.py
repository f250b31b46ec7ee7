"""Our agents' `LLM` protocol over the model an Inspect evaluation runs (`inspect eval --model ...`).

STANDARD and HiAgent are synchronous and call `llm.chat(messages)`; an Inspect solver is a coroutine on
Inspect's event loop. The agent plays in a worker thread (`asyncio.to_thread`, which carries the sample's
context), and each `chat` hands `Model.generate` back to the loop and waits for it, so every call is
Inspect's own: its provider, its retries, its transcript and token accounting in the log.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Sequence
from typing import Any

from ..llm.base import Completion, LLMServiceError, Message
from . import missing_extra

try:
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageUser,
        GenerateConfig,
        Model,
    )
except ImportError as exc:  # the optional extra is not installed
    raise missing_extra("inspect", exc) from exc

__all__ = ["ESTIMATE", "InspectLLM"]

#: `InspectLLM.token_counting` when Inspect's own count could not be had.
ESTIMATE = "an estimate: characters / 4 (Inspect's token count was unavailable)"

_ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


class InspectLLM:
    """`pddlworlds.llm.LLM` over an Inspect `Model`, for calls from a thread other than the loop's."""

    def __init__(self, model: Model, loop: asyncio.AbstractEventLoop) -> None:
        self._model = model
        self._loop = loop
        #: How `count_tokens` counts (the agents record context tokens with it; no decision depends on it).
        self.token_counting = "Inspect's Model.count_tokens"

    @property
    def model_id(self) -> str:
        return str(self._model)

    def _wait(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def chat(
        self, messages: Sequence[Message], *, max_tokens: int = 128, stop: Sequence[str] = (), temperature: float = 0.0
    ) -> Completion:
        chat = [_ROLES[m.role](content=m.content) for m in messages]
        config = GenerateConfig(max_tokens=max_tokens, stop_seqs=list(stop) or None, temperature=temperature)
        start = time.perf_counter()
        output = self._wait(self._model.generate(chat, config=config))
        latency = time.perf_counter() - start
        if output.error:
            raise LLMServiceError("invalid_reply", f"{self._model}: {output.error}")
        usage = output.usage
        prompt_tokens = usage.input_tokens if usage is not None else 0
        completion_tokens = usage.output_tokens if usage is not None else 0
        text = output.completion
        if not text.strip():  # as the OpenAI-compatible backend records an empty reply: an invalid step
            return Completion("", prompt_tokens, completion_tokens, latency, error="empty reply", raw=text)
        return Completion(text, prompt_tokens, completion_tokens, latency)

    def count_tokens(self, text: str) -> int:
        """Inspect's count (tiktoken's o200k_base plus 10% for most providers); where that cannot be had
        (its tokenizer file is fetched on first use, which fails offline), characters / 4 from then on,
        said in `token_counting`, as the OpenAI-compatible backend does for a server it cannot ask."""
        if self.token_counting == ESTIMATE:
            return math.ceil(len(text) / 4)
        try:
            return int(self._wait(self._model.count_tokens(text)))
        except Exception:  # noqa: BLE001 - e.g. tiktoken's file unreachable offline
            self.token_counting = ESTIMATE
            return math.ceil(len(text) / 4)
