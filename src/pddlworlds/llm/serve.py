"""`pddlworlds serve`: the embedded model behind llama-cpp-python's own OpenAI-compatible server.

One process loads the model (default: Gemma 3 270M + the shipped adapter) exactly as the in-process
backend does, and any number of eval workers and other tools share it over HTTP:

    pddlworlds serve --port 8000
    pddlworlds eval --llm openai:pddlworlds --base-url http://127.0.0.1:8000/v1

What makes its greedy replies the in-process backend's:
- the prompt: a chat request's messages become the same text `EmbeddedLLM.chat` builds (plain text ending
  on the cue for the pretrained GGUF, Gemma's template for an `-it` one), tokenised the same way (BOS
  added, special tokens parsed). The GGUF carries no chat template, so llama-cpp-python alone would fall
  back to Llama-2's; the server's chat handler is ours;
- the model: loaded by `EmbeddedLLM` (same context size, threads, adapter, and `swa_full`, which
  llama-cpp-python's `ModelSettings` cannot set, so the prompt prefix is reused across calls as in-process);
- the sampler: llama-cpp-python's server applies a repeat penalty of 1.1 (and top-k 40, min-p 0.05) unless
  a request says otherwise; `OpenAICompatibleLLM` says otherwise (see `llm.dialects`).

It serves one request at a time (llama-cpp-python holds one lock around its model): workers queue.
`GET /pddlworlds/model` tells clients what is served: the model id and digest, its prompt format, its
context size, and whether the agents should show their in-context example (not to an adapter).
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .base import Message
from .embedded import SHIPPED_ADAPTER, EmbeddedLLM
from .prompt_formats import format_gemma_chat, format_plain

__all__ = ["INFO_PATH", "INSTALL_HINT", "ServeOptions", "build_app", "chat_handler", "serve", "served_info"]

INSTALL_HINT = "pip install 'pddlworlds[server]'"
#: The route that describes the served model (JSON), beside llama-cpp-python's own routes.
INFO_PATH = "/pddlworlds/model"
_SERVER_MODULES = ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings")


@dataclass(frozen=True)
class ServeOptions:
    """What `pddlworlds serve` loads and where it listens. `model`: a GGUF path (None: the default
    model); `lora`: an adapter GGUF, "none", or None for the shipped adapter on the default model; `name`:
    the model name the server answers to (None: the model's id, as the run configuration records it)."""

    model: str | None = None
    lora: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    n_ctx: int = 16384
    n_threads: int | None = None
    prompt_format: str = "auto"
    api_key: str | None = None
    name: str | None = None


def chat_handler(prompt_format: str) -> Callable[..., Any]:
    """A llama-cpp-python chat handler that writes the prompt as `EmbeddedLLM.chat` does."""
    from llama_cpp import llama_chat_format

    render = format_gemma_chat if prompt_format == "chat" else format_plain

    def formatter(*, messages: list[dict[str, Any]], **_: Any) -> Any:
        turns = []
        for i, message in enumerate(messages):
            content = message.get("content")
            if not isinstance(content, str):
                raise TypeError(f"message {i}: only text content is served, not {type(content).__name__}")
            turns.append(Message(str(message.get("role")), content))
        return llama_chat_format.ChatFormatterResponse(prompt=render(turns))

    return llama_chat_format.chat_formatter_to_chat_completion_handler(formatter)


def served_info(llm: EmbeddedLLM, name: str) -> dict[str, Any]:
    """What `GET /pddlworlds/model` answers (the OpenAI-compatible backend records it and follows
    `in_context_example`)."""
    return {
        "name": name,
        "model_id": llm.model_id,
        "model_sha256": llm.model_sha256,
        "prompt_format": llm.prompt_format,
        "n_ctx": int(llm.llama.n_ctx()),  # llama.cpp rounds the size asked for up to a multiple of 256
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

    lora = SHIPPED_ADAPTER if options.lora is None else options.lora
    llm = EmbeddedLLM(
        options.model, n_ctx=options.n_ctx, n_threads=options.n_threads, lora_path=lora,
        prompt_format=options.prompt_format,
    )
    llm.llama.chat_handler = chat_handler(llm.prompt_format)
    name = options.name or llm.model_id
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
