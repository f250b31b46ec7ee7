"""`pddlworlds serve`: the embedded model behind an OpenAI-compatible server (see `llm.serve`).

This module imports only the standard library at import time: the main CLI builds its parser for every
command.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..arguments import positive_int

__all__ = ["add_parsers", "cmd_serve"]


def cmd_serve(args: argparse.Namespace) -> int:
    from .model_files import SHIPPED_ADAPTER
    from .serve import ServeOptions, serve

    if not 0 < args.port < 65536:
        raise ValueError(f"--port must be between 1 and 65535, not {args.port}")
    if args.n_ctx < 16:
        raise ValueError(f"--n-ctx must be at least 16 tokens, not {args.n_ctx}")
    options = ServeOptions(
        model=args.model, lora=args.lora or SHIPPED_ADAPTER, host=args.host, port=args.port, n_ctx=args.n_ctx,
        n_threads=args.threads, prompt_format=args.prompt_format, api_key=args.api_key, name=args.name,
    )

    def ready(url: str) -> None:
        print(f"pddlworlds serve: listening at {url} (Ctrl-C stops it); "
              f"pddlworlds eval --llm openai:{args.name or 'MODEL'} --base-url {url}", file=sys.stderr, flush=True)

    try:
        serve(options, on_ready=ready)
    except (ImportError, FileNotFoundError) as exc:
        print(f"pddlworlds serve: error: {exc}", file=sys.stderr)
        return 2
    return 0


def add_parsers(subparsers: Any) -> None:
    """Add `serve` to the main CLI's subparsers."""
    p = subparsers.add_parser(
        "serve",
        help="serve the embedded model over an OpenAI-compatible HTTP API (llama-cpp-python's server)",
        description="Load the embedded model once (default: Gemma 3 270M with the shipped adapter) and serve "
        "it with llama-cpp-python's OpenAI-compatible server, prompting it as the in-process backend does, so "
        "that `pddlworlds eval --llm openai:NAME --base-url http://HOST:PORT/v1` gets the same greedy replies. "
        "One request runs at a time. Needs the server extra: pip install 'pddlworlds[server]'.",
    )
    p.add_argument("--model", default=None, metavar="PATH.gguf", help="a GGUF file (default: the embedded model)")
    p.add_argument(
        "--lora", default=None, metavar="ADAPTER.gguf|none",
        help="a llama.cpp LoRA adapter; default: the adapter shipped in models/ on the default model; "
        "'none': the plain base model",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    p.add_argument("--n-ctx", type=int, default=16384, help="context size in tokens (default: 16384, as in-process)")
    p.add_argument("--threads", type=positive_int, default=None, help="llama.cpp threads (default: as in-process)")
    p.add_argument(
        "--prompt-format", default="auto", choices=["auto", "plain", "chat"],
        help="plain text (pretrained GGUFs) or Gemma's chat template (-it GGUFs); auto: by the file's name",
    )
    p.add_argument("--name", default=None, help="the model name to serve under (default: the model's id)")
    p.add_argument("--api-key", default=None, help="require this key from clients (default: none)")
    p.set_defaults(func=cmd_serve)
