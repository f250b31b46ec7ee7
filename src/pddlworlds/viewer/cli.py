"""`pddlworlds view RUN_DIR [RUN_DIR ...]`: write the viewer page, or serve it on 127.0.0.1."""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import warnings
from pathlib import Path
from typing import Any

from ..printable import printable
from .page import write_page
from .runs import ViewerError, ViewerWarning

__all__ = ["add_parsers", "cmd_view", "serve"]


def serve(page: Path, port: int = 0) -> None:
    """Serve `page` (and nothing else) on 127.0.0.1 (port 0: a free one) until interrupted; opens no browser."""
    handler = functools.partial(PageHandler, page)
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise ViewerError(f"--port {port}: cannot serve on 127.0.0.1:{port} ({exc.strerror or exc})") from exc
    with server:
        print(f"serving http://127.0.0.1:{server.server_address[1]}/{page.name} (Ctrl-C to stop)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


class PageHandler(http.server.BaseHTTPRequestHandler):
    """Answers `/` and `/<page name>` with the page as it is on disk now; anything else is 404."""

    def __init__(self, page: Path, *args: Any, **kwargs: Any) -> None:
        self.page = page
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] not in ("/", f"/{self.page.name}"):
            self.send_error(404, "only the viewer page is served here")
            return
        body = self.page.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def port_number(text: str) -> int:
    """A TCP port, 0 to 65535 (0: a free one), for argparse."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0 to 65535; 0: a free one)")
    return port


def cmd_view(args: argparse.Namespace) -> int:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ViewerWarning)
        page = write_page(args.run_dirs, args.out, replay=not args.no_replay)
    for warning in caught:
        if issubclass(warning.category, ViewerWarning):
            print(f"pddlworlds view: warning: {printable(warning.message)}", file=sys.stderr)
    print(page)
    if args.serve:
        serve(page, args.port)
    return 0


def add_parsers(subparsers: Any) -> None:
    """Add `view` to the main CLI's subparsers."""
    p = subparsers.add_parser(
        "view",
        help="write one self-contained HTML page to browse runs (episodes, steps, memory, comparisons)",
        description="Read run folders written by `pddlworlds eval --out DIR` (finished, in progress or resumed) "
        "and write one HTML file with everything inlined: no network is needed to open it.",
    )
    p.add_argument(
        "run_dirs", nargs="+", metavar="RUN_DIR", help="run folder(s); several are shown side by side"
    )
    p.add_argument("--out", default=None, help="HTML file to write (default: RUN_DIR/view.html of the first)")
    p.add_argument("--serve", action="store_true", help="also serve the page on 127.0.0.1 (opens no browser)")
    p.add_argument("--port", type=port_number, default=0, help="port for --serve (default: a free one)")
    p.add_argument(
        "--no-replay", action="store_true", help="do not replay episodes to show how each action was parsed"
    )
    p.set_defaults(func=cmd_view)
