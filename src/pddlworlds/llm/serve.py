"""`pddlworlds serve`: the embedded model behind an OpenAI-compatible HTTP server of our own (Starlette on
uvicorn, from the server extra).

One process loads the model (default: Gemma 3 270M + the shipped adapter) exactly as the in-process
backend does, and any number of eval workers and other tools share it over HTTP:

    pddlworlds serve --port 8000
    pddlworlds eval --llm openai:pddlworlds --base-url http://127.0.0.1:8000/v1

Its greedy replies are the in-process backend's because `POST /v1/chat/completions` answers through
`EmbeddedLLM.chat` itself: the same prompt text, tokens, prompt-prefix reuse and sampler, on a model loaded
with the same context size, threads, adapter and `swa_full`. A request's `max_tokens`, `stop` and
`temperature` apply; its other sampling fields do not; a `developer` message is a system message. A prompt
over the context is answered with OpenAI's 400 `context_length_exceeded`. `POST /v1/responses` is the same
chat in the Responses API's shape (text in, text out: what Inspect's `openai/` provider calls);
`POST /v1/completions` completes plain text with token `logprobs` and `echo` (how lm-evaluation-harness
scores text) and `POST /v1/embeddings` gives mean-pooled embeddings (`serve_model`). `GET /v1/models` lists
the served name; `GET /pddlworlds/model` tells clients what is served (`serve_app.served_info`);
`POST /pddlworlds/tokenize/count` (`{"input": text}`) counts tokens as `EmbeddedLLM.count_tokens` does. What
the routes accept and refuse: `serve_app`, `serve_requests`.

This module checks the options before anything is allocated (`--n-ctx` against the model's training
context, read from its GGUF header), binds the port before the model loads (a port in use is one line, and
nothing is announced before the port is ours), and stops on SIGINT/SIGTERM within seconds: the call under
way is cancelled, waiting requests get 503, and `serve` returns 128 + the signal's number when that cut
work short (0 when it found the server idle). A second signal ends the process at once.
"""

from __future__ import annotations

import importlib.util
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..host import bind_port, url_host
from .model_files import SHIPPED_ADAPTER, default_model_path

__all__ = ["INSTALL_HINT", "ServeOptions", "build_app", "check_options", "serve"]

INSTALL_HINT = "pip install 'pddlworlds[server]'"
_SERVER_MODULES = ("starlette", "uvicorn", "anyio")
#: Seconds uvicorn waits, after a stop, for connections still open (a client slow to send its body).
GRACE_S = 3.0


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


def check_options(options: ServeOptions) -> None:
    """Refuse, in one line and before any allocation, what would fail or exhaust memory later: a port out
    of range, fewer than one thread, a context under 16 tokens, or over the one the model was trained for (the GGUF header's
    `<architecture>.context_length`; llama.cpp would allocate the whole KV cache before failing)."""
    from .gguf_header import read_header

    if not 0 < options.port < 65536:
        raise ValueError(f"--port must be between 1 and 65535, not {options.port}")
    if options.n_ctx < 16:
        raise ValueError(f"--n-ctx must be at least 16 tokens, not {options.n_ctx}")
    if options.api_key is not None and not options.api_key.strip():
        raise ValueError("--api-key must not be empty (leave it out for a server without a key)")
    if options.n_threads is not None and options.n_threads < 1:
        raise ValueError(f"--threads must be at least 1, not {options.n_threads}")
    path = Path(options.model) if options.model is not None else default_model_path()
    if not path.is_file():
        raise FileNotFoundError(f"model file not found: {path}")
    header = read_header(path)
    arch = header.metadata.get("general.architecture")
    trained = header.metadata.get(f"{arch}.context_length")
    if isinstance(trained, int) and options.n_ctx > trained:
        raise ValueError(f"--n-ctx {options.n_ctx} is more than the {trained} tokens {path.name} was trained for "
                         f"({arch}.context_length in its header); use at most {trained}")


def _check_installed() -> None:
    missing = [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(f"pddlworlds serve needs {', '.join(missing)}: {INSTALL_HINT}")


def build_app(options: ServeOptions) -> tuple[Any, Any]:
    """The ASGI app serving the model, and its `ServedModel` (the model is loaded here, once)."""
    _check_installed()
    from .embedded import EmbeddedLLM
    from .serve_app import ServedModel

    llm = EmbeddedLLM(  # the one place the --lora option becomes a file (`resolve_adapter`)
        options.model, n_ctx=options.n_ctx, n_threads=options.n_threads, lora_path=options.lora,
        prompt_format=options.prompt_format,
    )
    served = ServedModel(llm, options.name or llm.model_id, options.api_key)
    return served.app(), served


def serve(options: ServeOptions, on_ready: Callable[[str], None] | None = None) -> int:
    """Serve the model until SIGINT/SIGTERM; `on_ready(base_url)` once the port listens and the model is
    loaded. Returns the exit status: 0, or 128 + the signal when the stop cut a request short."""
    check_options(options)
    _check_installed()
    import uvicorn

    from .serve_app import StoppableServer, exit_at_once

    sock = bind_port(options.host, options.port)
    try:
        app, served = build_app(options)
        sock.listen(128)
        if on_ready is not None:
            on_ready(f"http://{url_host(options.host)}:{options.port}/v1")
        config = uvicorn.Config(app, log_level="warning", lifespan="off", interface="asgi3",
                                timeout_graceful_shutdown=GRACE_S)
        server = StoppableServer(config, served.stop)
        for sig in (signal.SIGINT, signal.SIGTERM):  # before uvicorn takes the signals and once it gives them back
            signal.signal(sig, exit_at_once)
        server.run(sockets=[sock])
    finally:
        sock.close()
    if server.stopped_by is None or not served.cut:
        return 0
    print(f"pddlworlds serve: stopped by {signal.Signals(server.stopped_by).name}; {served.cut} request(s) "
          "were cut short", file=sys.stderr, flush=True)
    return 128 + server.stopped_by
