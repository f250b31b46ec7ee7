"""Reading run folders as the viewer needs them: tolerant of runs in progress, resumed runs and record versions.

The files are those `pddlworlds eval --out DIR` writes (`config.json`, `episodes.jsonl`); they are read as
plain JSON here rather than through the evaluation package, so the viewer opens runs written by older and
newer versions alike: a field a record lacks is shown as absent, a field it adds is carried along.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .fields import config_problem, line_problem, loads

__all__ = ["CONFIG_FILE", "EPISODES_FILE", "RunFolder", "ViewerError", "ViewerWarning", "read_run"]

CONFIG_FILE = "config.json"
EPISODES_FILE = "episodes.jsonl"

class ViewerError(ValueError):
    """A folder cannot be shown; the message names the file and what is wrong."""


class ViewerWarning(UserWarning):
    """Something in a run was skipped (a bad line); the run is still shown."""


@dataclass
class RunFolder:
    """One run folder as read: its config (empty when absent) and its episode lines, de-duplicated."""

    path: Path
    config: dict[str, Any]
    lines: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)  # what was skipped and why, shown on the page


def episode_key(line: dict[str, Any]) -> tuple[Any, ...]:
    """The runner's identity of an episode: (agent, domain, split, problem, seed)."""
    return (line.get("agent"), line.get("domain"), line.get("split"), line.get("problem"), line.get("seed"))


def read_run(path: str | Path) -> RunFolder:
    """Read one run folder; a torn last line (a run still writing, or killed) is skipped silently.

    Lines that are not JSON objects with agent, domain and problem, or whose fields do not have their record
    types (`fields.line_problem`), are skipped with a `ViewerWarning` naming file and line. An episode stored
    twice (a resumed run) keeps its last line.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise ViewerError(
            f"{folder}: not a folder (give a run folder written by `pddlworlds eval --out DIR`)"
        )
    config_path, episodes_path = folder / CONFIG_FILE, folder / EPISODES_FILE
    if not config_path.is_file() and not episodes_path.is_file():
        raise ViewerError(
            f"{folder}: not a run folder: it has neither {CONFIG_FILE} nor {EPISODES_FILE} "
            "(written by `pddlworlds eval --out DIR`)"
        )
    config: dict[str, Any] = {}
    if config_path.is_file():
        try:
            config = loads(config_path.read_bytes())
        except ValueError as exc:
            raise ViewerError(f"{config_path}: not valid JSON ({exc})") from exc
        except OSError as exc:
            raise ViewerError(f"{config_path}: cannot read ({exc.strerror or exc})") from exc
        if problem := config_problem(config):
            raise ViewerError(f"{config_path}: {problem}")
    notes: list[str] = []
    by_key: dict[tuple[Any, ...], dict[str, Any]] = {}
    if episodes_path.is_file():
        try:
            data = episodes_path.read_bytes()
        except OSError as exc:
            raise ViewerError(f"{episodes_path}: cannot read ({exc.strerror or exc})") from exc
        raw_lines = data.split(b"\n")
        complete = data.endswith(b"\n")
        for number, raw in enumerate(raw_lines, start=1):
            if not raw.strip():
                continue
            last = number == len(raw_lines)
            try:
                line = loads(raw)
            except ValueError as exc:
                if last and not complete:
                    continue  # torn last line: the run is still writing it, or was killed mid-write
                notes.append(f"{episodes_path}, line {number}: not valid JSON ({exc}); skipped")
                continue
            problem = line_problem(line)
            if problem:
                notes.append(f"{episodes_path}, line {number}: {problem}; skipped")
                continue
            key = episode_key(line)
            by_key.pop(key, None)  # the last line of an episode wins, placed where it was last written
            by_key[key] = line
    for note in notes:
        warnings.warn(note, ViewerWarning, stacklevel=2)
    return RunFolder(folder, config, list(by_key.values()), notes)

