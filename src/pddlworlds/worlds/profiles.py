"""Profiles: whose text and rules an environment plays by, as a registry (name -> how to build a world).

`pddlworlds` (the default) is this project's: clear reasons for invalid actions, progress that credits
goal conditions already true at reset. `agentboard` reproduces AgentBoard's PDDL environment (wording,
messages, parsing, listing, progress rule; see `agentboard_world`). The environment picks a profile by
name and passes it down; a world never knows which profile it serves beyond the text it was built with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..registry import Registry
from .agentboard.text import AGENTBOARD_TEXT_FILE, load_agentboard_text
from .agentboard.world import AgentBoardWorld, agentboard_text_bound
from .pddl import LiftedTask
from .text import load_templates
from .world import World, text_bound

__all__ = ["AGENTBOARD_PROFILE", "DEFAULT_PROFILE", "PROFILES", "Profile", "get_profile"]

DEFAULT_PROFILE = "pddlworlds"
AGENTBOARD_PROFILE = "agentboard"
#: Our own text file beside `domain.pddl`; every profile's world also keeps these templates.
OWN_TEXT_FILE = "text.toml"


@dataclass(frozen=True)
class Profile:
    """How one profile builds a world and scores progress."""

    name: str
    #: The file beside `domain.pddl` that holds this profile's words (used when no `text_file` is given).
    text_file_name: str
    #: (task, our text.toml or None, this profile's text file or None, problem name) -> world
    build: Callable[..., World]  # (task, own text file, profile text file, name, **size limits)
    #: (task, our text.toml or None, this profile's text file or None) -> a bound on any text it writes
    bound: Callable[[LiftedTask, Path | None, Path | None], int]
    #: Whether goal conditions true at reset count as progress (AgentBoard starts every episode at 0).
    credits_initial_progress: bool

    def text_file_beside(self, domain_file: str | Path) -> Path | None:
        """This profile's text file lying beside `domain_file`, if there is one."""
        candidate = Path(domain_file).with_name(self.text_file_name)
        return candidate if candidate.is_file() else None


def _own(
    task: LiftedTask, own_text: Path | None, profile_text: Path | None, name: str, **limits: int
) -> World:
    return World(task, load_templates(task, profile_text), name, **limits)


def _agentboard(
    task: LiftedTask, own_text: Path | None, profile_text: Path | None, name: str, **limits: int
) -> World:
    return AgentBoardWorld(
        task, load_templates(task, own_text), load_agentboard_text(task, profile_text), name, **limits
    )


def _own_bound(task: LiftedTask, own_text: Path | None, profile_text: Path | None) -> int:
    return text_bound(task, load_templates(task, profile_text))


def _agentboard_bound(task: LiftedTask, own_text: Path | None, profile_text: Path | None) -> int:
    return agentboard_text_bound(task, load_agentboard_text(task, profile_text))


PROFILES: Registry[Profile] = Registry("profile", {
    DEFAULT_PROFILE: Profile(DEFAULT_PROFILE, OWN_TEXT_FILE, _own, _own_bound, credits_initial_progress=True),
    AGENTBOARD_PROFILE: Profile(
        AGENTBOARD_PROFILE, AGENTBOARD_TEXT_FILE, _agentboard, _agentboard_bound, credits_initial_progress=False
    ),
})


def get_profile(name: str) -> Profile:
    return PROFILES[name]
