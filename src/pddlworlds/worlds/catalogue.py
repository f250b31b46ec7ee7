"""Where the worlds live: domain folders, their problem splits, and loading a problem as a task.

A domain is a folder holding `domain.pddl`, an optional `text.toml`, and `problems/<split>/*.pddl`.
The shipped folders are found inside the installed package (or beside `src/` in a checkout); any other
folder laid out the same way works too. Parsed tasks are cached on disk, keyed by the files' content,
because unified-planning's reader is by far the slowest step of loading a problem.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

from ..files import atomic_write
from .grounding import natural_key
from ..host import cache_dir
from .pddl import (
    MAX_PDDL_BYTES,
    Literal,
    LiftedTask,
    PDDLNormalisationWarning,
    Schema,
    read_pddl_bytes,
    read_task,
)

__all__ = [
    "Domain",
    "data_dir",
    "domains",
    "get_domain",
    "load_task",
    "check_split_name",
    "names_shipped_domain",
    "AGENTBOARD_SPLIT",
    "DEFAULT_MAX_EPISODE_STEPS",
    "DEFAULT_SPLIT",
]

#: The split of AgentBoard's problems, the one the HiAgent paper reports on.
AGENTBOARD_SPLIT = "agentboard"
DEFAULT_SPLIT = AGENTBOARD_SPLIT
#: The benchmark's step budget per episode.
DEFAULT_MAX_EPISODE_STEPS = 30
_CACHE_FORMAT = "2"


def data_dir(name: str) -> Path:
    """A data folder shipped with the package (`pddl_domains`, `planners`), installed or in a checkout."""
    here = Path(__file__).resolve().parents[1]  # the package root
    for candidate in (here / name, here.parents[1] / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"data folder {name!r} not found beside {here}; is the package installed whole?")


def check_split_name(split: str) -> str:
    """`split` if it is a plain name; a path is refused, so `split=` never loads an arbitrary folder."""
    text = os.fspath(split)
    if not text or text in (".", "..") or "/" in text or os.sep in text or (os.altsep and os.altsep in text):
        raise ValueError(
            f"split must be the name of one of the domain's splits, not a path: {text!r}; to play problem "
            "files of your own, use pddlworlds.make_env(domain_file, [problem files]) (or the CLI's "
            "explicit problem-folder option where it has one)"
        )
    return text


def names_shipped_domain(text: str | os.PathLike) -> bool:
    """Whether `text` names a shipped domain rather than a file: a shipped name wins over a file of that
    name in the working directory; a path (a separator, or a `.pddl` name) always means the file."""
    text = os.fspath(text)
    if "/" in text or os.sep in text or text.lower().endswith(".pddl"):
        return False
    return text.lower() in domains()


@dataclass(frozen=True)
class Domain:
    name: str
    folder: Path

    @property
    def domain_file(self) -> Path:
        return self.folder / "domain.pddl"

    @property
    def text_file(self) -> Path:
        return self.folder / "text.toml"

    def splits(self) -> list[str]:
        root = self.folder / "problems"
        return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []

    def problems(self, split: str = DEFAULT_SPLIT) -> list[str]:
        folder = self.folder / "problems" / check_split_name(split)
        if not folder.is_dir():
            raise ValueError(
                f"domain {self.name!r} has no split {split!r}; splits: {', '.join(self.splits()) or 'none'}"
            )
        return sorted((p.stem for p in folder.glob("*.pddl")), key=natural_key)

    def problem_file(self, problem: str, split: str = DEFAULT_SPLIT) -> Path:
        path = self.folder / "problems" / check_split_name(split) / f"{problem}.pddl"
        if not path.is_file():
            known = self.problems(split)
            raise ValueError(
                f"domain {self.name!r}, split {split!r} has no problem {problem!r}; problems: {', '.join(known)}"
            )
        return path

    def load(self, problem: str, split: str = DEFAULT_SPLIT) -> LiftedTask:
        return load_task(self.domain_file, self.problem_file(problem, split))


def domains(root: str | Path | None = None) -> dict[str, Domain]:
    """Every domain folder under `root` (default: the shipped ones), by folder name."""
    root = Path(root) if root is not None else data_dir("pddl_domains")
    return {
        p.name: Domain(p.name, p)
        for p in sorted(root.iterdir())
        if p.is_dir() and (p / "domain.pddl").is_file()
    }


def get_domain(name: str) -> Domain:
    known = domains()
    key = name.lower()
    if key not in known:
        raise ValueError(f"unknown domain {name!r}; domains: {', '.join(known)}")
    return known[key]


# --------------------------------------------------------------------------------------------------
# Disk cache of parsed tasks.


def _cache_dir() -> Path | None:
    if os.environ.get("PDDLWORLDS_NO_CACHE"):
        return None
    return cache_dir("tasks")


# Where a cached note named the files it was made from; replaced by the files of each later read.
_PROBLEM_MARK, _DOMAIN_MARK = "<problem file>", "<domain file>"


def _to_json(task: LiftedTask, notes: list[str]) -> str:
    data = asdict(task)
    data["init"] = sorted([name, list(args)] for name, args in task.init)
    data["notes"] = notes
    return json.dumps(data)


def _from_json(text: str) -> tuple[LiftedTask, list[str]]:
    d = json.loads(text)

    def lit(x) -> Literal:
        return Literal(x["predicate"], tuple(x["args"]), x["positive"])

    schemas = tuple(
        Schema(
            s["name"],
            tuple(s["parameters"]),
            tuple(s["types"]),
            tuple(map(lit, s["preconditions"])),
            tuple(map(lit, s["add"])),
            tuple(map(lit, s["delete"])),
        )
        for s in d["schemas"]
    )
    task = LiftedTask(
        domain_name=d["domain_name"],
        problem_name=d["problem_name"],
        predicates=tuple((n, tuple(p)) for n, p in d["predicates"]),
        schemas=schemas,
        objects=tuple((n, t) for n, t in d["objects"]),
        supertypes={k: tuple(v) for k, v in d["supertypes"].items()},
        init=frozenset((n, tuple(a)) for n, a in d["init"]),
        goal=tuple((n, tuple(a), p) for n, a, p in d["goal"]),
    )
    return task, d["notes"]


def load_task(
    domain_file: str | Path, problem_file: str | Path, *, max_file_bytes: int = MAX_PDDL_BYTES
) -> LiftedTask:
    """`read_task`, remembered on disk by content; normalisation warnings are repeated on a cache hit.

    Files are checked (present, at most `max_file_bytes`, UTF-8) before anything else reads them.
    """
    from ..version import __version__

    domain_file, problem_file = Path(domain_file), Path(problem_file)
    domain_bytes = read_pddl_bytes(domain_file, max_file_bytes)
    problem_bytes = read_pddl_bytes(problem_file, max_file_bytes)
    cache = _cache_dir()
    if cache is None:
        return read_task(domain_file, problem_file, max_file_bytes=max_file_bytes)
    key = hashlib.sha256(
        b"\0".join([_CACHE_FORMAT.encode(), __version__.encode(), domain_bytes, problem_bytes])
    ).hexdigest()
    entry = cache / f"{key}.json"
    if entry.is_file():
        try:
            task, notes = _from_json(entry.read_text())
        except (ValueError, KeyError, TypeError):
            entry.unlink(missing_ok=True)
        else:
            for note in notes:  # the entry is keyed by content: name the files read now, not the first ones
                note = note.replace(_PROBLEM_MARK, str(problem_file)).replace(_DOMAIN_MARK, str(domain_file))
                warnings.warn(note, PDDLNormalisationWarning, stacklevel=2)
            return task
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PDDLNormalisationWarning)
        task = read_task(domain_file, problem_file, max_file_bytes=max_file_bytes)
    notes = [str(w.message).replace(str(problem_file), _PROBLEM_MARK).replace(str(domain_file), _DOMAIN_MARK)
             for w in caught if issubclass(w.category, PDDLNormalisationWarning)]
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    try:
        atomic_write(entry, _to_json(task, notes))
    except OSError:
        pass  # a read-only cache only costs speed
    return task
