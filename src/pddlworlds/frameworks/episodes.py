"""One episode of a domain (shipped, or of a folder of domains), its problem chosen when it starts: what every framework adapter plays.

OpenEnv, TRL and Inspect each want an environment whose domain, split and problem are picked at reset
(every rollout of a GRPO group starting from the same problem), not when it is built. `Episode` is that,
over the Gymnasium environment itself (`gym.make("pddlworlds/<Domain>-v0", ...)`, the same wrappers
included), so an adapter's observations, rewards and ends are the Gymnasium ones by construction.
`EpisodeOptions` are the reset's choices, checked once with one-line errors naming the bad option.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..env import ACTION_MAX_LENGTH, REWARDS, StepInfo
from ..worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS, DEFAULT_SPLIT, check_split_name, domains, get_domain
from ..worlds.ladder import step_budget
from ..worlds.profiles import DEFAULT_PROFILE, get_profile
from ..worlds.text import OBSERVATION_MODES

__all__ = [
    "HELD_OUT_MARK", "STEP_INFO_KEYS", "Episode", "EpisodeOptions", "EpisodeOver", "Turn", "check_action_text",
    "choose_problems", "default_split", "episode_record", "held_out", "make_env", "offers_impossible_by_default", "reset_kwargs", "shown",
]

#: The keys every reset's and step's `info` has (`env.StepInfo`'s, in its order), which an adapter passes on
#: as they are (an OpenEnv observation and back); `valid_actions` and `claimed_impossible` come only sometimes.
STEP_INFO_KEYS: tuple[str, ...] = tuple(k for k in StepInfo.__annotations__ if k in StepInfo.__required_keys__)

#: The most steps an episode may be given (a bound on what a remote caller can ask a session to hold).
MAX_STEPS_LIMIT = 10_000
#: Names (split, problem) are echoed in errors up to this many characters; a longer one is cut, its length told.
SHOWN_CHARS = 60


def shown(text: str) -> str:
    """`text` quoted for an error message, cut when long (a remote caller's 300-character name stays one short line)."""
    return repr(text) if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]!r}... ({len(text):,} characters)"


#: A split whose name holds this is held out: no door picks it unless it is named (`default_split`, `pddlworlds
#: export`).
HELD_OUT_MARK = "heldout"


def held_out(split: str) -> bool:
    """Whether a split is held out from training and tuning (its name has `HELD_OUT_MARK` in it)."""
    return HELD_OUT_MARK in split


def default_split(splits: list[str]) -> str:
    """The split a door plays when none is named: "agentboard" where the domain has it, else its first split
    that is not held out (a world with only its own splits, `ladder` and `ladder-heldout`, plays `ladder`)."""
    if DEFAULT_SPLIT in splits or not splits:
        return DEFAULT_SPLIT
    return next((s for s in splits if not held_out(s)), splits[0])


def offers_impossible_by_default(domain: str, split: str) -> bool:
    """Whether a split offers the `impossible` action when a reset does not say: when it holds problems a
    stored proof shows unsolvable, as `pddlworlds eval` decides (`evaluation.options`); without it every
    unsolvable problem would score 0 whatever the agent does."""
    from ..artefacts.proofs import split_unsolvable

    return bool(split_unsolvable(domain, split))


class EpisodeOver(ValueError):
    """A step sent to an episode that has ended (or never started): reset first."""


@dataclass(frozen=True)
class EpisodeOptions:
    """What a reset chooses. `problem` names a problem of the split; without it `seed` picks one (the
    Gymnasium environment's seeded choice), so equal seeds give equal problems. `reward`: "progress" (the
    increase of progress; the return is the progress rate) or "success" (1.0 on reaching the goal).
    `observation_mode`: None for the domain's default ("full" or "changes"). `allow_impossible`: offer the
    `impossible` action (it solves an unsolvable problem and fails a solvable one); None offers it on the
    splits with unsolvable problems, as `pddlworlds eval` does (`offers_impossible`).

    `domains_root`: the folder of domain folders `domain` names one of (None: the shipped catalogue). It is
    the host's choice, never a reset option (`names`, `updated`), so no request names a path; build such
    options with `within`."""

    domain: str = "blocksworld"
    split: str = DEFAULT_SPLIT
    profile: str = DEFAULT_PROFILE
    problem: str | None = None
    seed: int | None = None
    #: Steps an episode gets; None: each problem's own (30, or a ladder band's budget: `worlds.ladder`).
    max_steps: int | None = None
    reward: str = "progress"
    observation_mode: str | None = None
    allow_impossible: bool | None = None
    domains_root: str | None = None

    def __post_init__(self) -> None:
        for name in ("domain", "split", "profile", "reward"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a string, not {type(getattr(self, name)).__name__}")  # noqa: TRY004 - every bad option is one ValueError line
        if self.domains_root is not None and not isinstance(self.domains_root, str):
            object.__setattr__(self, "domains_root", str(self.domains_root))  # a Path, kept as text (hashable, JSON)
        domain = get_domain(self.domain, self.domains_root)  # by name among the listed folders, never a path
        object.__setattr__(self, "domain", domain.name)
        check_split_name(self.split)  # a path is refused as such
        splits = domain.splits()
        if self.split not in splits:  # by name: an over-long name never reaches the disk (no OSError, no path)
            raise ValueError(f"domain {domain.name!r} has no split {shown(self.split)}; splits: {', '.join(splits)}")
        get_profile(self.profile)
        if self.reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {self.reward!r}")
        if self.problem is not None and not isinstance(self.problem, str):
            raise ValueError(f"problem must be a problem name, not {type(self.problem).__name__}")
        if self.problem == "":
            raise ValueError("problem must name a problem of the split, not an empty text (leave it out for one "
                             "the seed picks)")
        if self.problem is not None and self.problem not in (known := domain.problems(self.split)):
            raise ValueError(f"unknown problem {shown(self.problem)}; problems: {', '.join(known)}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0):
            raise ValueError(f"seed must be a whole number of at least 0, not {self.seed!r}")
        steps = self.max_steps
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int)
                                  or not 1 <= steps <= MAX_STEPS_LIMIT):
            raise ValueError(f"max_steps must be a whole number from 1 to {MAX_STEPS_LIMIT}, not {steps!r}")
        if self.observation_mode is not None and self.observation_mode not in OBSERVATION_MODES:
            raise ValueError(f"observation_mode must be one of {', '.join(OBSERVATION_MODES)}, not {self.observation_mode!r}")
        if self.allow_impossible is not None and not isinstance(self.allow_impossible, bool):
            raise ValueError(f"allow_impossible must be true or false, not {self.allow_impossible!r}")

    def budget(self, problem: str | None = None) -> int:
        """The steps an episode on `problem` (default: the options' own) gets: `max_steps`, or the problem's
        own budget (a ladder band's, at least twice its proven shortest plan; else 30), as its environment
        counts it."""
        if self.max_steps is not None:
            return self.max_steps
        name = problem or self.problem
        if name is None:
            return DEFAULT_MAX_EPISODE_STEPS
        from ..artefacts.plans import optimal_lengths

        shortest = optimal_lengths(self.domain, self.split).get(name) if self.domains_root is None else None
        return step_budget(self.split, name, shortest)

    @property
    def offers_impossible(self) -> bool:
        """Whether the episode offers the `impossible` action: `allow_impossible`, or by the split when None."""
        if self.allow_impossible is not None:
            return self.allow_impossible
        return self.domains_root is None and offers_impossible_by_default(self.domain, self.split)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The reset options a caller may set (`domains_root` is not one: it is fixed by `within`)."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.name != "domains_root")

    @classmethod
    def as_played(cls, **fields: Any) -> EpisodeOptions:
        """The options a server says it played, taken as it says them: its domain may be one of the folder
        it serves (`--domains-root`), which this process's catalogue need not hold, so nothing is looked up."""
        if unknown := sorted(set(fields) - {f.name for f in dataclasses.fields(cls)}):
            raise ValueError(f"unknown option {unknown[0]!r}; options: {', '.join(cls.names())}")
        options = object.__new__(cls)
        for f in dataclasses.fields(cls):
            object.__setattr__(options, f.name, fields.get(f.name, f.default))
        return options

    @classmethod
    def within(cls, domains_root: str | Path | None, changes: Mapping[str, Any] | None = None) -> EpisodeOptions:
        """Default options over the domains of `domains_root` (None: the shipped catalogue), then `changes`.
        Without a `domain` among them the root's first domain (by name) is the default (blocksworld in the
        catalogue), and without a `split` the domain's `default_split`."""
        changes = dict(changes or {})
        if domains_root is None:
            if changes.get("domain") is not None and changes.get("split") is None:
                changes["split"] = default_split(get_domain(changes["domain"]).splits())
            return cls().updated(changes)
        listed = domains(domains_root)
        if not listed:
            raise ValueError(f"domains root {str(domains_root)!r} holds no domain folder (a folder with a domain.pddl)")
        root = str(Path(domains_root).resolve())
        domain = get_domain(changes["domain"], root) if changes.get("domain") is not None else next(iter(listed.values()))
        if changes.get("split") is None:
            changes["split"] = default_split(domain.splits())
        return cls(domain=domain.name, split=changes["split"], domains_root=root).updated(changes)

    def updated(self, changes: Mapping[str, Any]) -> EpisodeOptions:
        """These options with `changes` (None values left out); an unknown name is refused, listing the known.
        A default problem belongs to its domain and split: changes that move to another one without naming a
        problem leave the choice to the seed."""
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise ValueError(f"unknown reset option {unknown[0]!r}; options: {', '.join(self.names())}")
        given = {k: v for k, v in changes.items() if v is not None}
        if self.problem is None or "problem" in given:
            return dataclasses.replace(self, **given)
        moved = dataclasses.replace(self, **{**given, "problem": None})
        if (moved.domain, moved.split) != (self.domain, self.split):
            return moved
        return dataclasses.replace(moved, problem=self.problem)

    def env_kwargs(self) -> dict[str, Any]:
        """`gym.make` keywords (the split, profile, reward and budget; the problem is chosen at reset), as
        `pddlworlds eval` makes its environments (`registration.domain_env_kwargs`)."""
        from ..registration import domain_env_kwargs

        return domain_env_kwargs(self.split, self.max_steps, profile=self.profile, reward=self.reward,
                                 observation_mode=self.observation_mode, allow_impossible=self.offers_impossible)


@dataclass(frozen=True)
class Turn:
    """What a reset (reward 0.0, not ended) or a step gave: the Gymnasium environment's five values."""

    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: StepInfo

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


def episode_record(agent: str, history: list[tuple[str | None, Turn]], *, seed: int | None = None,
                   costed: bool = False, run_time_s: float = 0.0, **extra: Any) -> Any:
    """The `records.EpisodeRecord` of an episode played through a door, from its `history` (the reset's turn,
    then each action sent and the turn it gave), as `Agent.run` makes one: what `pddlworlds eval` scores,
    so a door's episodes score as eval's do (`scoring.metrics`). `costed`: the domain has action costs."""
    from ..records import EpisodeRecord, StepRecord

    (_, first), *steps = history
    trajectory = [StepRecord.of_step(str(action), turn.observation, turn.info) for action, turn in steps]
    last = steps[-1][1] if steps else first
    return EpisodeRecord.of_episode(agent, seed, (first.observation, first.info), last.info, trajectory, run_time_s,
                                    costed=costed, **extra)


def make_env(options: EpisodeOptions) -> Any:
    """The Gymnasium environment these options play: `gym.make` of the domain's id, with its wrappers
    (the step budget among them); the problem is chosen at its reset (`reset_kwargs`)."""
    from ..registration import make_domain_env

    return make_domain_env(options.domain, options.domains_root, **options.env_kwargs())


def reset_kwargs(options: EpisodeOptions) -> dict[str, Any]:
    """`env.reset` keywords: the seed, and the problem when one is named."""
    return {"seed": options.seed, "options": {"problem": options.problem} if options.problem is not None else None}


def choose_problems(options: EpisodeOptions, problems: str | list[str] | None, limit: int | None) -> list[str]:
    """The problems of the options' domain and split a door plays (the Inspect task's samples, the verifiers
    environment's rows): all of them, or `problems` (a list, or comma-separated text) checked against the
    split, then the first `limit`."""
    known = get_domain(options.domain, options.domains_root).problems(options.split)
    if problems is None:
        chosen = known
    else:
        chosen = [p.strip() for p in problems.split(",")] if isinstance(problems, str) else [str(p) for p in problems]
        for name in chosen:
            if name not in known:
                raise ValueError(f"unknown problem {shown(name)} in {options.domain}/{options.split}; problems: "
                                 f"{', '.join(known)}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a whole number of at least 1, not {limit!r}")
    return chosen[:limit] if limit is not None else chosen


def check_action_text(text: object) -> str:
    """`text` if it is an action the action space admits (a string of at most `ACTION_MAX_LENGTH`
    characters); else a ValueError saying which. For callers across a process boundary: the Gymnasium
    environment itself plays longer texts too."""
    if not isinstance(text, str):
        raise ValueError(f"an action is a text, not {type(text).__name__}")  # noqa: TRY004 - a refused request, as the others
    if len(text) > ACTION_MAX_LENGTH:
        raise ValueError(f"the action is {len(text):,} characters long; at most {ACTION_MAX_LENGTH:,} are accepted")
    return text


class Episode:
    """Episodes played one at a time on one Gymnasium environment per set of options (made again only when
    a reset changes the domain, split, profile, reward, budget, observation mode or the `impossible` offer)."""

    def __init__(self) -> None:
        self._env: Any = None
        self._made_for: tuple[Any, ...] | None = None
        self.options: EpisodeOptions | None = None
        self.last: Turn | None = None
        #: The episode so far: the reset's turn, then each action sent and the turn it gave.
        self.history: list[tuple[str | None, Turn]] = []

    @property
    def env(self) -> Any:
        """The Gymnasium environment of the current episode (None before the first reset)."""
        return self._env

    def reset(self, options: EpisodeOptions) -> Turn:
        """Start an episode; a refused option leaves the episode under way as it was."""
        key = (options.domain, options.domains_root, *sorted(options.env_kwargs().items()))
        env = self._env if key == self._made_for else make_env(options)
        observation, info = env.reset(**reset_kwargs(options))  # an unknown problem raises here
        if env is not self._env and self._env is not None:
            self._env.close()
        self._env, self._made_for, self.options = env, key, options
        self.last = Turn(observation, 0.0, False, False, info)
        self.history = [(None, self.last)]
        return self.last

    def step(self, text: str) -> Turn:
        if self.last is None:
            raise EpisodeOver("no episode has started: reset first")
        if self.last.done:
            raise EpisodeOver(f"the episode is over after {self.last.info['step']} steps: reset to start another")
        observation, reward, terminated, truncated, info = self._env.step(text)
        self.last = Turn(observation, float(reward), bool(terminated), bool(truncated), info)
        self.history.append((text, self.last))
        return self.last

    def record(self, agent: str, **extra: Any) -> Any:
        """The episode so far as an `EpisodeRecord` (`episode_record`), scored as `pddlworlds eval` scores."""
        if self.last is None or self.options is None:
            raise EpisodeOver("no episode has started: reset first")
        costed = bool(getattr(self._env.unwrapped, "action_costs", False))
        return episode_record(agent, self.history, seed=self.options.seed, costed=costed, **extra)

    def valid_actions(self) -> list[str]:
        """The executable actions now, in the text the parser accepts, without taking a step
        (`PDDLTextEnv.valid_actions`)."""
        if self.last is None:
            raise EpisodeOver("no episode has started: reset first")
        return list(self._env.unwrapped.valid_actions())

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
        self._env, self._made_for, self.last, self.history = None, None, None, []
