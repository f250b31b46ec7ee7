"""Problems equal up to renaming objects: a renaming-invariant digest, the exact check, and an index of a
domain's problems by digest that keeps the digests of problem files on disk.

Two problems are "the same" when one becomes the other by renaming objects, so `same_up_to_renaming` decides
that exactly: a renaming-invariant colour refinement (Weisfeiler-Leman over objects and atoms,
`structure_hash`) rules most pairs out at once, and the rest get a backtracking search for an object
bijection that maps init and goal onto each other.

Checking a training problem against every shipped one needs the digest of every shipped problem, and
parsing the four hundred-odd shipped files takes seconds each time; their digests never change while the
files and the code that reads and digests them stay the same. `ProblemIndex` therefore keeps each file's
digest under `host.cache_dir("digests")`, keyed by the domain's and the problem's bytes and by that code, and
parses a filed problem only when a query's digest matches it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import re
import shutil
import sys
import tempfile
import weakref
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from ..files import atomic_write
from ..host import cache_dir
from .catalogue import load_task
from .pddl import LiftedTask, normalisation_warnings_ignored
from .pddl_text import read_pddl_bytes
from .symmetry import object_maps

__all__ = ["ProblemIndex", "load_problem", "same_up_to_renaming", "structure_hash"]


def _facts(task: LiftedTask) -> tuple[list[tuple[str, tuple[str, ...]]], list[tuple[str, tuple[str, ...]]]]:
    init = sorted(task.init)
    goal = sorted((f"{'' if positive else 'not-'}{name}", tuple(args)) for name, args, positive in task.goal)
    return init, goal


def _refine(task: LiftedTask, rounds: int = 4) -> dict[str, str]:
    """Colour of each object after `rounds` of refinement by the (init/goal) facts it appears in."""
    types = dict(task.objects)
    init, goal = _facts(task)
    facts = [("i", n, a) for n, a in init] + [("g", n, a) for n, a in goal]
    colour = {o: f"t:{types[o]}" for o in types}
    for _ in range(rounds):
        seen: dict[str, list[str]] = {o: [] for o in types}
        for part, name, args in facts:
            sig = f"{part}:{name}(" + ",".join(colour.get(a, a) for a in args) + ")"
            for pos, a in enumerate(args):
                if a in seen:
                    seen[a].append(f"{pos}@{sig}")
        colour = {
            o: hashlib.sha256((colour[o] + "|" + "|".join(sorted(seen[o]))).encode()).hexdigest()[:16] for o in types
        }
    return colour


def structure_hash(task: LiftedTask) -> str:
    """A digest equal for problems equal up to object renaming (different digests: different problems)."""
    colour = _refine(task)
    init, goal = _facts(task)
    parts = sorted(f"i:{n}(" + ",".join(colour.get(a, a) for a in args) + ")" for n, args in init)
    parts += sorted(f"g:{n}(" + ",".join(colour.get(a, a) for a in args) + ")" for n, args in goal)
    parts.append("objects:" + ",".join(sorted(colour.values())))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def same_up_to_renaming(a: LiftedTask, b: LiftedTask) -> bool:
    """True when a bijection of objects (same types) maps a's init and goal exactly onto b's."""
    if structure_hash(a) != structure_hash(b):
        return False
    ca, cb = _refine(a), _refine(b)
    init_a, goal_a = (set(x) for x in _facts(a))
    init_b, goal_b = (set(x) for x in _facts(b))
    if len(init_a) != len(init_b) or len(goal_a) != len(goal_b):
        return False
    objects_a = sorted(ca, key=lambda o: (Counter(ca.values())[ca[o]], o))  # rarest colours first
    candidates = {o: [p for p in cb if cb[p] == ca[o]] for o in objects_a}
    checks = [(fact, facts_b) for facts_a, facts_b in ((init_a, init_b), (goal_a, goal_b)) for fact in facts_a]
    return next(object_maps(objects_a, candidates, checks), None) is not None


def load_problem(domain_file: Path, problem_file: Path) -> LiftedTask:
    """`load_task` without the normalisation warnings that the shipped files' known quirks raise."""
    with normalisation_warnings_ignored():
        return load_task(domain_file, problem_file)


def _code_digest() -> bytes:
    """What a file's digest depends on besides the files: this module, every module of the package that
    reads PDDL into a `LiftedTask`, and the translator's version. Changing any of them changes every key,
    so no digest cached by other code is ever used."""
    h = hashlib.sha256(Path(__file__).read_bytes())
    reader = sys.modules[LiftedTask.__module__].__file__
    for path in sorted(Path(reader).parent.glob("*.py")) if reader else ():
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    try:
        h.update(importlib.metadata.version("fast-downward.translate").encode())
    except importlib.metadata.PackageNotFoundError:
        h.update(b"translator: unknown version")
    return h.digest()


_DIGEST = re.compile(r"[0-9a-f]{64}")


class ProblemIndex:
    """One domain's problems filed by `structure_hash`, to find those equal up to renaming to a task.

    A file is filed by its digest, read from the disk cache (`cache`, default `host.cache_dir("digests")`)
    when the same domain and problem bytes were digested before by the same code, else computed and stored;
    its task is parsed only when a query's digest matches, once. A cache that cannot be written only costs
    time."""

    def __init__(self, domain_file: str | Path, cache: str | Path | None = None) -> None:
        self.domain_file = Path(domain_file)
        self._cache = Path(cache) if cache is not None else cache_dir("digests")
        self._salt = _code_digest() + hashlib.sha256(read_pddl_bytes(self.domain_file)).digest()
        self._filed: dict[str, list[tuple[str, Path | LiftedTask]]] = {}
        self._scratch: Path | None = None

    def scratch(self) -> Path:
        """A folder that lives as long as the index (removed with it, or at exit), for problem files written
        only to be filed: a file filed by `add_file` is read again if a query's digest matches it."""
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="pddlworlds-index-"))
            weakref.finalize(self, shutil.rmtree, self._scratch, ignore_errors=True)
        return self._scratch

    def file_digest(self, problem_file: str | Path) -> str:
        """`structure_hash` of the problem file's task, from the cache when it holds it."""
        problem_file = Path(problem_file)
        key = hashlib.sha256(self._salt + read_pddl_bytes(problem_file)).hexdigest()
        stored = self._cache / key[:2] / key
        try:
            digest = stored.read_text(encoding="ascii").strip()
            if _DIGEST.fullmatch(digest):
                return digest
        except (OSError, UnicodeDecodeError):
            pass
        digest = structure_hash(load_problem(self.domain_file, problem_file))
        try:
            stored.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(stored, digest + "\n")
        except OSError:
            pass
        return digest

    def add_file(self, name: str, problem_file: str | Path) -> None:
        """File the problem in `problem_file` as `name` (its task parsed only if a query needs it)."""
        self._filed.setdefault(self.file_digest(problem_file), []).append((name, Path(problem_file)))

    def add_task(self, name: str, task: LiftedTask, digest: str | None = None) -> None:
        """File an already parsed task as `name` (`digest`: its `structure_hash`, when known)."""
        self._filed.setdefault(digest or structure_hash(task), []).append((name, task))

    def equal_to(self, task: LiftedTask, digest: str | None = None) -> Iterator[str]:
        """The names of the filed problems equal to `task` up to renaming, in the order they were filed."""
        bucket = self._filed.get(digest or structure_hash(task), [])
        for i, (name, other) in enumerate(bucket):
            if isinstance(other, Path):
                other = load_problem(self.domain_file, other)
                bucket[i] = (name, other)
            if same_up_to_renaming(task, other):
                yield name
