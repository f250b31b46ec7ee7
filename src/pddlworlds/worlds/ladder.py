"""The catalogue's ladders: three bands of problems by proven optimal length, and the step budget of each.

Every catalogue world ships a public split (`ladder`) and a held-out split (`ladder-heldout`) drawn the same
way by the world's generator; a problem's band is fixed by its proven optimal plan (its cost where the
domain has action costs, its length elsewhere) and written into its name (`ladder-easy-03`,
`heldout-hard-02`), so the band of a problem is known without reading the plan index. The band's step
budget is what an episode on it is played with unless a caller says otherwise: about two to three times the
band's longest optimal plan, the 30 steps of the public four for the easy band, and never less than twice
the problem's proven shortest plan (which a world whose bands go by cost needs: `step_budget`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BANDS",
    "DEFAULT_MAX_EPISODE_STEPS",
    "HELDOUT_SPLIT",
    "LADDER_SPLIT",
    "LADDER_SPLITS",
    "Band",
    "band_named",
    "band_of",
    "band_of_problem",
    "ladder_problem_name",
    "step_budget",
]

#: The benchmark's step budget per episode (AgentBoard's, the public four's): a problem of no band gets it.
DEFAULT_MAX_EPISODE_STEPS = 30

LADDER_SPLIT = "ladder"
HELDOUT_SPLIT = "ladder-heldout"
LADDER_SPLITS = (LADDER_SPLIT, HELDOUT_SPLIT)
#: The first word of a problem's name in each ladder split.
_PREFIX = {LADDER_SPLIT: "ladder", HELDOUT_SPLIT: "heldout"}


@dataclass(frozen=True)
class Band:
    """Problems whose proven optimum (cost, or length without costs) lies in `low`..`high`."""

    name: str
    low: int
    high: int
    #: Steps an episode on a problem of this band gets by default.
    step_budget: int

    def holds(self, optimum: int) -> bool:
        return self.low <= optimum <= self.high


BANDS = (Band("easy", 1, 10, DEFAULT_MAX_EPISODE_STEPS), Band("medium", 11, 20, 50), Band("hard", 21, 40, 80))


def band_named(name: str) -> Band:
    for band in BANDS:
        if band.name == name:
            return band
    raise ValueError(f"unknown band {name!r}; bands: {', '.join(b.name for b in BANDS)}")


def band_of(optimum: int) -> Band | None:
    """The band a proven optimum falls in (None: outside every band)."""
    return next((band for band in BANDS if band.holds(optimum)), None)


def ladder_problem_name(split: str, band: str, index: int) -> str:
    """`ladder-easy-01` for problem 1 of the easy band of the public split, `heldout-easy-01` held out."""
    if split not in _PREFIX:
        raise ValueError(f"not a ladder split: {split!r}; ladder splits: {', '.join(LADDER_SPLITS)}")
    return f"{_PREFIX[split]}-{band_named(band).name}-{index:02d}"


def band_of_problem(problem: str) -> Band | None:
    """The band a ladder problem's name says (None for a problem of any other split)."""
    parts = problem.split("-")
    if len(parts) == 3 and parts[0] in _PREFIX.values() and parts[2].isdigit():
        return next((band for band in BANDS if band.name == parts[1]), None)
    return None


def step_budget(split: str, problem: str, shortest: int | None = None) -> int:
    """The steps an episode on `problem` gets unless a caller says otherwise: its band's budget in a ladder
    split, raised to twice its proven shortest plan (`shortest`) where that is longer; the benchmark's 30
    elsewhere. (Only a world with action costs needs the raise: its bands go by cost, and its cheapest plans
    can be long, Sokoban's walks costing nothing; elsewhere a band's budget is at least twice its longest.)"""
    band = band_of_problem(problem) if split in LADDER_SPLITS else None
    if band is None:
        return DEFAULT_MAX_EPISODE_STEPS
    return max(band.step_budget, 2 * shortest) if shortest else band.step_budget
