"""Reading run folders as the viewer needs them: tolerant of runs in progress, resumed runs and bad lines.

The folder's format and its one reader are `artefacts.runs`; the viewer reads in its tolerant mode, so a
line that is not an episode record is skipped with a `ViewerWarning` naming file and line (and shown on the
page) instead of stopping the page, and a field a newer version adds to a line is carried along.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from ..artefacts.runs import RunFolder, RunFolderError
from ..artefacts.runs import read_run as read_run_folder

__all__ = ["ViewerError", "ViewerWarning", "read_run"]


class ViewerError(ValueError):
    """A folder cannot be shown; the message names the file and what is wrong."""


class ViewerWarning(UserWarning):
    """Something in a run was skipped (a bad line); the run is still shown."""


def read_run(path: str | Path) -> RunFolder:
    """Read one run folder; a torn last line (a run still writing, or killed) is skipped silently, every
    other skipped line (not JSON, not an episode record, a duplicate) with a `ViewerWarning`."""
    try:
        run = read_run_folder(path, strict=False)
    except RunFolderError as exc:
        raise ViewerError(str(exc)) from exc
    for note in run.notes:
        warnings.warn(note, ViewerWarning, stacklevel=2)
    return run
