"""How each step's text was parsed: the episode replayed in its environment, step by step.

Records store the text sent to the environment and the observation; the canonical action the parser read and
the reason an action was refused are the environment's `info["action"]` and `info["error"]`. Replaying the
actions from the problem's initial state gives them back exactly, as long as the replay agrees with the
record; at the first step where it does not (a run made with other problem files or another parser), the
replay stops and the remaining steps show what the record holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..worlds.catalogue import DEFAULT_SPLIT

__all__ = ["Parsed", "Replayer"]


@dataclass
class Parsed:
    """What the environment made of one step's text."""

    canonical: str | None  # info["action"]: the action as parsed (None when nothing was recognised)
    kind: str  # info["action_kind"]
    valid: bool
    error: str | None  # info["error"]: why it was refused


@dataclass
class Replayer:
    """Replays episodes; environments are made once per (domain, split, domains root) and reused."""

    envs: dict[tuple[str, str, str | None], Any] = field(default_factory=dict)
    failed: dict[tuple[str, str, str | None], str] = field(default_factory=dict)

    def _env(self, domain: str, split: str, domains_root: str | None = None) -> Any:
        key = (domain, split, domains_root)
        if key in self.failed:
            return None
        if key not in self.envs:
            try:
                from ..registration import make_domain_env, register_envs
                from ..worlds.pddl import normalisation_warnings_ignored

                register_envs()
                with normalisation_warnings_ignored():
                    self.envs[key] = make_domain_env(domain, domains_root, split=split).unwrapped
            except Exception as exc:  # noqa: BLE001 - an unknown domain is shown without a replay
                self.failed[key] = f"{type(exc).__name__}: {exc}"
                return None
        return self.envs[key]

    def replay(self, line: dict[str, Any], domains_root: str | None = None) -> list[Parsed]:
        """One `Parsed` per step for the prefix of the trajectory the replay agrees with (maybe none);
        `domains_root` is the run's folder of domains (None: the shipped ones).

        A record the environment cannot replay (a seed or problem it refuses) is shown without a replay.
        """
        try:
            return self._replay(line, domains_root)
        except Exception:  # noqa: BLE001 - the replay only adds to what the record shows
            return []

    def _replay(self, line: dict[str, Any], domains_root: str | None = None) -> list[Parsed]:
        domain, split, problem = line.get("domain"), line.get("split") or DEFAULT_SPLIT, line.get("problem")
        env = self._env(str(domain), str(split), domains_root)
        if env is None:
            return []
        observation, _ = env.reset(seed=line.get("seed"), options={"problem": problem})
        recorded_start = line.get("initial_observation")
        if recorded_start is not None and recorded_start != observation:
            return []
        out: list[Parsed] = []
        for step in line.get("trajectory", []):
            action = step.get("action")
            if not isinstance(action, str):
                break
            observation, _, terminated, _, info = env.step(action)
            if step.get("observation") is not None and step.get("observation") != observation:
                break
            out.append(
                Parsed(
                    info.get("action"),
                    str(info.get("action_kind")),
                    bool(info.get("action_valid")),
                    info.get("error"),
                )
            )
            if terminated:
                break
        return out
