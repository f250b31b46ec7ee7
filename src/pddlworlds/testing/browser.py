"""Headless Chromium for the viewer's browser test and benchmark: the system browser, driven by Playwright.

No browser is downloaded: Playwright's Python package drives Debian's `chromium` (`/usr/bin/chromium`, or
`$PDDLWORLDS_CHROMIUM`) through `executable_path`, with networking extras turned off.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

__all__ = ["CHROMIUM_ARGS", "chromium_path", "launch", "unavailable_reason"]

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str | None:
    """The Chromium to drive: `$PDDLWORLDS_CHROMIUM`, /usr/bin/chromium, or `chromium` on the PATH."""
    for candidate in (os.environ.get("PDDLWORLDS_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def unavailable_reason() -> str | None:
    """Why no headless browser can run here (None when one can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install playwright, in the dev extra)"
    if chromium_path() is None:
        return "no Chromium at /usr/bin/chromium or on the PATH (apt-get install chromium)"
    return None


def launch(playwright: Any) -> Any:
    """A headless Chromium browser from a started `sync_playwright()`."""
    path = chromium_path()
    if path is None:
        raise RuntimeError(unavailable_reason() or "no Chromium")
    return playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)
