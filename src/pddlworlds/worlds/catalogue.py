"""Where the worlds live: domain folders, their problem splits, and loading a problem as a task.

A domain is a folder holding `domain.pddl`, an optional `text.toml`, and `problems/<split>/*.pddl`.
The shipped folders are found inside the installed package (or beside `src/` in a checkout); any other
folder laid out the same way works too.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .cards import CARD_FILE, Card, read_card
from .grounding import natural_key
from .ladder import DEFAULT_MAX_EPISODE_STEPS, LADDER_SPLIT
from .pddl import MAX_PDDL_BYTES, LiftedTask, read_pddl_bytes, read_task

__all__ = [
    "AGENTBOARD_SPLIT",
    "DEFAULT_MAX_EPISODE_STEPS",
    "DEFAULT_SPLIT",
    "Domain",
    "check_split_name",
    "data_dir",
    "domains",
    "get_domain",
    "known_names",
    "load_task",
    "names_shipped_domain",
]

#: The split of AgentBoard's problems, the one the HiAgent paper reports on.
AGENTBOARD_SPLIT = "agentboard"
DEFAULT_SPLIT = AGENTBOARD_SPLIT


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

    @property
    def card(self) -> Card | None:
        """The world's card (`card.toml`): every catalogue world has one; None for a folder without."""
        path = self.folder / CARD_FILE
        return read_card(path) if path.is_file() else None

    @property
    def default_split(self) -> str:
        """The split an environment plays unless told: AgentBoard's public problems where the world has
        them (the four public worlds), else the public ladder."""
        splits = self.splits()
        if DEFAULT_SPLIT in splits or LADDER_SPLIT not in splits:
            return DEFAULT_SPLIT
        return LADDER_SPLIT

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
    if not root.is_dir():
        raise ValueError(f"domains root {str(root)!r} is not a folder (give a folder of domain folders, each "
                         "with a domain.pddl)")
    return {
        p.name: Domain(p.name, p)
        for p in sorted(root.iterdir())
        if p.is_dir() and (p / "domain.pddl").is_file()
    }


def get_domain(name: str, root: str | Path | None = None) -> Domain:
    """The domain named `name` among the folders listed under `root` (default: the shipped ones).

    The one place a domain name becomes a folder: the name is looked up among the listed folder names
    (exactly, else case-insensitively), never joined into a path, so a name from a request cannot reach
    anything outside `root`.
    """
    known = domains(root)
    found = known.get(name) or {k.lower(): d for k, d in known.items()}.get(name.lower())
    if found is None:
        where = "" if root is None else f" in {str(root)!r}"
        shown = name if len(name) <= 60 else f"{name[:60]}... ({len(name):,} characters)"
        raise ValueError(f"unknown domain {shown!r}{where}; {known_names(known, name)}")
    return found


#: Up to this many domain names an error lists them all; past it, the closest ones and how to list them.
LISTED_NAMES = 12


def known_names(known: Iterable[str], asked: str) -> str:
    """The domains an error about `asked` names: all of them when few, else the closest and a count."""
    known = list(known)
    if len(known) <= LISTED_NAMES:
        return f"domains: {', '.join(known) or 'none'}"
    close = difflib.get_close_matches(asked.lower(), list(known), n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    return f"{hint}{len(known)} domains: `pddlworlds list` shows them"


def load_task(
    domain_file: str | Path, problem_file: str | Path, *, max_file_bytes: int = MAX_PDDL_BYTES
) -> LiftedTask:
    """`read_task`, the files checked first (present, at most `max_file_bytes`, UTF-8).

    (Parsed tasks were once cached on disk because unified-planning's reader was slow; Fast Downward's
    parser reads a shipped problem in milliseconds, so there is nothing to cache.)
    """
    domain_file, problem_file = Path(domain_file), Path(problem_file)
    read_pddl_bytes(domain_file, max_file_bytes)
    read_pddl_bytes(problem_file, max_file_bytes)
    return read_task(domain_file, problem_file, max_file_bytes=max_file_bytes)
