"""Reading run folders as the viewer needs them: tolerant of runs in progress, resumed runs and bad lines.

The folder's format and its one reader are `artefacts.runs`; the viewer reads in its tolerant mode with its
own decoding (`fields.loads`: no NaN, no deep nesting, valid text) and the record's check in its page-safe
form (`record_problem` with `page_safe=True`: every field of its type, numbers a page holds exactly), so a
line that fails them is skipped with a `ViewerWarning` naming file and line (and shown on the page) instead
of stopping the page; a field a record lacks is shown as absent, one a newer version adds is carried along.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

from ..artefacts.runs import CONFIG_FILE, RunFolder, RunFolderError, record_problem
from ..artefacts.runs import read_run as read_run_folder
from .fields import budget_problem, loads

__all__ = ["ViewerError", "ViewerWarning", "read_run"]


class ViewerError(ValueError):
    """A folder cannot be shown; the message names the file and what is wrong."""


class ViewerWarning(UserWarning):
    """Something in a run was skipped (a bad line); the run is still shown."""


def read_run(path: str | Path) -> RunFolder:
    """Read one run folder; a torn last line (a run still writing, or killed) is skipped silently, every
    other skipped line (not JSON, not a page-safe episode record (`record_problem`), a duplicate of an
    episode already read: the first line counts) with a `ViewerWarning`."""
    check = functools.partial(record_problem, page_safe=True)
    try:
        run = read_run_folder(path, strict=False, decode=loads, check=check, page_safe=True)
    except RunFolderError as exc:
        raise ViewerError(str(exc)) from exc
    if problem := budget_problem(run.config):
        raise ViewerError(f"{run.path / CONFIG_FILE}: {problem}")
    for note in run.notes:
        warnings.warn(note, ViewerWarning, stacklevel=2)
    return run
