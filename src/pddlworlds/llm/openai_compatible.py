"""Chat models behind any OpenAI-compatible ``/v1/chat/completions`` endpoint (vLLM, llama.cpp's server,
OpenAI itself), through the official ``openai`` client."""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from .base import Completion, LLMUnavailableError, Message

__all__ = ["OpenAICompatibleLLM", "from_spec", "label"]

INSTALL_HINT = "pip install 'pddlworlds[llm]'"

_CHARS_PER_TOKEN = 4
"""Fallback when tiktoken (or its encoding file, fetched on first use) is unavailable:
OpenAI's rule of thumb of ~4 characters per token for English text."""


class OpenAICompatibleLLM:
    """Chat models behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    Retries timeouts, connection errors, 429 and 5xx with exponential backoff and jitter
    (from a seeded RNG, so runs are reproducible); other 4xx are final. Every failure ends
    in a :class:`Completion` with ``error`` set. Call :meth:`check_available` before an
    evaluation to fail fast when the endpoint is down.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 60,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        max_backoff_s: float = 8.0,
        seed: int = 0,
    ) -> None:
        try:
            import openai
        except ImportError as exc:
            raise ImportError(f"OpenAICompatibleLLM needs the openai package: {INSTALL_HINT}") from exc
        self._openai = openai
        self._model = model
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
            max_retries=0,  # our own loop below decides what is retried
            timeout=timeout,
        )
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._rng = random.Random(seed)
        self._encoding: Any = None  # tiktoken encoding, False when unavailable

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    def describe(self) -> dict[str, str]:
        """What identifies this model in a run's configuration (never the key)."""
        return {"model": self._model, "base_url": self.base_url}

    # -- tokens --------------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        """tiktoken count when installed (o200k_base for unknown models), else ceil(chars / 4).

        Only an estimate for non-OpenAI models; the server's ``usage`` is preferred in ``chat``.
        """
        if self._encoding is None:
            self._encoding = _load_tiktoken(self._model)
        if self._encoding is False:
            return math.ceil(len(text) / _CHARS_PER_TOKEN)
        return len(self._encoding.encode(text, disallowed_special=()))

    # -- chat ----------------------------------------------------------------------
    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 128,
        stop: Sequence[str] = (),
        temperature: float = 0.0,
    ) -> Completion:
        request: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "top_p": 1.0,
        }
        if stop:
            request["stop"] = list(stop)
        openai = self._openai
        start = time.perf_counter()
        last_error = ""
        for attempt in range(self.max_retries + 1):
            try:
                response = self._client.chat.completions.with_raw_response.create(**request)
                body = response.text
            except openai.APIStatusError as exc:
                last_error = f"HTTP {exc.status_code}: {_error_message(exc)}"
                if exc.status_code != 429 and exc.status_code < 500:
                    return self._failed(messages, start, last_error, raw=exc.response.text)
                retry_after = _retry_after(exc)
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                last_error = f"{type(exc).__name__}: {exc}"
                retry_after = None
            else:
                return self._parse(body, messages, start)
            if attempt < self.max_retries:
                time.sleep(self._backoff(attempt, retry_after))
        attempts = self.max_retries + 1
        return self._failed(messages, start, f"failed after {attempts} attempts: {last_error}")

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with "equal jitter"; a server's Retry-After wins if it is within the cap."""
        if retry_after is not None:
            return min(retry_after, self.max_backoff_s)
        delay = min(self.max_backoff_s, self.backoff_s * 2.0**attempt)
        return delay / 2 + self._rng.uniform(0, delay / 2)

    def _estimate_prompt_tokens(self, messages: Sequence[Message]) -> int:
        return sum(self.count_tokens(m.content) for m in messages)

    def _failed(
        self, messages: Sequence[Message], start: float, error: str, raw: str | None = None
    ) -> Completion:
        latency = time.perf_counter() - start
        return Completion("", self._estimate_prompt_tokens(messages), 0, latency, error=error, raw=raw)

    def _parse(self, body: str, messages: Sequence[Message], start: float) -> Completion:
        """Turn a 200 body into a Completion; anything unusable becomes an error, never an exception."""
        latency = time.perf_counter() - start
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return self._failed(messages, start, "malformed reply: body is not a JSON object", raw=body)
        choices = data.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = choice.get("message") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            detail = data.get("error") or ("no choices" if choice is None else "no message content")
            return self._failed(messages, start, f"malformed reply: {detail}", raw=body)
        usage = data["usage"] if isinstance(data.get("usage"), dict) else {}
        prompt_tokens = usage.get("prompt_tokens")
        if not isinstance(prompt_tokens, int):
            prompt_tokens = self._estimate_prompt_tokens(messages)
        completion_tokens = usage.get("completion_tokens")
        if not isinstance(completion_tokens, int):
            completion_tokens = self.count_tokens(content)
        if not content.strip():
            return Completion("", prompt_tokens, completion_tokens, latency, error="empty reply", raw=body)
        return Completion(content, prompt_tokens, completion_tokens, latency)

    # -- fail-fast probe -----------------------------------------------------------
    def check_available(self, timeout: float = 5.0) -> None:
        """Raise :class:`LLMUnavailableError` unless the endpoint answers; one short request, no retries.

        Probes ``GET /models``; servers without that route (404/405) get a 1-token chat instead.
        A 429 counts as available (reachable, merely busy).
        """
        openai = self._openai
        client = self._client.with_options(timeout=timeout, max_retries=0)
        probes: list[Callable[[], object]] = [
            client.models.list,
            lambda: client.chat.completions.create(
                model=self._model, messages=[{"role": "user", "content": "ping"}], max_tokens=1
            ),
        ]
        for probe in probes:
            try:
                probe()
                return
            except openai.APIConnectionError as exc:
                raise LLMUnavailableError(
                    f"cannot reach {self.base_url}: {type(exc).__name__}: {exc}"
                ) from exc
            except openai.APIStatusError as exc:
                if exc.status_code == 429:
                    return
                if exc.status_code in (404, 405) and probe is probes[0]:
                    continue
                raise LLMUnavailableError(
                    f"cannot reach {self.base_url}: HTTP {exc.status_code}: {_error_message(exc)}"
                ) from exc
            except openai.APIError as exc:  # e.g. an unparsable /models listing: let the chat probe decide
                if probe is probes[0]:
                    continue
                raise LLMUnavailableError(f"cannot reach {self.base_url}: unusable reply: {exc}") from exc


def _load_tiktoken(model: str) -> Any:
    try:
        import tiktoken
    except ImportError:
        return False
    try:
        return tiktoken.encoding_for_model(model)
    except KeyError:
        pass
    except Exception:  # encoding files are downloaded on first use; offline means no tiktoken
        return False
    try:
        return tiktoken.get_encoding("o200k_base")
    except Exception:
        return False


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(exc, "message", exc))


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:  # an HTTP date: ignore and use our own backoff
        return None


def from_spec(spec: Any) -> OpenAICompatibleLLM:
    """The registry's factory: `--llm openai:MODEL` with `--base-url` and `--api-key`."""
    return OpenAICompatibleLLM(spec.model or "", base_url=spec.base_url, api_key=spec.api_key)


def label(entry: dict[str, Any]) -> str:
    """A stored configuration entry in words (for reports)."""
    return f"{entry.get('model')} at {entry.get('base_url')}"
