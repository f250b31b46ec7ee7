"""The bodies `pddlworlds serve` answers with, in OpenAI's shapes, so that the `openai` client and tools
built on it (Inspect, lm-evaluation-harness) read them as OpenAI's own: a chat completion, a (legacy) text
completion, a list of embeddings, and a Responses API response.

A response holds one `message` item with one `output_text` part (the `openai` client's `output_text`
joins those), says `status: "incomplete"` with `incomplete_details.reason: "max_output_tokens"` where the
reply was cut by the token limit or the context's end, and repeats the request's settings as OpenAI does.
"""

from __future__ import annotations

import base64
import time
import uuid
from typing import Any

import numpy as np

from .base import Completion
from .serve_model import TextReply

__all__ = ["chat_body", "completion_body", "embeddings_body", "response_body"]


def _id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex}"


def chat_body(reply: Completion, model: str) -> dict[str, Any]:
    """A `chat.completion` holding the reply."""
    usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens}
    return {
        "id": _id("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": reply.text or reply.raw or ""},
            "logprobs": None,
            "finish_reason": reply.finish_reason or "stop",
        }],
        "usage": {**usage, "total_tokens": reply.prompt_tokens + reply.completion_tokens},
    }


def completion_body(replies: list[TextReply], model: str) -> dict[str, Any]:
    """A `text_completion` with one choice per prompt, in the order given; usage summed over them."""
    prompt = sum(r.prompt_tokens for r in replies)
    made = sum(r.completion_tokens for r in replies)
    return {
        "id": _id("cmpl-"),
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": i, "text": r.text, "logprobs": r.logprobs, "finish_reason": r.finish_reason}
                    for i, r in enumerate(replies)],
        "usage": {"prompt_tokens": prompt, "completion_tokens": made, "total_tokens": prompt + made},
    }


def embeddings_body(vectors: list[list[float]], tokens: int, as_base64: bool, model: str) -> dict[str, Any]:
    """A list of embeddings, each as floats or as base64 of little-endian float32 (what the `openai` client
    asks for by default and decodes itself)."""
    def shown(vector: list[float]) -> list[float] | str:
        return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode() if as_base64 else vector

    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": shown(v)} for i, v in enumerate(vectors)],
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def response_body(reply: Completion, request: dict[str, Any], temperature: float, model: str) -> dict[str, Any]:
    """A `response` with the reply as its one message, the request's settings repeated."""
    cut = reply.finish_reason == "length"
    status = "incomplete" if cut else "completed"
    text = reply.text or reply.raw or ""
    message = {"type": "message", "id": _id("msg_"), "status": status, "role": "assistant",
               "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]}
    return {
        "id": _id("resp_"),
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "model": model,
        "output": [message],
        "parallel_tool_calls": False,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": temperature,
        "text": {"format": {"type": "text"}},
        "tool_choice": "none",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": reply.prompt_tokens,
            "input_tokens_details": {"cached_tokens": reply.cached_tokens or 0},
            "output_tokens": reply.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
        "metadata": {},
    }
