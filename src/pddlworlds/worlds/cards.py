"""A world's card (`card.toml` in its folder): where its domain comes from, what it exercises, who made it.

The catalogue's worlds are written after domains of the International Planning Competitions; the card
names the original (`origin`: its folder in AI-Planning/classical-domains' `classical/`), the competition
and year, the kinds of problem it stands for, the PDDL features its domain file uses (checked against the
file by the tests), and the attribution the docs and NOTICE.md carry.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from .pddl import PDDLError, read_pddl_text

__all__ = ["CARD_FILE", "FEATURES", "KINDS", "Card", "read_card"]

CARD_FILE = "card.toml"
#: The kinds of problem the catalogue covers (a world names one or more).
KINDS = ("transport", "puzzle", "scheduling", "resources", "navigation", "assembly", "adl")
#: The PDDL features a card may name (the words of the requirements flags they stand for).
FEATURES = (
    "strips", "typing", "constants", "negative-preconditions", "equality", "disjunctive-preconditions",
    "quantified-preconditions", "conditional-effects", "derived-predicates", "action-costs",
)
_FIELDS = {"title", "origin", "competition", "year", "kinds", "features", "summary", "attribution", "generator"}
#: Fields a card may leave out.
_OPTIONAL = {"differences"}


@dataclass(frozen=True)
class Card:
    title: str
    #: The domain's folder in AI-Planning/classical-domains' `classical/` (`logistics00`).
    origin: str
    competition: str
    year: int
    kinds: tuple[str, ...]
    features: tuple[str, ...]
    #: One or two sentences a newcomer reads first.
    summary: str
    attribution: str
    #: How the generator draws problems, per band (the words the docs show).
    generator: str
    #: Where the domain file knowingly departs from its origin (the public four keep the names of
    #: AgentBoard's problems), so the origin check reports it rather than failing on it; "" for none.
    differences: str = ""


def read_card(path: str | Path) -> Card:
    """The card at `path`, every field checked; a missing or unknown field is one `PDDLError` naming it."""
    path = Path(path)
    try:
        data = tomllib.loads(read_pddl_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise PDDLError(f"invalid TOML: {exc}", path) from exc
    missing = _FIELDS - set(data)
    unknown = set(data) - _FIELDS - _OPTIONAL
    if missing or unknown:
        words = [f"missing {', '.join(sorted(missing))}"] * bool(missing) + [f"unknown {', '.join(sorted(unknown))}"] * bool(unknown)
        raise PDDLError(f"card fields: {'; '.join(words)} (fields: {', '.join(sorted(_FIELDS))})", path)
    kinds, features = tuple(data["kinds"]), tuple(data["features"])
    bad = [k for k in kinds if k not in KINDS] + [f for f in features if f not in FEATURES]
    if bad:
        raise PDDLError(f"card names unknown kinds or features {bad}; kinds: {', '.join(KINDS)}; features: "
                        f"{', '.join(FEATURES)}", path)
    if not isinstance(data["year"], int):
        raise PDDLError(f"card year must be a number, not {data['year']!r}", path)
    strings = {k: data[k] for k in (_FIELDS | (_OPTIONAL & set(data))) - {"year", "kinds", "features"}}
    wrong = [k for k, v in strings.items() if not isinstance(v, str) or not v.strip()]
    if wrong:
        raise PDDLError(f"card fields {', '.join(sorted(wrong))} must be non-empty text", path)
    return Card(year=data["year"], kinds=kinds, features=features, **{k: v.strip() for k, v in strings.items()})
