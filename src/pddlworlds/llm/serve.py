"""`pddlworlds serve`: the embedded model behind llama-cpp-python's own OpenAI-compatible server.

One process loads the model (default: Gemma 3 270M + the shipped adapter) exactly as the in-process
backend does, and any number of eval workers and other tools share it over HTTP:

    pddlworlds serve --port 8000
    pddlworlds eval --llm openai:pddlworlds --base-url http://127.0.0.1:8000/v1

Its greedy replies are the in-process backend's because the chat route answers through `EmbeddedLLM.chat`
itself (llama-cpp-python's own chat path would not do: the GGUF carries no chat template, so it would fall
back to Llama-2's; it parses special tokens in message text; its sampler defaults to a repeat penalty of
1.1): the same prompt text (plain text ending on the cue for the pretrained GGUF, Gemma's template for an
`-it` one), the same tokens, the same prompt-prefix reuse, the same sampler, on a model loaded with the
same context size, threads, adapter and `swa_full` (which llama-cpp-python's `ModelSettings` cannot set).
A request's `max_tokens`, `stop` and `temperature` apply; its other sampling fields do not. A prompt over
the context is answered with OpenAI's 400 `context_length_exceeded`. The `/v1/completions` route is
llama-cpp-python's own, on the same model.

It serves one request at a time (llama-cpp-python holds one lock around its model): workers queue.
`GET /pddlworlds/model` tells clients what is served: the model id and digest, its prompt format, its
context size, and whether the agents should show their in-context example (not to an adapter).
`POST /pddlworlds/tokenize/count` (`{"input": text}`) counts tokens as `EmbeddedLLM.count_tokens` does.
"""

from __future__ import annotations

import contextlib
import importlib.util
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .base import Message
from .embedded import EmbeddedLLM
from .model_files import SHIPPED_ADAPTER

__all__ = ["COUNT_PATH", "INFO_PATH", "INSTALL_HINT", "ServeOptions", "build_app", "chat_handler", "serve", "served_info"]

INSTALL_HINT = "pip install 'pddlworlds[server]'"
#: The route that describes the served model (JSON), beside llama-cpp-python's own routes.
INFO_PATH = "/pddlworlds/model"
#: Token counts as the in-process backend counts: message text as text (llama-cpp-python's own
#: `/extras/tokenize/count` parses special tokens, so a text quoting `<eos>` would count differently).
COUNT_PATH = "/pddlworlds/tokenize/count"
_SERVER_MODULES = ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings")


@dataclass(frozen=True)
class ServeOptions:
    """What `pddlworlds serve` loads and where it listens. `model`: a GGUF path (None: the default
    model); `lora`: the `--lora` option (`SHIPPED_ADAPTER`: the shipped adapter on the default model, an
    adapter GGUF, "none"; None: no adapter); `name`:
    the model name the server answers to (None: the model's id, as the run configuration records it)."""

    model: str | None = None
    lora: str | None = SHIPPED_ADAPTER
    host: str = "127.0.0.1"
    port: int = 8000
    n_ctx: int = 16384
    n_threads: int | None = None
    prompt_format: str = "auto"
    api_key: str | None = None
    name: str | None = None


def chat_handler(llm: EmbeddedLLM, name: str) -> Callable[..., Any]:
    """A llama-cpp-python chat handler that answers through `llm.chat`: the in-process backend's own
    prompt, tokens, prompt-prefix reuse and sampler, with the request's `max_tokens`, `stop` and
    `temperature` (other sampling fields are not the in-process backend's and are not applied)."""

    def handler(
        *,
        messages: list[dict[str, Any]],
        max_tokens: int | None = None,
        stop: str | list[str] | None = None,
        temperature: float = 0.0,
        stream: bool = False,
        **_: Any,
    ) -> dict[str, Any]:
        if stream:
            raise ValueError("pddlworlds serve answers whole replies: send the request without stream")
        turns = []
        for i, message in enumerate(messages):
            content = message.get("content")
            if not isinstance(content, str):
                raise TypeError(f"message {i}: only text content is served, not {type(content).__name__}")
            turns.append(Message(str(message.get("role")), content))
        stops = [stop] if isinstance(stop, str) else list(stop or [])
        limit = max_tokens if max_tokens and max_tokens > 0 else llm.n_ctx
        reply = llm.chat(turns, max_tokens=limit, stop=stops, temperature=temperature)
        if reply.error is not None and reply.error.startswith("prompt of"):
            # the words llama-cpp-python's server turns into OpenAI's 400 `context_length_exceeded`
            raise ValueError(f"Requested tokens ({reply.prompt_tokens}) exceed context window of {llm.n_ctx}")
        if reply.error is not None and reply.error.startswith("llama.cpp:"):
            raise RuntimeError(reply.error)
        text = reply.text or reply.raw or ""
        usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens}
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": name,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "logprobs": None,
                    "finish_reason": "length" if reply.completion_tokens >= limit else "stop",
                }
            ],
            "usage": {**usage, "total_tokens": reply.prompt_tokens + reply.completion_tokens},
        }

    return handler


def served_info(llm: EmbeddedLLM, name: str) -> dict[str, Any]:
    """What `GET /pddlworlds/model` answers (the OpenAI-compatible backend records it and follows
    `in_context_example`)."""
    return {
        "name": name,
        "model_id": llm.model_id,
        "model_sha256": llm.model_sha256,
        "prompt_format": llm.prompt_format,
        "n_ctx": llm.n_ctx,
        "in_context_example": llm.in_context_example,
    }


def _check_installed() -> None:
    missing = [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(f"pddlworlds serve needs {', '.join(missing)}: {INSTALL_HINT}")


def build_app(options: ServeOptions) -> tuple[Any, EmbeddedLLM]:
    """llama-cpp-python's FastAPI app serving the model, and the model (loaded once, here)."""
    _check_installed()
    from llama_cpp.server import app as server_app
    from llama_cpp.server.model import LlamaProxy
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    llm = EmbeddedLLM(  # the one place the --lora option becomes a file (`resolve_adapter`)
        options.model, n_ctx=options.n_ctx, n_threads=options.n_threads, lora_path=options.lora,
        prompt_format=options.prompt_format,
    )
    name = options.name or llm.model_id
    llm.llama.chat_handler = chat_handler(llm, name)
    settings = ModelSettings(
        model=str(llm.model_path), model_alias=name, n_ctx=llm.n_ctx, n_threads=llm.n_threads,
        n_threads_batch=llm.n_threads, logits_all=False, verbose=False,
        lora_path=str(llm.lora_path) if llm.lora_path is not None else None,
    )

    class LoadedModel(LlamaProxy):  # type: ignore[misc]
        """llama-cpp-python's model holder, handed the model `EmbeddedLLM` loaded (its `ModelSettings`
        has no `swa_full`); every model name a request gives maps to it."""

        def load_llama_from_model_settings(self, _settings: Any) -> Any:  # type: ignore[override]
            return llm.llama

    server = ServerSettings(host=options.host, port=options.port, api_key=options.api_key, interrupt_requests=False)
    # create_app builds its model holder from the class its module names: ours, for this call only.
    with _replaced(server_app, "LlamaProxy", LoadedModel):
        app = server_app.create_app(server_settings=server, model_settings=[settings])
    info = served_info(llm, name)
    app.add_api_route(INFO_PATH, lambda: info, methods=["GET"], summary="The served model")
    from fastapi import Body, HTTPException

    def count(body: dict[str, Any] = Body(...)) -> dict[str, int]:  # noqa: B008 - FastAPI's way
        text = body.get("input")
        if not isinstance(text, str):
            raise HTTPException(status_code=400, detail="'input' must be a string")
        return {"count": llm.count_tokens(text)}

    app.add_api_route(COUNT_PATH, count, methods=["POST"], summary="Tokens of a text, special tokens as text")
    return app, llm


@contextlib.contextmanager
def _replaced(module: Any, attribute: str, value: Any) -> Any:
    saved = getattr(module, attribute)
    setattr(module, attribute, value)
    try:
        yield
    finally:
        setattr(module, attribute, saved)


def serve(options: ServeOptions, on_ready: Callable[[str], None] | None = None) -> None:
    """Load the model and serve it until interrupted; `on_ready(base_url)` once the model is loaded."""
    import uvicorn

    app, _llm = build_app(options)
    if on_ready is not None:
        on_ready(f"http://{options.host}:{options.port}/v1")
    uvicorn.run(app, host=options.host, port=options.port, log_level="warning")
