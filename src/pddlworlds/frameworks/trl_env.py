"""The TRL environment: the class `GRPOTrainer(environment_factory=...)` builds one of per rollout.

    from trl import GRPOTrainer
    from pddlworlds.frameworks.trl_env import PDDLWorldsToolEnv
    trainer = GRPOTrainer(model=..., environment_factory=lambda: PDDLWorldsToolEnv(domain="blocksworld"), ...)

TRL calls `reset(**example)` with the dataset row of each rollout (its `domain`, `split`, `problem`,
`seed`, ... columns choose the episode; other columns are left alone) and appends the returned text, the
goal and the first observation, to the prompt. Every public method but `reset` and `get_reward` becomes a
tool the model can call, described by its docstring: `act(action)` takes one step, `check_valid_actions()`
lists the executable actions (one step too, as in the environment). `get_reward()` is the episode's
progress, or its success with `reward="success"`: the return of the Gymnasium episode either way.

With `base_url`, the episodes are played on a `pddlworlds env-server` (OpenEnv) instead of in process,
each environment holding one session; the observations and tool results are the same. Only the options
set (keywords, row columns) are sent, so the server's own defaults (`--domain`, `--max-steps`, ...) choose
the rest, as they do for any other client.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import MethodType
from typing import Any, Self

from ..unsolvable.claim import IMPOSSIBLE_ACTION
from .episodes import Episode, EpisodeOptions, Turn, check_action_text

__all__ = ["PDDLWorldsToolEnv", "first_prompt", "not_a_tool"]


class not_a_tool:  # lower case: used as a decorator, like `property`
    """A public method TRL does not offer the model as a tool: TRL offers every plain function of the
    environment's class (`inspect.isfunction`) but `reset` and `get_reward`, and this is no function on the
    class, only a method on an instance."""

    def __init__(self, method: Callable[..., Any]) -> None:
        self.method = method
        self.__doc__ = method.__doc__

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        return self if instance is None else MethodType(self.method, instance)


def first_prompt(turn: Turn, max_steps: int, offers_impossible: bool = False) -> str:
    """What the model reads before its first tool call: how to play (the `impossible` action too when the
    episode offers it), the goal, the first observation."""
    claim = (
        f" If you are sure the goal cannot be reached, act('{IMPOSSIBLE_ACTION}') ends the episode (a failure "
        "on a task that can be done)." if offers_impossible else ""
    )
    return (
        "Solve this planning problem by calling tools: act takes one action in words (for example "
        "'pick up b1'), check_valid_actions lists the actions you can take now; each call is one of your "
        f"{max_steps} steps.{claim}\n{turn.info['goal']}\nWhat you observe now:\n{turn.observation}"
    )


class PDDLWorldsToolEnv:
    """One rollout's episode, its tools, and its reward. Keywords are the episodes' defaults (see
    `EpisodeOptions`; `allow_impossible` among them, by default offered on a split with unsolvable
    problems, as `pddlworlds eval` does); a dataset row's columns of the same names override them at each
    reset. In process, what neither sets is `EpisodeOptions`' default; on a server, the server's.
    `domains_root`: play the domain folders under this folder (laid out as `pddl_domains/`) instead of the
    shipped ones, in process only (a server serves the folder it was started with: `--domains-root`)."""

    def __init__(self, base_url: str | None = None, *, domains_root: str | Path | None = None,
                 **defaults: Any) -> None:
        if base_url is not None and domains_root is not None:
            raise ValueError("domains_root is for episodes played in process; a server plays the folder it was "
                             "started with (pddlworlds env-server --domains-root DIR)")
        if base_url is None:  # a bad keyword is refused now, not at the first reset
            self._base = EpisodeOptions.within(domains_root, defaults)
        else:  # what names a problem is the server's to check: it may serve a folder of its own
            EpisodeOptions().updated({k: v for k, v in defaults.items() if k not in ("domain", "split", "problem")})
        self._set = {k: v for k, v in defaults.items() if v is not None}  # all that is sent to a server
        self._remote = base_url is not None
        if base_url is None:
            self._episode: Any = Episode()
        else:
            from .openenv_client import RemoteEpisode

            self._episode = RemoteEpisode(base_url)

    def reset(self, **example: Any) -> str:
        chosen = {**self._set, **{k: example[k] for k in EpisodeOptions.names() if example.get(k) is not None}}
        turn = self._episode.reset(chosen if self._remote else self._base.updated(chosen))
        options = self._episode.options
        return first_prompt(turn, options.budget(turn.info["problem"]), options.offers_impossible)

    def act(self, action: str) -> str:
        """Take one action in the world and see what happens.

        Args:
            action: The action in words, for example "pick up b1" or "stack b1 on b2".

        Returns:
            What you observe after the action, or why it could not be taken.
        """
        return self._episode.step(check_action_text(action)).observation  # in process as on a server

    def check_valid_actions(self) -> str:
        """List every action that can be taken now (this costs one step).

        Returns:
            The valid actions, comma-separated.
        """
        return self._episode.step("check valid actions").observation

    @property
    def info(self) -> Any:
        """The `info` of the episode's last reset or step (None before the first reset); a property, so
        TRL does not offer it as a tool."""
        return self._episode.last.info if self._episode.last is not None else None

    def get_reward(self) -> float:
        last, options = self._episode.last, self._episode.options
        if last is None or options is None:
            raise ValueError("no episode has started: reset first")
        return float(last.info["success"]) if options.reward == "success" else float(last.info["progress"])

    @not_a_tool
    def record(self, agent: str = "trl") -> Any:
        """The episode so far as the `EpisodeRecord` `pddlworlds eval` stores (in process or on a server), so
        that rollouts score as eval's episodes do (`scoring.metrics.summarize`)."""
        return self._episode.record(agent)

    @not_a_tool
    def close(self) -> None:
        """End the episode and close its Gymnasium environment (in process) or its session (on a server).
        TRL never closes the environments it builds: a program that keeps many frees them here (or with a
        `with` block). In process, a closed environment plays again after a reset."""
        self._episode.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
