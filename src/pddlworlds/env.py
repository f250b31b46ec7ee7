"""The Gymnasium environment: a PDDL problem played in natural language."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
from gymnasium import spaces

from .step_info import StepInfo
from .text_spaces import ObservationText, SharedTexts
from .unsolvable.claim import CLAIM_OBSERVATION, IMPOSSIBLE_ACTION, is_claim, list_with_claim
from .worlds.catalogue import Domain, get_domain, load_task
from .worlds.grounding import MAX_ATOMS, MAX_EXPLORED, MAX_GROUND_ACTIONS
from .worlds.ladder import step_budget
from .worlds.pddl import MAX_PDDL_BYTES, LiftedTask, PDDLError
from .worlds.profiles import DEFAULT_PROFILE, OWN_TEXT_FILE, get_profile
from .worlds.text import CHARSET, OBSERVATION_MODES
from .worlds.world import World

__all__ = [
    "ACTION_MAX_LENGTH",
    "REWARDS",
    "SOLVED_AT_RESET",
    "ObservationText",
    "PDDLTextEnv",
    "SharedTexts",
    "StepInfo",
    "observation_mode_problem",
    "problems_by_name",
]

#: Longest action text the action space admits; longer texts are still handled (truncated in messages).
ACTION_MAX_LENGTH = 1024
#: What the reward pays: "progress" (its increase, so the return is the episode's progress rate) or
#: "success" (1.0 on the step that reaches the goal, else 0.0, so the return is the episode's success).
REWARDS = ("progress", "success")
#: `info["action_kind"]` of a step taken in an episode whose goal already held at reset.
SOLVED_AT_RESET = "goal held at reset"
GOAL_HELD_AT_RESET = "The goal already held at the start, so the episode is over; nothing was done."


def observation_mode_problem(mode: str, profile: str = DEFAULT_PROFILE) -> str | None:
    """What is wrong with an observation mode under a profile, in words (None: nothing), so a caller can
    refuse it before anything runs: an unknown mode, or `fluents` under a profile other than ours."""
    if mode not in OBSERVATION_MODES:
        return f"observation_mode must be one of {OBSERVATION_MODES}, not {mode!r}"
    if mode == "fluents" and profile != DEFAULT_PROFILE:
        return f"observation_mode 'fluents' is not one of the {profile} profile's: full or changes"
    return None


def problems_by_name(problem_files: list[str | Path]) -> dict[str, Path]:
    """Problem name (the file's stem) -> file; two different files of one name are refused, since an
    episode is known by its problem name and one of them would silently never be played."""
    files: dict[str, Path] = {}
    for given in problem_files:
        path = Path(given)
        name = path.stem
        if name in files and files[name].resolve() != path.resolve():
            raise ValueError(
                f"two problem files are both named {name!r}: {files[name]} and {path}; problems are known "
                "by file name, so rename one, or make one environment per folder"
            )
        files[name] = path
    return files


class PDDLTextEnv(gym.Env[str, str]):
    """A PDDL problem as a text game.

    ## Description
    The agent reads the state in sentences and writes one action per step in free text ("stack b1 on b2",
    "Open boot.", "(stack b1 b2)"). The text is parsed, checked against the PDDL preconditions and applied.
    Invalid text never raises: the state stays, `info["action_valid"]` is False, and the observation says
    why (unknown verb, unknown object, wrong number of objects, or which preconditions fail).

    ## Action Space
    `Text(1024, charset=CHARSET)`: any text. Two meta-actions also cost a step: `check valid actions`
    (lists every executable action in the form the parser accepts) and `look around` (the full state).
    With `allow_impossible=True` a third, `impossible` ("this task is impossible", "the goal cannot be
    reached", ...), ends the episode: it solves an unsolvable problem and fails a solvable one.

    ## Observation Space
    `ObservationText(n, charset=CHARSET)` (a `Text` space that async vector envs read through shared
    memory), with `n` bounded from the largest problem of the split. The first
    observation is the full state; after an action it is the full state, every fact an action can change
    ("fluents": the facts no action changes, such as "ball1 is a ball", were in the first observation), or
    only what changed (`observation_mode`, default per domain: full for Blocksworld and Gripper, changes
    for Tyreworld and Barman). When the goal holds the observation ends with "The goal is reached."

    ## Starting State
    `reset(seed=s)` picks a problem of the split with the seeded generator;
    `reset(options={"problem": "p03"})` picks one by name. If the goal already holds in the initial
    state, the episode starts solved: `reset`'s info has `success` True and the observation ends with
    "The goal is reached."; the first `step` then changes nothing and returns `terminated=True` with
    success (`action_kind` "goal held at reset"), so an action can never break a goal it did not reach.

    ## Rewards
    The increase of the best progress so far (fraction of goal conditions that hold), so the return of an
    episode equals its progress rate; the first step also pays the goal conditions the initial state
    already satisfies (not under `profile="agentboard"`, whose progress starts at 0). Progress only rises
    after an action that changed the state. With `reward="success"`, 1.0 on the step that reaches the goal
    and 0.0 otherwise, so the return is the episode's success (the sparse reward of RL setups).

    ## Episode End
    Terminated when the goal holds. Truncated by the environment itself once the episode's step budget is
    spent: `step_budget` when given (`math.inf`: never), else the problem's own, 30 steps (AgentBoard's), or
    on a ladder problem its band's (easy 30, medium 50, hard 80: `worlds.ladder.BANDS`); `info["step_budget"]`
    says it. (`gym.make(id, max_episode_steps=N)` adds Gymnasium's `TimeLimit` on top, which can only
    shorten an episode: give `step_budget=N` for a longer one.)

    ## Information
    `domain`, `split`, `problem`, `goal` (text), `step`, `progress`, `success`, `action_valid`,
    `action_kind` ("action", "invalid", "check valid actions", "look around"), `action` (the canonical text
    of the parsed action or None), `error` (why it was invalid), `optimal_length` (the shortest plan's, from
    the stored plans, None if unknown), `optimal_cost` (the cheapest plan's cost where the domain has action
    costs, else None), `profile`, `solvable` (False when a stored proof says no plan exists, True with a
    stored plan, None if unknown), `cost` (the actions' total cost so far) and, after `check valid actions`,
    `valid_actions`; with
    `allow_impossible` also `claimed_impossible`: see `StepInfo`.

    ## Arguments
    `render_mode` ("ansi" or "human"), `domain` (a domain's name: a shipped one, or with `domains_root`
    one of the domain folders under that folder, laid out as `pddl_domains/`; stored optimal lengths and
    proofs are the shipped domains' only), `split` (default "agentboard" where the world has it, else
    "ladder"), `step_budget` (steps before the environment truncates; default: the problem's own budget),
    `problem` (fix one problem), `observation_mode` ("full", "fluents" or "changes"), `allow_impossible` (offer the
    `impossible` action), or for PDDL of your own
    `domain_file`, `problem_files` and optionally `text_file` (see `pddlworlds.make_env`; without it, the
    profile's text file lying beside the domain file is used; a `text_file` that does not exist is an
    error, and so are two problem files of one name). `profile`: "pddlworlds" (default) or "agentboard",
    which plays by AgentBoard's wording, messages, parsing and progress rule (`pddlworlds.worlds.agentboard.world`);
    its progress starts at 0 rather than crediting goal conditions that already hold. Size guards, each
    refused with an error naming it: `max_ground_actions` (default 400,000), `max_atoms` (20,000),
    `max_explored` (1,000,000 facts and action instances derived by the reachability analysis while grounding),
    `max_file_bytes` (128 KiB per PDDL file); `split` must be a split's name, never a path. `reward`:
    "progress" (default) or "success" (see Rewards).

    ## Version History
    * v0: initial release.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        domain: str | None = None,
        domains_root: str | Path | None = None,
        split: str | None = None,
        problem: str | None = None,
        observation_mode: str | None = None,
        domain_file: str | Path | None = None,
        problem_files: list[str | Path] | None = None,
        text_file: str | Path | None = None,
        max_ground_actions: int = MAX_GROUND_ACTIONS,
        max_atoms: int = MAX_ATOMS,
        max_explored: int = MAX_EXPLORED,
        max_file_bytes: int = MAX_PDDL_BYTES,
        profile: str = DEFAULT_PROFILE,
        allow_impossible: bool = False,
        reward: str = "progress",
        step_budget: float | None = None,
    ):
        self.profile = get_profile(profile)
        if step_budget is not None and step_budget != math.inf and (
                isinstance(step_budget, bool) or not isinstance(step_budget, int) or step_budget < 1):
            raise ValueError(f"step_budget must be a whole number of steps >= 1 (or math.inf), not {step_budget!r}")
        #: The budget asked for (None: each problem's own; `math.inf`: no limit).
        self.step_budget_given = step_budget
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        self.reward_mode = reward
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, not {render_mode!r}")
        self.render_mode = render_mode
        #: Whether the domain is a shipped one, whose stored plans, optimal lengths and proofs apply (not
        #: one of a `domains_root` of your own, even of the same name, nor files given to `make_env`).
        self.shipped = domain is not None and domains_root is None
        #: The folder of domain folders `domain` was looked up in (None: the shipped catalogue).
        self.domains_root: Path | None = None if domains_root is None else Path(domains_root)
        if domain is not None:
            catalogue_domain: Domain | None = get_domain(domain, domains_root)
            self.domain_name = catalogue_domain.name
            split = split if split is not None else catalogue_domain.default_split
            self.split = split
            names = catalogue_domain.problems(split)
            files = {n: catalogue_domain.problem_file(n, split) for n in names}
            domain_file = catalogue_domain.domain_file
        elif domain_file is not None and problem_files:
            self.domain_name = Path(domain_file).resolve().parent.name  # resolved: a bare "d.pddl" has none
            self.split = "custom"
            files = problems_by_name(problem_files)
            names = list(files)
        else:
            raise ValueError("give a `domain` name (shipped, or of `domains_root`), or a `domain_file` and "
                             "`problem_files`")
        if not names:
            raise ValueError(f"no problems in split {split!r} of {self.domain_name!r}")
        if problem is not None and problem not in files:
            raise ValueError(f"unknown problem {problem!r}; problems: {', '.join(names)}")
        # Public, for code that works beside an episode (in-context examples, planners): which files
        # this environment plays, and `world_of` for any of its problems.
        self.problem_names: list[str] = names
        self.problem_files: dict[str, Path] = {n: Path(f) for n, f in files.items()}
        self.domain_file = Path(domain_file)
        if text_file is None:  # the profile's text lying beside the domain file, if any
            text_file = self.profile.text_file_beside(domain_file)
        elif not Path(text_file).is_file():
            raise PDDLError("text file not found (text_file must name an existing text file)", text_file)
        self.text_file: Path | None = Path(text_file) if text_file else None
        # Our own text.toml beside the domain: every world keeps it (the default profile's text is it).
        own = self.domain_file.with_name(OWN_TEXT_FILE)
        self._own_text = self.text_file if profile == DEFAULT_PROFILE else (own if own.is_file() else None)
        self.limits = {"max_ground_actions": max_ground_actions, "max_atoms": max_atoms, "max_explored": max_explored}
        self.max_file_bytes = max_file_bytes
        self._fixed_problem = problem
        self._tasks: dict[str, LiftedTask] = {}
        self._worlds: dict[str, World] = {}
        self._optimal_lengths: dict[str, int] | None = None
        self._optimal_costs: dict[str, int] | None = None
        self._started = False  # `step` before the first `reset` is refused (the state is not set up)
        self._solvable_known: dict[str, bool | None] = {}

        first = self.world_of(problem or names[0])
        mode = observation_mode or first.after_action
        if problem := observation_mode_problem(mode, profile):
            raise ValueError(problem)
        self.observation_mode = mode
        bound = max(self._text_bound(n) for n in ([problem] if problem else names))
        self.observation_space = ObservationText(max_length=bound, min_length=1, charset=CHARSET)
        self.action_space = spaces.Text(max_length=ACTION_MAX_LENGTH, min_length=0, charset=CHARSET)

        self.world: World = first
        self.state: int = first.initial_state
        self._step = 0
        self._best = 0.0
        self._paid = 0.0  # reward paid so far this episode (`_pay`); the first step pays the initial progress
        self._solved_at_reset = False
        self._budget: int | None = None
        self._last_observation = ""
        self.allow_impossible = bool(allow_impossible)
        self._claimed = False

    # ---- problems ----------------------------------------------------------------------------

    def _task(self, name: str) -> LiftedTask:
        """Read once per problem: the observation bound needs every problem's, a world only some."""
        if name not in self._tasks:
            self._tasks[name] = load_task(self.domain_file, self.problem_files[name], max_file_bytes=self.max_file_bytes)
        return self._tasks[name]

    def world_of(self, name: str) -> World:
        """The grounded world of one of this environment's problems (built once, then shared)."""
        if name not in self._worlds:
            self._worlds[name] = self.profile.build(
                self._task(name), self._own_text, self.text_file, name, **self.limits
            )
        return self._worlds[name]

    def _text_bound(self, name: str) -> int:
        return self.profile.bound(self._task(name), self._own_text, self.text_file) + ACTION_MAX_LENGTH

    def _solvable(self, problem: str) -> bool | None:
        """Read from the stored proofs once per problem (every step's `info` carries it)."""
        if problem not in self._solvable_known:
            from .artefacts.proofs import solvability

            known = solvability(self.domain_name, problem, self._optimal_length(problem)) if self.shipped else None
            self._solvable_known[problem] = known
        return self._solvable_known[problem]

    def _optimal_length(self, problem: str) -> int | None:
        if self._optimal_lengths is None:
            from .artefacts.plans import optimal_lengths

            self._optimal_lengths = optimal_lengths(self.domain_name, self.split) if self.shipped else {}
        return self._optimal_lengths.get(problem)

    def _optimal_cost(self, problem: str) -> int | None:
        if self._optimal_costs is None:
            from .artefacts.plans import optimal_costs

            self._optimal_costs = optimal_costs(self.domain_name, self.split) if self.shipped else {}
        return self._optimal_costs.get(problem)

    # ---- the Gymnasium API -------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, StepInfo]:
        super().reset(seed=seed)
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"reset options must be a dict such as {{'problem': 'p01'}}, not {type(options).__name__}")
        name = (options or {}).get("problem") or self._fixed_problem
        if name is not None and not isinstance(name, str):
            raise TypeError(f"reset option 'problem' must be a problem's name (a string), not {type(name).__name__}")
        if name is None:
            name = self.problem_names[int(self.np_random.integers(len(self.problem_names)))]
        elif name not in self.problem_files:
            raise ValueError(f"unknown problem {name!r}; problems: {', '.join(self.problem_names)}")
        self.world = self.world_of(name)
        self.state = self.world.initial_state
        self._step = 0
        # Our profile credits goal conditions already true; AgentBoard's starts every episode at 0.
        self._best = self.world.task.progress(self.state) if self.profile.credits_initial_progress else 0.0
        self._paid = 0.0
        self._cost = 0
        self._started = True
        self._solved_at_reset = self.world.task.is_goal(self.state)
        self._claimed = False
        given = self.step_budget_given
        if given is None:
            self._budget = step_budget(self.split, name, self._optimal_length(name))
        else:
            self._budget = None if given == math.inf else int(given)
        # what every step's info repeats about the problem, looked up once an episode; the keys that change
        # are placeholders here, set in `_info` (assigning an existing key keeps the order)
        self._info_base: StepInfo = {
            "domain": self.domain_name, "split": self.split, "problem": self.world.name,
            "goal": self.world.goal_text(), "step": 0, "progress": 0.0, "success": False, "action_valid": True,
            "action_kind": "reset", "action": None, "error": None, "optimal_length": self._optimal_length(name),
            "optimal_cost": self._optimal_cost(name), "profile": self.profile.name,
            "solvable": self._solvable(name), "cost": 0, "step_budget": self._budget,
        }
        observation = self.world.observe(self.state, "full")
        self._last_observation = observation
        info = self._info(valid=True, kind="reset", action=None, error=None)
        if self.render_mode == "human":
            self.render()
        return observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, StepInfo]:
        if not self._started:
            raise gym.error.ResetNeeded("Cannot call step() before reset(): reset the environment first "
                                        "(env.reset(), or env.reset(options={'problem': name}))")
        if self._solved_at_reset:
            return self._step_solved_at_reset()
        text = action if isinstance(action, str) else str(action)
        if self.allow_impossible and is_claim(text):
            return self._claim_impossible()
        outcome = self.world.step(self.state, text, self.observation_mode)
        changed = outcome.state != self.state
        if self.allow_impossible and outcome.valid_actions is not None:
            message, listed = list_with_claim(outcome.observation, outcome.valid_actions)
            outcome = replace(outcome, observation=message, valid_actions=listed)
        self.state = outcome.state
        self._step += 1
        self._cost += outcome.cost
        if changed:  # progress is only raised by an action that changed the state (AgentBoard's rule too)
            self._best = max(self._best, self.world.task.progress(self.state))
        reward = self._pay()
        self._last_observation = outcome.observation
        info = self._info(outcome.valid, outcome.kind, outcome.action, outcome.error)
        if outcome.valid_actions is not None:
            info["valid_actions"] = list(outcome.valid_actions)
        terminated = bool(self.world.task.is_goal(self.state))
        if self.render_mode == "human":
            self.render()
        return outcome.observation, float(reward), terminated, self._spent(), info

    def _step_solved_at_reset(self) -> tuple[str, float, bool, bool, StepInfo]:
        """The goal held at reset, so the episode was over before it began: a step changes nothing and
        terminates with success (an action that would break the goal is never applied)."""
        self._step += 1
        self._best = 1.0  # the goal holds (a profile that starts progress at 0 reaches it here)
        reward = self._pay()
        self._last_observation = GOAL_HELD_AT_RESET
        info = self._info(valid=True, kind=SOLVED_AT_RESET, action=None, error=None)
        if self.render_mode == "human":
            self.render()
        return GOAL_HELD_AT_RESET, float(reward), True, self._spent(), info

    def _claim_impossible(self) -> tuple[str, float, bool, bool, StepInfo]:
        """End the episode on the agent's word; only an unsolvable problem counts it as solved."""
        self._step += 1
        self._claimed = True
        if self._solvable(self.world.name) is False:
            self._best = 1.0
        reward = self._pay()
        self._last_observation = CLAIM_OBSERVATION
        info = self._info(True, IMPOSSIBLE_ACTION, IMPOSSIBLE_ACTION, None)
        if self.render_mode == "human":
            self.render()
        return CLAIM_OBSERVATION, float(reward), True, self._spent(), info

    def _spent(self) -> bool:
        """Whether the step budget is spent (truncated), whatever else the step did, as Gymnasium's
        `TimeLimit` says it."""
        return self._budget is not None and self._step >= self._budget

    def _pay(self) -> float:
        """The reward of the step just taken: what the episode has earned so far (its best progress, or
        1.0 once it succeeded) less what was paid, so the return equals the final progress or success."""
        earned = self._best if self.reward_mode == "progress" else float(self._best >= 1.0)
        reward, self._paid = earned - self._paid, earned
        return reward

    def _info(self, valid: bool, kind: str, action: str | None, error: str | None) -> StepInfo:
        info = self._info_base.copy()
        info["step"] = self._step
        info["progress"] = self._best
        info["success"] = self._best >= 1.0
        info["action_valid"] = valid
        info["action_kind"] = kind
        info["action"] = action
        info["error"] = error
        info["cost"] = self._cost
        if self.allow_impossible:
            info["claimed_impossible"] = self._claimed
        return info

    @property
    def action_costs(self) -> bool:
        """Whether the current problem's actions have costs of their own (`:metric minimize (total-cost)`),
        so `info["cost"]` is more than the number of applied actions."""
        return self.world.task.costs

    def valid_actions(self) -> list[str]:
        """Every executable action in the current state, in the text form the parser accepts."""
        actions = self.world.valid_actions(self.state)
        return [*actions, IMPOSSIBLE_ACTION] if self.allow_impossible else actions

    def render(self) -> str | None:
        text = (
            f"[{self.domain_name}/{self.world.name} step {self._step} progress {self._best:.2f}]\n"
            f"{self.world.goal_text()}\n{self._last_observation}"
        )
        if self.render_mode == "ansi":
            return text
        if self.render_mode == "human":
            print(text)
        return None

    def close(self) -> None:
        """Nothing to release: worlds are plain data. Safe to call more than once."""
