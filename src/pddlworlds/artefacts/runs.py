"""The run folder that `pddlworlds eval --out DIR` writes: its file names, its episode lines, one reader.

A run folder holds `config.json` (the run's configuration), `episodes.jsonl` (one JSON line per finished
episode: an `EpisodeRecord` plus the run's own `meta`, appended whole and fsync'ed, so a killed run leaves
at worst a torn last line), `errors.jsonl` (episodes that failed outside the agent) and, once reported,
`report.md` and `summary.json`. A finished run may keep its episodes gzipped as `episodes.jsonl.gz` (as the
results under docs/results/ do). Every reader (a resume, the report, the viewer, `pddlworlds compare`, the
scripts) goes through `read_episodes`, so torn and duplicate lines are dropped the same way everywhere, and
a gzipped file is read like a plain one: a torn last line is skipped, and of an episode stored twice the
first line counts (the one a resume kept).
"""

from __future__ import annotations

import functools
import gzip
import json
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ..records import MAX_DEPTH, EpisodeRecord, RecordError, check_stored, fields_problem, nesting_depth

__all__ = [
    "CONFIG_FIELDS",
    "CONFIG_FILE",
    "EPISODES_FILE",
    "ERRORS_FILE",
    "LOCK_FILE",
    "MAX_NOTES",
    "MAX_SKIPPED_KEPT",
    "MAX_UNPACKED_BYTES",
    "PACKED_EPISODES_FILE",
    "REPORT_FILE",
    "SUMMARY_FILE",
    "EpisodeKey",
    "EpisodeLines",
    "EpisodeMeta",
    "LineCheck",
    "RunFolder",
    "RunFolderError",
    "SkippedLine",
    "StoredEpisode",
    "config_problem",
    "config_setting",
    "episode_key",
    "episodes_file",
    "is_errored",
    "json_line",
    "planned_episodes",
    "read_config",
    "read_episodes",
    "read_run",
    "record_problem",
]

CONFIG_FILE = "config.json"
EPISODES_FILE = "episodes.jsonl"
PACKED_EPISODES_FILE = f"{EPISODES_FILE}.gz"  # a finished run's episodes, gzipped to be kept
ERRORS_FILE = "errors.jsonl"
LOCK_FILE = ".lock"
REPORT_FILE = "report.md"
SUMMARY_FILE = "summary.json"

#: The most bytes a gzipped episodes file may unpack to: a few kilobytes of gzip can unpack to gigabytes,
#: and a shared folder is anyone's.
MAX_UNPACKED_BYTES = 2 * 1024**3

#: (agent, domain, split, problem, seed): what makes an episode one episode of a run.
EpisodeKey = tuple[str, str, "str | None", str, "int | None"]

TORN = "torn last line (a run still writing it, or killed mid-write)"
CRASH_ADVICE = "only a torn last line is expected after a crash: fix or remove that line"


class RunFolderError(ValueError):
    """A run folder cannot be read; the message names the file, the line and what to do."""


def episode_key(line: Mapping[str, Any]) -> EpisodeKey:
    return (line["agent"], line["domain"], line.get("split"), line["problem"], line.get("seed"))


def episodes_file(folder: str | Path) -> Path:
    """The episodes file of a run folder: `episodes.jsonl`, or `episodes.jsonl.gz` when only it is there;
    `RunFolderError` when both are (which one is the run is not known)."""
    folder = Path(folder)
    plain, packed = folder / EPISODES_FILE, folder / PACKED_EPISODES_FILE
    if plain.is_file() and packed.is_file():
        raise RunFolderError(
            f"{folder}: holds both {EPISODES_FILE} and {PACKED_EPISODES_FILE}; keep the one that is the run"
        )
    return packed if packed.is_file() else plain


def _file_bytes(path: Path) -> bytes:
    """A file's bytes, unpacked when its name ends in `.gz`; `RunFolderError` naming it when it cannot be
    read, or is a damaged gzip (a torn copy is the file's fault, not the run's)."""
    try:
        if path.suffix != ".gz":
            return path.read_bytes()
        with gzip.open(path, "rb") as packed:
            data = packed.read(MAX_UNPACKED_BYTES + 1)
    except EOFError:
        raise RunFolderError(
            f"{path}: damaged gzip file: it ends before its end-of-stream marker (truncated, a copy cut short); "
            "copy or download it again"
        ) from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise RunFolderError(f"{path}: damaged gzip file ({exc}); copy or download it again") from None
    except OSError as exc:
        raise RunFolderError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if len(data) > MAX_UNPACKED_BYTES:
        raise RunFolderError(f"{path}: unpacks to more than {MAX_UNPACKED_BYTES:,} bytes; not read")
    return data


def is_errored(line: Mapping[str, Any]) -> bool:
    """An episode stopped by a fault outside the agent (an endpoint's): re-run on resume, never scored."""
    return bool(line.get("error"))


def json_line(data: Mapping[str, Any]) -> bytes:
    """One stored line: compact JSON, UTF-8, newline-terminated."""
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


@dataclass(frozen=True)
class EpisodeMeta:
    """The run's own keys of a stored episode (its `meta`): who played it, under what budget, when, where."""

    agent_name: str | None = None  # the name the agent gave itself (the record's `agent` is the run's)
    max_steps: int | None = None
    started_at: str | None = None
    finished_at: str | None = None
    host: str | None = None
    pid: int | None = None
    trial: int | None = None  # the trial of a multi-trial run

    @classmethod
    def of(cls, line: Mapping[str, Any]) -> EpisodeMeta:
        meta = line.get("meta") or {}
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in meta.items() if k in names}) if isinstance(meta, Mapping) else cls()


@dataclass
class StoredEpisode:
    """One episode line as read: the line as stored (what reports and the viewer read, fields a newer
    version added included), where it is, and the typed record and meta it holds (made on first use)."""

    line: dict[str, Any]
    number: int  # its line number in the file, from 1

    @functools.cached_property
    def record(self) -> EpisodeRecord:
        return EpisodeRecord.from_stored(self.line)

    @functools.cached_property
    def meta(self) -> EpisodeMeta:
        return EpisodeMeta.of(self.line)

    @property
    def key(self) -> EpisodeKey:
        return episode_key(self.line)


@dataclass(frozen=True)
class SkippedLine:
    """A line the reader left out, and why."""

    path: Path
    number: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}, line {self.number}: {self.reason}; skipped"

    @property
    def torn(self) -> bool:
        return self.reason == TORN

    @property
    def duplicate(self) -> bool:
        return self.reason.startswith("duplicate")


#: Skipped lines kept one by one (with their reasons); beyond this only counted, so that a file of a million
#: junk lines costs counters, not a million objects.
MAX_SKIPPED_KEPT = 1000
#: Skipped lines told one sentence each (`RunFolder.notes`); the rest in one sentence with their count.
MAX_NOTES = 20


@dataclass
class EpisodeLines:
    """What `read_episodes` found: the episodes, one per key in file order, and the lines it skipped (the
    first `MAX_SKIPPED_KEPT` of them kept, every one counted)."""

    path: Path
    episodes: list[StoredEpisode] = field(default_factory=list)
    skipped: list[SkippedLine] = field(default_factory=list)
    complete_bytes: int = 0  # where the last complete line ends (a repair cuts a torn line off there)
    unterminated: bool = False  # the last line is whole but lacks its newline
    skipped_count: int = 0
    torn: int = 0
    duplicates: int = 0

    def skip(self, line: SkippedLine) -> None:
        """Count a skipped line (and keep it, while fewer than `MAX_SKIPPED_KEPT` are kept)."""
        self.skipped_count += 1
        self.torn += line.torn
        self.duplicates += line.duplicate
        if len(self.skipped) < MAX_SKIPPED_KEPT:
            self.skipped.append(line)

    @property
    def lines(self) -> list[dict[str, Any]]:
        return [episode.line for episode in self.episodes]

    def skipped_words(self) -> str:
        """The torn and duplicate lines in words ("" when none), for reports and resumes."""
        parts = []
        if self.torn:
            parts.append("1 torn last line")
        if self.duplicates:
            parts.append(f"{self.duplicates} duplicate line(s) of episodes already read")
        return " and ".join(parts)


#: A line check: what is wrong with a decoded line as an episode record, or None.
LineCheck = Callable[[Any], "str | None"]


def record_problem(line: Any, *, page_safe: bool = False) -> str | None:
    """`records.check_stored` as a line check that lets fields be missing (a reader showing what is there)
    but the ones that place a line in a run (agent, domain, problem); `page_safe` as `check_stored`'s (the
    viewer's: a line a web page shows)."""
    if not isinstance(line, dict):
        return f"expected a JSON object, found {type(line).__name__}"
    missing = [name for name in ("agent", "domain", "problem") if not isinstance(line.get(name), str)]
    if missing:
        return f"no {', '.join(missing)}"
    try:
        check_stored(line, complete=False, page_safe=page_safe)
    except RecordError as exc:
        return exc.problem
    return None


def read_episodes(
    path: str | Path,
    strict: bool = True,
    *,
    decode: Callable[[bytes], Any] = json.loads,
    check: LineCheck = record_problem,
) -> EpisodeLines:
    """Every episode line of an `episodes.jsonl`, in file order, one per episode key.

    A torn last line (a run killed mid-write, or one still writing) and later copies of an episode already
    read are skipped and counted. When `strict` (a resume, a report), a line that is not JSON raises
    `RunFolderError`, and one that is not an episode record with every field of its type raises
    `records.RecordError` (`check_stored`), both naming file and line. Otherwise (the viewer) such a line is skipped and listed in `skipped`, judged by `check`
    (default: the record's field types, missing fields allowed); `decode` reads a line's JSON. A missing
    file reads as no episodes; a path ending in `.gz` is unpacked first (`RunFolderError` when the gzip is
    damaged).
    """
    path = Path(path)
    found = EpisodeLines(path)
    if not path.is_file():
        return found
    data = _file_bytes(path)
    end = data.rfind(b"\n") + 1  # bytes up to the last complete line
    found.complete_bytes = end
    raws = data[:end].split(b"\n")[:-1]
    tail = data[end:]
    first_of: dict[EpisodeKey, int] = {}

    def bad(number: int, reason: str, advice: str) -> None:
        if strict:
            raise RunFolderError(f"{path}, line {number}: {reason}; {advice}")
        found.skip(SkippedLine(path, number, reason))

    def take(raw: bytes, number: int, last: bool) -> bool:
        """Read one line; whether it was JSON."""
        if not raw.strip():
            return False
        try:
            line = decode(raw)
        except ValueError as exc:
            if last:
                found.skip(SkippedLine(path, number, TORN))
            else:
                bad(number, f"not valid JSON ({exc})", CRASH_ADVICE)
            return False
        if strict:  # a `RecordError` names the file, the line and the field
            check_stored(line, source=path, line_no=number)
            problem = None
        else:
            problem = check(line)
        if problem:
            found.skip(SkippedLine(path, number, problem))
        elif (key := episode_key(line)) in first_of:
            found.skip(SkippedLine(path, number, f"duplicate of line {first_of[key]}"))
        else:
            first_of[key] = number
            found.episodes.append(StoredEpisode(line, number))
        return True

    for number, raw in enumerate(raws, start=1):
        take(raw, number, last=False)
    if tail:  # a whole last line that only lacks its newline is read like any other
        found.unterminated = take(tail, len(raws) + 1, last=True)
    return found


#: The fields of `config.json` with their types (what `eval` writes; a field a config lacks is fine, one it
#: adds is carried along unchecked). Every reader of a config (a resume, the report, the viewer) goes through
#: `read_config`, which refuses a config whose fields have other types, naming the field.
CONFIG_FIELDS: dict[str, Any] = {
    "format": int,
    "package_version": str,
    "agents": dict[str, dict[str, Any]],
    "split": str,
    "domains": list[str],
    "domains_root": str | None,
    "domain_files": dict[str, dict[str, Any]],  # by domain: the sha256 of its files (`evaluation.configuration`)
    "problems": dict[str, list[str]],
    "seeds": list[Any],  # integers as `eval` writes them; any value a hand-made folder holds is shown as text
    "max_steps": int | None,
    "llm": dict[str, Any] | None,
    "prompts_version": str | None,
    "profile": str,
    "allow_impossible": bool,
    "impossible_rule": str | None,
    "prompt_file": dict[str, str] | None,
    "decoding": str,
    "trial": int | None,
    "insights": dict[str, Any] | None,
    "run_info": dict[str, Any],
}


def config_problem(config: Any, *, page_safe: bool = False) -> str | None:
    """What is wrong with a decoded `config.json` (not an object, a field of another type, nested deeper than
    `records.MAX_DEPTH`), in words naming the field; None when nothing. `page_safe` as `check_stored`'s."""
    if not isinstance(config, dict):
        return f"expected a JSON object, found {type(config).__name__}"
    if nesting_depth(config) > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    return fields_problem(CONFIG_FIELDS, config, page_safe=page_safe)


def config_setting(config: Mapping[str, Any]) -> str:
    """The setting a stored configuration names: `setting`, or the `decoding` key runs made before settings
    had names wrote ("admissible"), else "free"."""
    return str(config.get("setting") or config.get("decoding") or "free")


def planned_episodes(config: Mapping[str, Any]) -> int:
    """How many episodes a stored configuration plans: every agent on every problem with every seed (the
    length of `evaluation.RunPlan.episodes()` for the plan the config was built from)."""
    problems = sum(len(names) for names in config.get("problems", {}).values())
    return len(config.get("agents", {})) * problems * len(config.get("seeds", [0]))


def read_config(
    path: str | Path, decode: Callable[[bytes], Any] = json.loads, *, page_safe: bool = False
) -> dict[str, Any] | None:
    """A run's `config.json` (None when the file is absent); `RunFolderError` naming the file and what is
    wrong when it is not JSON, or not a run configuration (`config_problem`)."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        config = decode(path.read_bytes())
    except RecursionError:
        raise RunFolderError(f"{path}: not valid JSON (nested too deep to read)") from None
    except ValueError as exc:
        raise RunFolderError(f"{path}: not valid JSON ({exc})") from exc
    except OSError as exc:
        raise RunFolderError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if problem := config_problem(config, page_safe=page_safe):
        raise RunFolderError(f"{path}: not a run configuration: {problem}")
    return config


@dataclass
class RunFolder:
    """One run folder as read: its configuration ({} when it has none yet) and its episodes."""

    path: Path
    config: dict[str, Any]
    episodes: EpisodeLines

    @property
    def lines(self) -> list[dict[str, Any]]:
        return self.episodes.lines

    @property
    def notes(self) -> list[str]:
        """The lines skipped for a reason worth telling (all but a torn last line), one sentence each for the
        first `MAX_NOTES`, then one sentence counting the rest."""
        told = [str(line) for line in self.episodes.skipped if not line.torn][:MAX_NOTES]
        rest = self.episodes.skipped_count - self.episodes.torn - len(told)
        if rest > 0:
            told.append(f"{self.episodes.path}: {rest:,} more line(s) skipped for such reasons (not listed)")
        return told


def read_run(
    folder: str | Path,
    strict: bool = True,
    *,
    decode: Callable[[bytes], Any] = json.loads,
    check: LineCheck = record_problem,
    page_safe: bool = False,
) -> RunFolder:
    """Read a run folder written by `pddlworlds eval --out DIR`, its episodes plain or gzipped
    (`episodes_file`; `strict`, `decode` and `check` as for `read_episodes`, `page_safe` as for
    `read_config`); `RunFolderError` when it is none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise RunFolderError(
            f"{folder}: not a folder (give a run folder written by `pddlworlds eval --out DIR`)"
        )
    config = read_config(folder / CONFIG_FILE, decode, page_safe=page_safe)
    path = episodes_file(folder)
    if config is None and not path.is_file():
        raise RunFolderError(
            f"{folder}: not a run folder: it has neither {CONFIG_FILE} nor {EPISODES_FILE} "
            "(written by `pddlworlds eval --out DIR`)"
        )
    episodes = read_episodes(path, strict, decode=decode, check=check)
    return RunFolder(folder, config or {}, episodes)
