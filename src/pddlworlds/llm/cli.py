"""`pddlworlds serve`: the embedded model behind an OpenAI-compatible server (see `llm.serve`).

This module imports only the standard library at import time: the main CLI builds its parser for every
command.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parsers", "cmd_serve"]


def cmd_serve(args: argparse.Namespace) -> int:
    from .model_files import SHIPPED_ADAPTER
    from .serve import ServeOptions, serve

    options = ServeOptions(
        model=args.model, lora=args.lora or SHIPPED_ADAPTER, host=args.host, port=args.port, n_ctx=args.n_ctx,
        n_threads=args.threads, prompt_format=args.prompt_format, api_key=args.api_key, name=args.name,
    )

    def ready(url: str) -> None:
        print(f"pddlworlds serve: listening at {url} (Ctrl-C stops it); "
              f"pddlworlds eval --llm openai:{args.name or 'MODEL'} --base-url {url}", file=sys.stderr, flush=True)

    try:
        return serve(options, on_ready=ready)
    except (ImportError, OSError) as exc:  # the server extra missing, no model file, the port taken
        print(f"pddlworlds serve: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C while the model loads
        print("pddlworlds serve: interrupted before serving", file=sys.stderr)
        return 130


def add_parsers(subparsers: Any) -> None:
    """Add `serve` to the main CLI's subparsers."""
    p = subparsers.add_parser(
        "serve",
        help="serve the embedded model over an OpenAI-compatible HTTP API",
        description="Load the embedded model once (default: Gemma 3 270M with the shipped adapter) and serve "
        "its chat route over an OpenAI-compatible HTTP API, prompting it as the in-process backend does, so "
        "that `pddlworlds eval --llm openai:NAME --base-url http://HOST:PORT/v1` gets the same greedy replies. "
        "One request runs at a time; SIGINT/SIGTERM stop it within seconds (exit 128+signal when a request "
        "was cut short). Needs the server extra: pip install 'pddlworlds[server]'.",
    )
    p.add_argument("--model", default=None, metavar="PATH.gguf", help="a GGUF file (default: the embedded model)")
    p.add_argument(
        "--lora", default=None, metavar="ADAPTER.gguf|none",
        help="a llama.cpp LoRA adapter; default: the adapter shipped in models/ on the default model; "
        "'none': the plain base model",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    p.add_argument("--n-ctx", type=int, default=16384, help="context size in tokens (default: 16384, as in-process; at most the model's training "
                   "context, 32768 for Gemma 3 270M)")
    # bounds checked by serve itself: its startup errors are one line, without the usage text
    p.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: as in-process)")
    p.add_argument(
        "--prompt-format", default="auto", choices=["auto", "plain", "chat"],
        help="plain text (pretrained GGUFs) or Gemma's chat template (-it GGUFs); auto: by the file's name",
    )
    p.add_argument("--name", default=None, help="the model name to serve under (default: the model's id)")
    p.add_argument("--api-key", default=None,
                   help="require this key from clients on every route (Authorization: Bearer KEY; default: none)")
    p.set_defaults(func=cmd_serve)
