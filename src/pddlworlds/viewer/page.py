"""The one self-contained HTML file: the page's template, style and script (package data) with the data inlined.

Nothing is fetched when the file opens: the script and style are inlined, and the data sits in
`<script type="application/json">` blocks, the run page's in one and each episode's in its own, which the
script parses only when that episode is opened (so a run of hundreds of episodes renders its first page fast).
Every stored value is untrusted: the script escapes all it lays out, and the page's Content-Security-Policy
allows no inline code but the page's own script and style, named by their sha256 (computed here, when the page
is built), so an event handler that got into the markup all the same would not run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

from ..artefacts.runs import RunFolder
from ..files import atomic_write
from .pagedata import page_data
from .runs import ViewerError, read_run

__all__ = ["build_html", "csp_source", "render", "write_page"]

_MARKER = re.compile(r"/\*@(\w+)@\*/|@(TITLE|SCRIPT_HASH|STYLE_HASH)@|<!--@(\w+)@-->")


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def _json_block(value: Any) -> str:
    """JSON safe inside a <script> element: every `<` escaped, so no `</script>` or `<!--` can end it early."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c")


#: A memory view that repeats at least this many leading characters of the previous step's is stored as
#: (shared length, new tail): a history grows at its end, so this keeps a long run's page several times smaller.
SHARED_PREFIX_MIN = 64


def compact_memory(detail: dict[str, Any]) -> dict[str, Any]:
    """The episode with each step's `memory_view` as `memory_delta` [shared, tail] where that is shorter.

    The page's script rebuilds `memory_view = previous[:shared] + tail` exactly, step by step.
    """
    steps = []
    previous: str | None = None
    for step in detail["steps"]:
        view = step.get("memory_view")
        if isinstance(view, str) and previous:
            shared = len(os.path.commonprefix([previous, view]))
            if shared >= SHARED_PREFIX_MIN:
                step = {k: v for k, v in step.items() if k != "memory_view"}
                step["memory_delta"] = [shared, view[shared:]]
        steps.append(step)
        previous = view if isinstance(view, str) else None
    return {**detail, "steps": steps}


def csp_source(text: str) -> str:
    """The Content-Security-Policy source that allows exactly this inline script or style: its sha256."""
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return f"'sha256-{digest}'"


def build_html(runs: list[RunFolder], replay: bool = True) -> str:
    """The page for `runs` as one HTML string."""
    data, details = page_data(runs, replay=replay)
    return render(data, details)


def render(data: dict[str, Any], details: list[dict[str, Any]]) -> str:
    """The page for computed page data (`page_data`'s pair) as one HTML string."""
    title = "pddlworlds runs: " + ", ".join(r["name"] for r in data["runs"])
    blocks = "\n".join(
        f'<script type="application/json" id="ep-{i}">{_json_block(compact_memory(detail))}</script>'
        for i, detail in enumerate(details)
    )
    style, script = _asset("viewer.css"), _asset("viewer.js")
    parts = {
        "STYLE": style,
        "STYLE_HASH": csp_source(style),
        "TITLE": html.escape(title),
        "DATA": _json_block(data),
        "EPISODES": blocks,
        "SCRIPT": script,
        "SCRIPT_HASH": csp_source(script),
    }
    # One pass, so that nothing inserted (a record's text) is ever taken for a marker.
    return _MARKER.sub(lambda m: parts[m.group(1) or m.group(2) or m.group(3)], _asset("viewer.html"))


def write_page(run_dirs: list[str | Path], out: str | Path | None = None, replay: bool = True) -> Path:
    """Read the run folders, write the page to `out` (default: `view.html` in the first folder), return its path."""
    if not run_dirs:
        raise ValueError("give at least one run folder")
    runs = [read_run(d) for d in run_dirs]
    target = Path(out) if out is not None else Path(run_dirs[0]) / "view.html"
    if target.is_dir():
        raise ViewerError(f"{target}: is a folder; give --out a file name (e.g. {target / 'view.html'})")
    page = build_html(runs, replay=replay)
    try:
        atomic_write(target, page)
    except OSError as exc:  # a read-only folder, a full disk, a path through a file
        raise ViewerError(f"{target}: cannot write the page ({exc.strerror or exc})") from exc
    return target
