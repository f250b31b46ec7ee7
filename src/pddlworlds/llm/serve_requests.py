"""What `pddlworlds serve` accepts: a request body read within a size bound, then checked field by field.

Every refusal is a `RequestError`: an HTTP status (400, or 413 for a body over the bound) and a one-line
message naming the field and what is wrong, in OpenAI's error shape, so that the `openai` client raises
at once instead of retrying, and nothing is tokenised or evaluated for a request that is refused. This
module knows nothing of the model or of the web framework (the request is anything with `headers` and an
async `stream()`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from .base import Message

__all__ = ["COMPLETION_TOKENS", "DRAIN_BYTES", "MAX_INPUTS", "MAX_STOPS", "MAX_TOP_LOGPROBS", "ROLES", "ChatCall",
           "CompletionCall", "EmbeddingCall", "RequestError", "body_limit", "discard_body", "parse_chat",
           "parse_completion", "parse_count", "parse_embeddings", "parse_json", "parse_responses", "read_body"]

#: The roles a chat message may have: the in-process backend's (`prompt_formats` places them), and
#: "developer", which current OpenAI clients send for the system prompt and which is read as "system".
ROLES = ("system", "developer", "user", "assistant")
#: At most this many prompts (`/v1/completions`) or texts (`/v1/embeddings`) in one request.
MAX_INPUTS = 64
#: At most this many likeliest tokens per position (`logprobs`), as OpenAI allows.
MAX_TOP_LOGPROBS = 20
#: `/v1/completions`' `max_tokens` when the request has none (OpenAI's default).
COMPLETION_TOKENS = 16
#: At most this many stop sequences (each is searched for in the reply after every token).
MAX_STOPS = 16
#: Bytes of request body allowed per token of context: a token is at most 31 bytes of text in Gemma 3's
#: vocabulary, and JSON escapes at most double that for text (`\n`, `\"`); at least 1 MiB in all.
BYTES_PER_TOKEN = 64
MIN_BODY_BYTES = 1 << 20
#: At most this much of a refused body is read (and thrown away) before the refusal is sent; a larger one
#: is cut off with the connection.
DRAIN_BYTES = 16 << 20


class RequestError(Exception):
    """A request refused before any work: `status`, a one-line `message`, the `param` it names."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code

    def body(self) -> dict[str, Any]:
        """OpenAI's error shape."""
        kind = "invalid_request_error" if self.status < 500 else "server_error"
        return {"error": {"message": self.message, "type": kind, "param": self.param, "code": self.code}}


@dataclass(frozen=True)
class ChatCall:
    """A checked chat request: `max_tokens` None means up to the context's end."""

    messages: list[Message]
    max_tokens: int | None
    stop: list[str]
    temperature: float
    cache_prompt: bool = True


@dataclass(frozen=True)
class CompletionCall:
    """A checked `/v1/completions` request: each prompt is completed as text; `logprobs`: how many
    likeliest tokens to list per position (None: no logprobs); `echo`: the prompt comes back first."""

    prompts: list[str]
    max_tokens: int
    stop: list[str]
    temperature: float
    logprobs: int | None
    echo: bool
    cache_prompt: bool = True


@dataclass(frozen=True)
class EmbeddingCall:
    """A checked `/v1/embeddings` request: the texts, and whether vectors go back as base64 float32."""

    inputs: list[str]
    base64: bool


def body_limit(n_ctx: int) -> int:
    """The largest request body accepted for a context of `n_ctx` tokens (a prompt that fits is far less)."""
    return max(MIN_BODY_BYTES, BYTES_PER_TOKEN * n_ctx)


def _too_large(limit: int) -> RequestError:
    return RequestError(413, f"the request body is over {limit} bytes, more than any prompt that fits the "
                        "model's context; send less", code="request_too_large")


async def read_body(request: Any, limit: int) -> bytes:
    """The body, refused (413) as soon as its declared or received size passes `limit`: a large body is
    never held whole, let alone tokenised (what is left of it is read and thrown away, `discard_body`)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        await discard_body(request)
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    stream = request.stream()
    async for chunk in stream:
        size += len(chunk)
        if size > limit:
            await _discard(stream, DRAIN_BYTES - size)
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


async def discard_body(request: Any) -> None:
    """Read what a refused request sends, up to `DRAIN_BYTES`, and throw it away: a client that sends its
    whole body before reading the answer (urllib, requests) then gets the refusal, where closing the
    connection on unread data would reset it. A client that waits for `100 Continue` is not asked for it."""
    declared = request.headers.get("content-length", "")
    if request.headers.get("expect", "").lower() == "100-continue" or (declared.isdigit() and int(declared) > DRAIN_BYTES):
        return
    await _discard(request.stream(), DRAIN_BYTES)


async def _discard(stream: Any, budget: int) -> None:
    async for chunk in stream:
        budget -= len(chunk)
        if budget < 0:
            return


def parse_json(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object, or a 400 saying where it stops being one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(400, f"the body is not UTF-8 text (byte {raw[exc.start]:#04x} at offset {exc.start})") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RequestError(400, f"the body is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        raise RequestError(400, "the body's JSON is nested too deeply") from None
    if not isinstance(value, dict):
        raise RequestError(400, f"the body must be a JSON object, not {_kind(value)}")
    return value


def parse_chat(body: dict[str, Any]) -> ChatCall:
    """A `/v1/chat/completions` body, checked: text messages in the four roles, a positive token limit,
    stop sequences, a temperature in [0, 2]; `stream` is refused (replies are whole), and so is what would
    change the reply's form unseen: `logprobs` (the completions route lists them), tools and functions, a
    response format other than text. Sampling fields the in-process backend has no use for (`top_p`,
    `seed`, ...) are ignored."""
    _common(body)
    _text_only(body)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError(400, "messages must be a non-empty list of {\"role\", \"content\"} objects, not "
                           f"{_kind(messages)}", "messages")
    turns = [_message(i, m) for i, m in enumerate(messages)]
    limits = [_positive_int(body, name) for name in ("max_completion_tokens", "max_tokens")]
    return ChatCall(turns, next((n for n in limits if n is not None), None), _stops(body.get("stop")),
                    _temperature(body.get("temperature")), _cache_prompt(body))


def parse_completion(body: dict[str, Any]) -> CompletionCall:
    """A `/v1/completions` body, checked: a prompt (text, or a list of texts), `max_tokens` from 0 (default
    16, as OpenAI's), stop sequences, a temperature, `logprobs` from 0 to 20 and `echo`. Token-id prompts,
    `suffix`, `best_of` over 1 and `stream` are refused; other sampling fields are ignored."""
    _common(body)
    if not _is_one(body.get("best_of")):
        raise RequestError(400, f"best_of must be 1, not {_shown(body['best_of'])}", "best_of")
    if body.get("suffix") is not None:
        raise RequestError(400, "suffix is not supported: prompts are completed at their end", "suffix",
                           "unsupported_parameter")
    _check_type(body, "echo", bool)
    limit = body.get("max_tokens")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise RequestError(400, f"max_tokens must be a whole number of at least 0, not {_shown(limit)}", "max_tokens")
    logprobs = body.get("logprobs")
    if logprobs is not None and (not isinstance(logprobs, int) or isinstance(logprobs, bool)
                                 or not 0 <= logprobs <= MAX_TOP_LOGPROBS):
        raise RequestError(400, f"logprobs must be a whole number from 0 to {MAX_TOP_LOGPROBS}, not "
                           f"{_shown(logprobs)}", "logprobs")
    return CompletionCall(_texts(body, "prompt", allow_empty=True), COMPLETION_TOKENS if limit is None else limit,
                          _stops(body.get("stop")), _temperature(body.get("temperature")), logprobs,
                          bool(body.get("echo")), _cache_prompt(body))


def parse_embeddings(body: dict[str, Any]) -> EmbeddingCall:
    """A `/v1/embeddings` body, checked: `input` a non-empty text or a list of them, `encoding_format`
    "float" or "base64" (the `openai` client's default); `dimensions` is refused (the model's size only)."""
    _check_type(body, "model", str)
    shape = body.get("encoding_format")
    if shape not in (None, "float", "base64"):
        raise RequestError(400, f"encoding_format must be \"float\" or \"base64\", not {_shown(shape)}",
                           "encoding_format")
    if body.get("dimensions") is not None:
        raise RequestError(400, "dimensions is not supported: embeddings have the model's own size", "dimensions",
                           "unsupported_parameter")
    return EmbeddingCall(_texts(body, "input", allow_empty=False), shape == "base64")


def parse_responses(body: dict[str, Any]) -> ChatCall:
    """A `/v1/responses` body, checked and read as a chat: `instructions` (a system message first) and
    `input`, a text (one user message) or a list of message items whose content is a text or a list of
    `input_text`/`output_text` parts; `max_output_tokens`, `temperature`. Text in, text out: tools,
    reasoning, other item or part kinds, a stored conversation (`previous_response_id`), a format other
    than text and `stream`/`background` are refused (as OpenAI refuses `reasoning` for a model without it:
    Inspect asks once whether it may, and goes on without)."""
    _common(body)
    for name in ("previous_response_id", "conversation"):
        if body.get(name) is not None:
            raise RequestError(400, f"{name} is not supported: nothing is stored; send the whole conversation "
                               "as input", name, "unsupported_parameter")
    if body.get("background") is True:
        raise RequestError(400, "background is not supported: replies are whole", "background", "unsupported_parameter")
    reasoning = body.get("reasoning")
    if reasoning is not None and (not isinstance(reasoning, dict) or any(v is not None for v in reasoning.values())):
        raise RequestError(400, "reasoning is not supported: this model does not reason; send the request without "
                           "it", "reasoning", "unsupported_parameter")
    if body.get("tools") not in (None, []):
        raise RequestError(400, "tools are not supported: pddlworlds serve answers text only; send the request "
                           "without tools", "tools", "unsupported_parameter")
    text = body.get("text")
    shape = text.get("format") if isinstance(text, dict) else text
    if shape is not None and (not isinstance(shape, dict) or shape.get("type") != "text"):
        raise RequestError(400, f"text.format must be {{\"type\": \"text\"}} (structured output is not supported), "
                           f"not {_shown(shape)}", "text")
    messages: list[Message] = []
    if body.get("instructions") is not None:
        _check_type(body, "instructions", str)
        messages.append(Message("system", _valid(body["instructions"], "instructions", "instructions")))
    given = body.get("input")
    if isinstance(given, str):
        messages.append(Message("user", _valid(given, "input", "input")))
    elif isinstance(given, list) and given:
        messages += [_item(i, item) for i, item in enumerate(given)]
    else:
        raise RequestError(400, f"input must be a text or a non-empty list of message items, not {_kind(given)}",
                           "input")
    return ChatCall(messages, _positive_int(body, "max_output_tokens"), [], _temperature(body.get("temperature")),
                    _cache_prompt(body))


def parse_count(body: dict[str, Any]) -> str:
    """The text of a `/pddlworlds/tokenize/count` body (`{"input": text}`)."""
    text = body.get("input")
    if not isinstance(text, str):
        raise RequestError(400, f"input must be a string, not {_kind(text)}", "input")
    return _valid(text, "input", "input")


def _common(body: dict[str, Any]) -> None:
    """What every generating route refuses alike: streaming, several replies, a model name not a string."""
    if body.get("stream") is True:
        raise RequestError(400, "streaming is not supported: pddlworlds serve answers whole replies; send the "
                           "request without \"stream\": true", "stream", "unsupported_parameter")
    _check_type(body, "stream", bool)
    _check_type(body, "model", str)
    if not _is_one(body.get("n")):
        raise RequestError(400, f"n must be 1 (one reply per request), not {_shown(body['n'])}", "n")


def _is_one(value: Any) -> bool:
    """None or the number 1 (`true` is not a number, though Python's `True == 1`)."""
    return value is None or (type(value) is int and value == 1)


def _text_only(body: dict[str, Any]) -> None:
    """Refuse the chat fields that ask for more than one text reply, rather than answer without them."""
    _check_type(body, "logprobs", bool)
    if body.get("logprobs") is True or body.get("top_logprobs") is not None:
        name = "logprobs" if body.get("logprobs") is True else "top_logprobs"
        raise RequestError(400, f"{name} is not supported on /v1/chat/completions: send the prompt to "
                           "/v1/completions with \"logprobs\": N for the likeliest tokens", name, "unsupported_parameter")
    for name in ("tools", "functions"):
        if body.get(name) not in (None, []):
            raise RequestError(400, f"{name} are not supported: pddlworlds serve answers text only; send the "
                               f"request without {name}", name, "unsupported_parameter")
    for name in ("tool_choice", "function_call"):
        if body.get(name) not in (None, "none", "auto"):
            raise RequestError(400, f"{name} {_shown(body[name])} asks for a call: pddlworlds serve answers text "
                               "only", name, "unsupported_parameter")
    shape = body.get("response_format")
    if shape is not None and (not isinstance(shape, dict) or shape.get("type") != "text"):
        raise RequestError(400, f"response_format must be {{\"type\": \"text\"}} (structured output is not "
                           f"supported), not {_shown(shape)}", "response_format", "unsupported_parameter")


def _cache_prompt(body: dict[str, Any]) -> bool:
    """llama.cpp server's field: false evaluates the whole prompt afresh, so that a greedy reply does not
    depend on what earlier requests left in the cache (evaluated in other batches, the sums differ in the
    last bits and can flip a near-tie)."""
    _check_type(body, "cache_prompt", bool)
    return body.get("cache_prompt") is not False


def _texts(body: dict[str, Any], name: str, allow_empty: bool) -> list[str]:
    """`body[name]` as a list of texts: a text, or a list of 1 to `MAX_INPUTS` texts (not token ids)."""
    value = body.get(name)
    texts = [value] if isinstance(value, str) else value
    if not isinstance(texts, list) or not texts or len(texts) > MAX_INPUTS:
        raise RequestError(400, f"{name} must be a text or a list of 1 to {MAX_INPUTS} texts, not {_kind(value)}", name)
    for i, text in enumerate(texts):
        if not isinstance(text, str) or (not text and not allow_empty):
            words = "a non-empty text" if not allow_empty else "a text"
            raise RequestError(400, f"{name}[{i}] must be {words} (token ids are not accepted), not {_shown(text)}",
                               name)
        _valid(text, f"{name}[{i}]", name)
    return list(texts)


def _item(i: int, item: Any) -> Message:
    """One item of a Responses `input`: a message whose content is a text or a list of text parts."""
    where = f"input[{i}]"
    if not isinstance(item, dict) or item.get("type", "message") != "message":
        kind = _shown(item.get("type")) if isinstance(item, dict) else _kind(item)
        raise RequestError(400, f"{where} must be a message item (text in, text out), not {kind}", "input")
    content = item.get("content")
    if isinstance(content, list):
        texts = []
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind not in ("input_text", "output_text") or not isinstance(part.get("text"), str):
                shown = _shown(kind) if isinstance(part, dict) else _kind(part)
                raise RequestError(400, f"{where}.content[{j}] must be an input_text or output_text part with a text, "
                                   f"not {shown}", "input")
            texts.append(part["text"])
        content = "".join(texts)
    return _message(i, {"role": item.get("role"), "content": content}, where, "input")


def _message(i: int, message: Any, where: str = "", param: str = "messages") -> Message:
    where = where or f"messages[{i}]"
    if not isinstance(message, dict):
        raise RequestError(400, f"{where} must be an object with role and content, not {_kind(message)}", param)
    role = message.get("role")
    if role not in ROLES:
        raise RequestError(400, f"{where}.role must be one of {', '.join(ROLES)}, not {_shown(role)}", param)
    content = message.get("content")
    if not isinstance(content, str):
        raise RequestError(400, f"{where}.content must be a string (text only), not {_kind(content)}", param)
    return Message("system" if role == "developer" else role, _valid(content, f"{where}.content", param))


def _positive_int(body: dict[str, Any], name: str) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise RequestError(400, f"{name} must be a whole number of at least 1, not {_shown(value)}", name)
    return value


def _stops(value: Any) -> list[str]:
    stops = [] if value is None else [value] if isinstance(value, str) else value
    if not isinstance(stops, list) or len(stops) > MAX_STOPS:
        raise RequestError(400, f"stop must be a string or a list of at most {MAX_STOPS} strings", "stop")
    for i, stop in enumerate(stops):
        if not isinstance(stop, str) or not stop:
            raise RequestError(400, f"stop[{i}] must be a non-empty string, not {_shown(stop)}", "stop")
        _valid(stop, f"stop[{i}]", "stop")
    return list(stops)


def _temperature(value: Any) -> float:
    if value is None:
        return 0.0  # the in-process backend's: greedy
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or not 0 <= value <= 2:
        raise RequestError(400, f"temperature must be a number from 0 to 2, not {_shown(value)}", "temperature")
    return float(value)


def _check_type(body: dict[str, Any], name: str, kind: type) -> None:
    if body.get(name) is not None and not isinstance(body[name], kind):
        raise RequestError(400, f"{name} must be {_kind(kind())}, not {_kind(body[name])}", name)


def _valid(text: str, where: str, param: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RequestError(400, f"{where} is not valid Unicode text (it has a lone surrogate)", param) from None
    return text


def _kind(value: Any) -> str:
    """A JSON value's type in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    names = {str: "a string", int: "a number", float: "a number", list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)


def _shown(value: Any) -> str:
    """A value as JSON, escaped and cut short, for an error message."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:40] + "..."
