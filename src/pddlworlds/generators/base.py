"""What every domain's generator is: a `DomainGenerator` entry, and the helpers all of them share."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["LEVELS", "DomainGenerator", "problem_name", "problem_rng", "wrap_words"]

LEVELS = ("easy", "medium", "hard")


@dataclass(frozen=True)
class DomainGenerator:
    """One domain's generator, as the registry holds it.

    `sizes` is the inclusive range of the size parameter per level; `pddl_name(size, level, index)` the
    name inside the `(define (problem ...))`; `build(rng, size, pddl_name, level)` the problem text (no
    header) and the parameters the header lists, drawing every random choice from `rng`. Problem `index`
    of a level takes the sizes of its range in turn, unless `size_weights` gives the level's sizes with
    weights: then each problem draws its size from them (the first draw of its own rng), which is how a
    family follows a measured size distribution whatever the number of problems drawn.
    """

    domain: str
    sizes: dict[str, tuple[int, int]]
    pddl_name: Callable[[int, str, int], str]
    build: Callable[[random.Random, int, str, str], tuple[str, dict[str, object]]]
    size_weights: dict[str, dict[int, float]] | None = None

    def size_of(self, level: str, index: int, rng: random.Random) -> int:
        """The size parameter of problem `index` (1-based) of `level`; draws from `rng` only with
        `size_weights`."""
        if self.size_weights is not None:
            weights = self.size_weights[level]
            return rng.choices(list(weights), weights=list(weights.values()))[0]
        lo, hi = self.sizes[level]
        return lo + (index - 1) % (hi - lo + 1)


def problem_name(level: str, index: int) -> str:
    """The file name (without `.pddl`) of problem `index` of a level: `easy-01`."""
    return f"{level}-{index:02d}"


def problem_rng(seed: int, domain: str, level: str, index: int) -> random.Random:
    """The generator of one problem: seeded from (seed, domain, level, index), stable across runs."""
    digest = hashlib.sha256(f"pddlworlds/{seed}/{domain}/{level}/{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def wrap_words(first: str, words: list[str], indent: int, width: int = 78) -> list[str]:
    """`first` followed by `words`, broken into lines of at most `width` characters, later lines indented."""
    lines, current = [], first
    for word in words:
        if len(current) + 1 + len(word) > width:
            lines.append(current)
            current = " " * indent + word
        else:
            current += " " + word
    lines.append(current)
    return lines
