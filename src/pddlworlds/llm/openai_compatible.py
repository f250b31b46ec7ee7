"""Chat models behind any OpenAI-compatible ``/v1/chat/completions`` endpoint (vLLM, llama.cpp's server,
OpenAI itself), through the official ``openai`` client."""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from .base import Completion, LLMServiceError, LLMUnavailableError, Message
from .dialects import SERVED_IDENTITY, ServerTraits, probe_server

__all__ = ["OpenAICompatibleLLM", "from_spec", "label"]

INSTALL_HINT = "pip install 'pddlworlds[llm]'"

_CHARS_PER_TOKEN = 4
"""The estimate when no tokenizer is known: OpenAI's rule of thumb of ~4 characters per token for English."""
#: Sampling parameters a server may reject (reasoning models: HTTP 400 naming them); dropped once named.
DROPPABLE_PARAMETERS = ("max_tokens", "max_completion_tokens", "stop", "temperature", "top_p")
#: A reasoning block some servers leave at the start of `content` (DeepSeek-R1 style): never the action.
_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


class OpenAICompatibleLLM:
    """Chat models behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    The ``openai`` client does the retrying (timeouts, connection errors, 408/409/429 and 5xx, honouring
    ``Retry-After``, with its exponential backoff) and each attempt's timeout (``timeout``, the CLI's
    ``--request-timeout``); ``deadline_s`` bounds a whole call, retries included. A call that still fails
    raises :class:`LLMServiceError` (kind, message, attempts), as do replies that are not a chat completion
    (invalid JSON, no choices); an empty reply is the model's answer, a :class:`Completion` with ``error``.
    ``cancel()`` (Ctrl-C) ends every call in flight at once and refuses new ones.

    Reasoning-model endpoints: a 400 that names a sampling parameter drops it for the rest of the run (and
    ``max_tokens`` becomes ``max_completion_tokens`` when the server asks for that); ``adjustments()``
    says what was dropped. Only ``content`` is the reply: reasoning fields and a leading ``<think>`` block
    never reach the agent. Call :meth:`check_available` before an evaluation to fail fast.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 60,
        max_retries: int = 4,
        deadline_s: float | None = None,
        token_limit_parameter: str = "max_tokens",
        tokenizer: str = "auto",
    ) -> None:
        try:
            import openai
        except ImportError as exc:
            raise ImportError(f"OpenAICompatibleLLM needs the openai package: {INSTALL_HINT}") from exc
        if token_limit_parameter not in ("max_tokens", "max_completion_tokens"):
            raise ValueError(
                f"token_limit_parameter must be max_tokens or max_completion_tokens, not {token_limit_parameter!r}"
            )
        if tokenizer not in ("auto", "server", "tiktoken", "estimate"):
            raise ValueError(f"tokenizer must be auto, server, tiktoken or estimate, not {tokenizer!r}")
        self._openai = openai
        self._model = model
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        self._client = openai.OpenAI(
            base_url=base_url, api_key=self._api_key, max_retries=max_retries, timeout=timeout
        )
        self.timeout = timeout
        self.max_retries = max_retries
        self.deadline_s = deadline_s if deadline_s is not None else (max_retries + 1) * timeout + 30
        self._token_limit = token_limit_parameter
        self._dropped: list[str] = []
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        self._inflight: dict[int, tuple[Any, threading.Event]] = {}
        self._idle: list[Any] = []  # clients whose last call ended normally, for the next calls
        self._tokenizer_choice = tokenizer
        self._tokenizer: tuple[str, Any] | None = None  # (description, count function)
        self._traits: ServerTraits | None = None  # what the server showed of itself (llm.dialects)

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    def describe(self) -> dict[str, Any]:
        """What identifies this model in a run's configuration (never the key); from `pddlworlds serve`
        also what it serves (model id and digest, prompt format, whether it sees the example)."""
        entry = {"model": self._model, "base_url": self.base_url, "token_counting": self.token_counting}
        served = self.server_traits().served
        return {**entry, "served": {k: served.get(k) for k in SERVED_IDENTITY}} if served else entry

    @property
    def in_context_example(self) -> bool:
        """Whether agents show this model their in-context example: as `pddlworlds serve` says of the model
        it serves (not to an adapter, as in-process), else yes."""
        served = self.server_traits().served
        return bool(served.get("in_context_example", True)) if served else True

    def server_traits(self) -> ServerTraits:
        """What the server showed of itself (`llm.dialects`), asked once; a server that cannot be reached
        is asked again next time."""
        if self._traits is None:
            client = self._client.with_options(max_retries=0)
            root = self.base_url.rstrip("/").removesuffix("/v1")
            try:
                client.get(root + "/v1/models", cast_to=object)
            except self._openai.APIConnectionError:
                return ServerTraits()
            except self._openai.APIError:
                pass  # reachable; the route is another matter
            self._traits = probe_server(
                lambda url, body: client.post(url, body=body, cast_to=object),
                lambda url: client.get(url, cast_to=object),
                root,
                self._model,
            )
        return self._traits

    def adjustments(self) -> dict[str, Any]:
        """What this run changed in its requests after the server rejected them (for the run's record)."""
        return {"dropped_parameters": list(self._dropped), "token_limit_parameter": self._token_limit}

    # -- tokens --------------------------------------------------------------------
    @property
    def token_counting(self) -> str:
        """How `count_tokens` counts, in words (the run configuration and report header record it)."""
        return self._tokenizer_for()[0]

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text``: the server's ``/tokenize`` endpoint where it has one (llama.cpp's server,
        vLLM), else tiktoken for a model name it knows, else an estimate (characters / 4). A chat's
        ``usage`` from the server is preferred for prompt and completion tokens."""
        return int(self._tokenizer_for()[1](text))

    def _tokenizer_for(self) -> tuple[str, Any]:
        if self._tokenizer is None:
            self._tokenizer = self._pick_tokenizer()
        return self._tokenizer

    def _pick_tokenizer(self) -> tuple[str, Any]:
        choice = self._tokenizer_choice
        if choice in ("auto", "server"):
            traits = self.server_traits()
            if traits.count is not None and traits.tokenizer is not None:
                return (traits.tokenizer, traits.count)
        if choice in ("auto", "tiktoken"):
            encoding = _tiktoken_for(self._model)
            if encoding is not None:
                return (
                    f"tiktoken {encoding.name} (model {self._model})",
                    lambda t: len(encoding.encode(t, disallowed_special=())),
                )
        return ("an estimate: characters / 4 (no tokenizer known for this server and model)", _estimate)

    # -- chat ----------------------------------------------------------------------
    def cancel(self) -> None:
        """End every call in flight (each raises `LLMServiceError` kind "cancelled") and refuse new ones."""
        self._cancelled.set()
        with self._lock:
            inflight = list(self._inflight.values())
            idle, self._idle = self._idle, []
        for client, wake in inflight:
            wake.set()
            with contextlib.suppress(Exception):
                client.close()
        for client in idle:
            client.close()

    def _request(
        self, messages: Sequence[Message], max_tokens: int, stop: Sequence[str], temperature: float
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            self._token_limit: max_tokens,
            "temperature": temperature,
            "top_p": 1.0,
        }
        if stop:
            request["stop"] = list(stop)
        extra = self._traits.request_fields if self._traits is not None else {}
        if extra:  # e.g. the in-process sampler where llama-cpp-python's server has other defaults
            request["extra_body"] = dict(extra)
        for name in self._dropped:
            request.pop(name, None)
        return request

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 128,
        stop: Sequence[str] = (),
        temperature: float = 0.0,
    ) -> Completion:
        openai = self._openai
        self.server_traits()  # asked once, before the call's clock starts
        start = time.perf_counter()
        for _ in range(len(DROPPABLE_PARAMETERS) + 1):  # each round may drop one rejected parameter
            request = self._request(messages, max_tokens, stop, temperature)
            try:
                body = self._send(request, start)
            except openai.BadRequestError as exc:
                if self._adapt(exc, request):
                    continue
                raise _service_error(exc, self.max_retries) from exc
            except openai.APIError as exc:
                raise _service_error(exc, self.max_retries) from exc
            return self._parse(body, messages, start)
        raise LLMServiceError("rejected", "the server kept rejecting the request's parameters", 1)

    def _adapt(self, exc: Any, request: dict[str, Any]) -> bool:
        """After a 400: drop the sampling parameter it names (for the rest of the run); False if none."""
        text = f"{_error_param(exc)} {_error_message(exc)}"
        named = [p for p in DROPPABLE_PARAMETERS if p in request and re.search(rf"\b{p}\b", text)]
        if not named:
            return False
        name = named[0]
        with self._lock:
            if name == "max_tokens" and "max_completion_tokens" in text and self._token_limit == "max_tokens":
                self._token_limit = "max_completion_tokens"
            elif name not in self._dropped:
                self._dropped.append(name)
        return True

    def _send(self, request: dict[str, Any], start: float) -> str:
        """One call with the client's retries, in a helper thread so that the deadline and `cancel()` can
        end it at once; that call's client is closed then, so no further attempt reaches the server (clients
        of calls that ended normally are kept for the next calls)."""
        if self._cancelled.is_set():
            raise LLMServiceError("cancelled", "the run was interrupted", 0)
        client = self._idle_client()
        outcome: dict[str, Any] = {}
        wake = threading.Event()

        def work() -> None:
            try:
                outcome["body"] = client.chat.completions.with_raw_response.create(**request).text
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                outcome["error"] = exc
            finally:
                wake.set()

        key = id(wake)
        with self._lock:
            self._inflight[key] = (client, wake)
        worker = threading.Thread(target=work, name="llm-call", daemon=True)
        worker.start()
        try:
            wake.wait(max(0.0, self.deadline_s - (time.perf_counter() - start)))
        finally:
            with self._lock:
                self._inflight.pop(key, None)
            if not outcome:  # deadline, cancel or Ctrl-C: stop the call where it is
                with contextlib.suppress(Exception):
                    client.close()
        if "body" in outcome:
            self._release(client)
            return str(outcome["body"])
        if "error" in outcome:
            self._release(client)
            raise outcome["error"]
        if self._cancelled.is_set():
            raise LLMServiceError("cancelled", "the run was interrupted while the call was in flight", 1)
        raise LLMServiceError(
            "deadline",
            f"no reply within the call's deadline of {self.deadline_s:g} s (retries included)",
            self.max_retries + 1,
        )

    def _idle_client(self) -> Any:
        """A client no call is using (building one costs ~10 ms; a closed one is never reused)."""
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._openai.OpenAI(
            base_url=self.base_url, api_key=self._api_key, max_retries=self.max_retries, timeout=self.timeout
        )

    def _release(self, client: Any) -> None:
        with self._lock:
            if not self._cancelled.is_set():
                self._idle.append(client)
                return
        client.close()

    def _estimate_prompt_tokens(self, messages: Sequence[Message]) -> int:
        return sum(self.count_tokens(m.content) for m in messages)

    def _parse(self, body: str, messages: Sequence[Message], start: float) -> Completion:
        """A 200 body as a Completion; a body that is no chat completion raises `LLMServiceError`."""
        latency = time.perf_counter() - start
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise LLMServiceError("invalid_reply", f"the body is not a JSON object: {_clip(body)}")
        choices = data.get("choices")
        if isinstance(choices, list) and not choices:
            raise LLMServiceError("no_choices", f"the reply has an empty choices list: {_clip(body)}")
        choice = choices[0] if isinstance(choices, list) else None
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            detail = data.get("error") or "no choices[0].message"
            raise LLMServiceError("invalid_reply", f"not a chat completion ({_clip(str(detail))})")
        content = message.get("content")
        usage = data["usage"] if isinstance(data.get("usage"), dict) else {}
        prompt_tokens = usage.get("prompt_tokens")
        if not isinstance(prompt_tokens, int):
            prompt_tokens = self._estimate_prompt_tokens(messages)
        completion_tokens = usage.get("completion_tokens")
        if not isinstance(completion_tokens, int):
            completion_tokens = self.count_tokens(content) if isinstance(content, str) else 0
        text = _THINK.sub("", content) if isinstance(content, str) else ""
        if not text.strip():
            error = "empty reply" if isinstance(content, str) else "no message content"
            return Completion("", prompt_tokens, completion_tokens, latency, error=error, raw=body)
        return Completion(text, prompt_tokens, completion_tokens, latency)

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
                if exc.status_code in (400, 429):  # reachable: busy, or it dislikes the 1-token probe
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


def _estimate(text: str) -> int:
    return math.ceil(len(text) / _CHARS_PER_TOKEN)


def _tiktoken_for(model: str) -> Any:
    """tiktoken's encoding for a model name it knows (its files may need fetching once), else None."""
    try:
        import tiktoken

        return tiktoken.encoding_for_model(model)
    except Exception:  # noqa: BLE001 - not installed, an unknown model, or offline without the files
        return None


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(exc, "message", exc))


def _is_context_overflow(exc: Any) -> bool:
    """A 400 for a prompt over the model's context (OpenAI's and llama-cpp-python's code, vLLM's words)."""
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    code = inner.get("code") if isinstance(inner, dict) else None
    return code == "context_length_exceeded" or "maximum context length" in _error_message(exc)


def _error_param(exc: Any) -> str:
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    return str(inner.get("param") or "") if isinstance(inner, dict) else ""


def _service_error(exc: Any, max_retries: int) -> LLMServiceError:
    """The `openai` client's final exception (after its retries) as an `LLMServiceError`."""
    openai = importlib.import_module("openai")
    attempts = max_retries + 1
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = f"HTTP {status}: {_clip(_error_message(exc))}"
        if status == 429:
            return LLMServiceError("rate_limited", f"{message} (after {attempts} attempts)", attempts)
        if status == 400 and _is_context_overflow(exc):
            return LLMServiceError("context_length", message, 1)
        if status >= 500 or status in (408, 409):
            return LLMServiceError("server_error", f"{message} (after {attempts} attempts)", attempts)
        return LLMServiceError("rejected", message, 1)
    if isinstance(exc, openai.APITimeoutError):
        return LLMServiceError(
            "timeout", f"no answer within the request timeout, {attempts} attempts", attempts
        )
    if isinstance(exc, openai.APIConnectionError):
        return LLMServiceError("connection", f"{exc} ({attempts} attempts)", attempts)
    return LLMServiceError("invalid_reply", f"{type(exc).__name__}: {_clip(str(exc))}", 1)


def from_spec(spec: Any) -> OpenAICompatibleLLM:
    """The registry's factory: `--llm openai:MODEL` with `--base-url`, `--api-key`, `--request-timeout`
    and `--call-deadline`."""
    options: dict[str, Any] = {}
    if spec.request_timeout is not None:
        options["timeout"] = spec.request_timeout
    if spec.call_deadline is not None:
        options["deadline_s"] = spec.call_deadline
    return OpenAICompatibleLLM(spec.model or "", base_url=spec.base_url, api_key=spec.api_key, **options)


def label(entry: dict[str, Any]) -> str:
    """A stored configuration entry in words (for reports)."""
    return f"{entry.get('model')} at {entry.get('base_url')}"
