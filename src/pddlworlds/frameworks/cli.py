"""`pddlworlds env-server`: the OpenEnv environment server (see `frameworks.openenv_env`); `pddlworlds export`:
the expert's episodes as a dataset (see `frameworks.expert_data`).

This module imports only the standard library and the catalogue at import time: the main CLI builds its
parser for every command.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

from ..host import is_loopback
from ..worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS, DEFAULT_SPLIT
from ..worlds.profiles import DEFAULT_PROFILE
from ..worlds.text import OBSERVATION_MODES
from . import API_KEY_VARIABLE, DEFAULT_MAX_SESSIONS

__all__ = ["add_parsers", "api_key", "cmd_env_server", "cmd_export"]

DEFAULT_PORT = 8001
#: The longest `--session-timeout`: a day.
MAX_SESSION_TIMEOUT_S = 86_400


def cmd_env_server(args: argparse.Namespace) -> int:
    from .episodes import EpisodeOptions

    if not 0 < args.port < 65536:
        raise ValueError(f"--port must be between 1 and 65535, not {args.port}")
    if not 1 <= args.max_sessions <= 4096:
        raise ValueError(f"--max-sessions must be between 1 and 4096, not {args.max_sessions}")
    timeout = args.session_timeout
    if timeout is not None and not (math.isfinite(timeout) and 0 < timeout <= MAX_SESSION_TIMEOUT_S):
        raise ValueError(f"--session-timeout must be a number of seconds above 0 and at most "
                         f"{MAX_SESSION_TIMEOUT_S:,} (leave it out for none), not {args.session_timeout:g}")
    key, key_source = api_key(args.api_key)
    chosen = {"domain": args.domain, "split": args.split, "profile": args.profile, "problem": args.problem,
              "max_steps": args.max_steps, "reward": args.reward, "observation_mode": args.observation_mode}
    if args.domains_root is None:  # the shipped catalogue only
        defaults = EpisodeOptions.within(None, {**chosen, "domain": args.domain or "blocksworld"})
    else:  # the domains of this folder only, by name (a reset never names a path)
        defaults = EpisodeOptions.within(args.domains_root, chosen)
    try:
        from .openenv_env import serve
    except ImportError as exc:
        print(f"pddlworlds env-server: error: {exc}", file=sys.stderr)
        return 2

    def ready(url: str) -> None:
        keyed = f", API key required (from {key_source})" if key is not None else ""
        where = f" of {defaults.domains_root}" if defaults.domains_root is not None else ""
        print(f"pddlworlds env-server: serving {defaults.domain} ({defaults.split}){where} at {url}, WebSocket "
              f"{url.replace('http', 'ws', 1)}/ws, at most {args.max_sessions} sessions{keyed} (Ctrl-C stops it)",
              file=sys.stderr, flush=True)

    if key is None and not is_loopback(args.host):
        print(f"pddlworlds env-server: warning: listening on {args.host}, beyond this machine, without an API key: "
              f"anyone who reaches it can play (--api-key or {API_KEY_VARIABLE})", file=sys.stderr, flush=True)
    try:
        serve(args.host, args.port, defaults, args.max_sessions, timeout, on_ready=ready, api_key=key)
    except OSError as exc:  # the port in use, an unknown host
        print(f"pddlworlds env-server: error: {exc}", file=sys.stderr)
        return 2
    return 0


def _names(text: str | None) -> list[str] | None:
    """A comma-separated option as names (None, or "all", for every one)."""
    if text is None or text.strip().lower() == "all":
        return None
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise ValueError(f"a comma-separated list of names, not {text!r}")
    return names


def cmd_export(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from .expert_data import FORMATS, ExportRequest, export, write_rows

    for out in args.out:
        if Path(out).suffix not in FORMATS:
            raise ValueError(f"--out {out}: the file's suffix names its format, one of {', '.join(FORMATS)}")
    request = ExportRequest(domains=_names(args.domains), splits=_names(args.splits), problems=_names(args.problems),
                            limit=args.limit, profile=args.profile, observation_mode=args.observation_mode)
    start = time.perf_counter()
    result = export(request)
    if not result.rows:
        raise ValueError("no expert episode to export: " + "; ".join(f"{k}: {v}" for k, v in result.skipped.items()))
    for out in args.out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_rows(result.rows, out)
    splits = sorted({f"{r['domain']}/{r['split']}" for r in result.rows})
    print(f"pddlworlds export: {len(result.rows):,} rows (steps) of {result.episodes} expert episodes from "
          f"{len(splits)} splits ({', '.join(splits)}) to {', '.join(args.out)} in {time.perf_counter() - start:.1f} s",
          file=sys.stderr)
    if result.skipped:
        print(f"pddlworlds export: skipped {len(result.skipped)} problems without an expert episode (no stored plan "
              f"or proof the expert plays): {', '.join(result.skipped)}", file=sys.stderr)
    return 0


def api_key(flag: str | None) -> tuple[str | None, str]:
    """The key clients must send, and where it came from: `--api-key`, else `PDDLWORLDS_API_KEY` (unset or
    empty: no key)."""
    key, source = (flag, "--api-key") if flag is not None else (os.environ.get(API_KEY_VARIABLE) or None, API_KEY_VARIABLE)
    if key is not None and not key.strip():
        raise ValueError(f"{source} must not be empty (leave it out for a server without a key)")
    return key, source


def add_parsers(subparsers: Any) -> None:
    """Add `env-server` and `export` to the main CLI's subparsers."""
    p = subparsers.add_parser(
        "env-server",
        help="serve pddlworlds episodes as an OpenEnv environment (HTTP and WebSocket)",
        description="Serve pddlworlds as an OpenEnv environment: each WebSocket session plays episodes whose "
        "domain, split, profile and problem its reset chooses (these options are the defaults; a default "
        "--problem applies to its own domain and split). Clients: "
        "pddlworlds.frameworks.openenv_client.PDDLWorldsClient, or any OpenEnv client. Needs the openenv "
        "extra: pip install 'pddlworlds[openenv]'.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT})")
    p.add_argument("--max-sessions", type=int, default=DEFAULT_MAX_SESSIONS,
                   help=f"concurrent sessions; one more is refused with CAPACITY_REACHED (default: {DEFAULT_MAX_SESSIONS})")
    p.add_argument("--session-timeout", type=float, default=None, metavar="SECONDS",
                   help="close a session idle this long (default: never)")
    p.add_argument("--domain", default=None,
                   help="default domain (default: blocksworld, or with --domains-root its first domain)")
    p.add_argument("--domains-root", default=None, metavar="DIR",
                   help="serve the domain folders under DIR (laid out as pddl_domains/) instead of the shipped "
                   "ones; a reset names one by its folder name, never a path (default: the shipped domains)")
    p.add_argument("--split", default=None,
                   help=f"default split (default: {DEFAULT_SPLIT}, or the domain's first split not held out if it has none of that name)")
    p.add_argument("--profile", default=DEFAULT_PROFILE, help=f"default profile (default: {DEFAULT_PROFILE})")
    p.add_argument("--problem", default=None, help="default problem (default: picked by the reset's seed)")
    p.add_argument("--max-steps", type=int, default=None,
                   help=f"default step budget (default: each problem's own, {DEFAULT_MAX_EPISODE_STEPS} or a ladder band's)")
    p.add_argument("--reward", default="progress", choices=["progress", "success"],
                   help="default reward: the increase of progress, or 1.0 on success (default: progress)")
    p.add_argument("--observation-mode", default=None, choices=list(OBSERVATION_MODES),
                   help="default observation mode (default: the domain's)")
    p.add_argument("--api-key", default=None,
                   help=f"require this key from clients on every route and WebSocket (Authorization: Bearer KEY); "
                   f"default: ${API_KEY_VARIABLE} if set, else none")
    p.set_defaults(func=cmd_env_server)

    p = subparsers.add_parser(
        "export",
        help="write the planner's expert episodes as a dataset (JSON Lines, Parquet)",
        description="Write the expert's episodes (the stored optimal plans, and claims of impossible on the "
        "proven unsolvable problems of splits that offer it) as one row per step: the chat so far (prompt), "
        "the expert's reply (completion), its action, the valid actions, the problem, its proven optimal "
        "length, the steps to go and the progress. TRL's SFTTrainer and datasets.load_dataset read it as it "
        "is. Held-out splits (names with 'heldout') are exported only when --splits names them.",
    )
    p.add_argument("--out", action="append", required=True, metavar="FILE",
                   help="file to write, .jsonl or .parquet (repeat for both)")
    p.add_argument("--domains", default=None, help="comma-separated domains (default: all)")
    p.add_argument("--splits", default=None,
                   help="comma-separated splits (default: every split of each domain that is not held out)")
    p.add_argument("--problems", default=None, help="comma-separated problems (default: all of each split)")
    p.add_argument("--limit", type=int, default=None, help="at most this many problems of each split")
    p.add_argument("--profile", default=DEFAULT_PROFILE, help=f"the episodes' profile (default: {DEFAULT_PROFILE})")
    p.add_argument("--observation-mode", default=None, choices=list(OBSERVATION_MODES),
                   help="the episodes' observation mode (default: the domain's)")
    p.set_defaults(func=cmd_export)
