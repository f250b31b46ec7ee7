"""The OpenEnv client of `pddlworlds env-server`, for plain Python, asyncio, and the TRL environment.

    from pddlworlds.frameworks.openenv_client import PDDLWorldsClient
    with PDDLWorldsClient(base_url="http://127.0.0.1:8001").sync() as env:
        result = env.reset(domain="gripper", problem="prob01")
        result = env.step("pick up ball1 at rooma with arm left")   # or PDDLWorldsAction(text=...)
        result.observation.text, result.reward, result.done, result.observation.progress

`PDDLWorldsClient` is an OpenEnv `EnvClient` (async; `.sync()` wraps it), one WebSocket session per
client. `RemoteEpisode` plays the same episodes as `episodes.Episode` does in process, giving the same
`Turn`s, so the TRL environment can run on either. A server started with an API key needs it here too:
`api_key=`, or `PDDLWORLDS_API_KEY` in the environment.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from . import API_KEY_VARIABLE, missing_extra
from .episodes import STEP_INFO_KEYS, EpisodeOptions, EpisodeOver, Turn, episode_record
from .openenv_env import PDDLWorldsAction, PDDLWorldsObservation, PDDLWorldsState

try:
    from openenv.core.client_types import StepResult
    from openenv.core.env_client import EnvClient
    from websockets.asyncio.client import connect as ws_connect
    from websockets.exceptions import ConnectionClosed
except ImportError as exc:  # the optional extra is not installed
    raise missing_extra("openenv", exc) from exc

__all__ = ["PDDLWorldsClient", "RemoteEpisode", "turn_of"]


class PDDLWorldsClient(EnvClient[PDDLWorldsAction, PDDLWorldsObservation, PDDLWorldsState]):
    """A session on a pddlworlds OpenEnv server. `step` takes a `PDDLWorldsAction` or the text itself; a
    server error (a bad option, a refused action, a full server, a missing or wrong key, a session the
    server ended) raises RuntimeError with its message. `api_key`: the server's key (default:
    `PDDLWORLDS_API_KEY` if set), sent as `Authorization: Bearer KEY` with the WebSocket handshake."""

    def __init__(self, base_url: str, api_key: str | None = None, **options: Any) -> None:
        super().__init__(base_url, **options)
        self._api_key = api_key if api_key is not None else os.environ.get(API_KEY_VARIABLE) or None

    async def connect(self) -> PDDLWorldsClient:
        """OpenEnv's connect, sending the key with the handshake."""
        if self._ws is not None:
            return self
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else None
        local = urlsplit(self._ws_url).hostname in ("localhost", "127.0.0.1", "::1")
        try:  # no proxy for this machine, as OpenEnv's own connect arranges
            self._ws = await ws_connect(
                self._ws_url, open_timeout=self._connect_timeout, max_size=self._max_message_size,
                additional_headers=headers, **({"proxy": None} if local else {}),
            )
        except Exception as exc:
            raise ConnectionError(f"Failed to connect to {self._ws_url}: {exc}") from exc
        return self

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        """OpenEnv's exchange; when the server closed the session first (a full server sends its
        CAPACITY_REACHED error as soon as the connection opens, then closes it; an idle session ended by
        the server's --session-timeout is closed with that reason), that is raised rather than the
        closed connection."""
        try:
            return await super()._send_and_receive(message)
        except ConnectionClosed as closed:
            try:
                pending = json.loads(await self._ws.recv()) if self._ws is not None else {}
            except (ConnectionClosed, ValueError):
                pending = {}
            data = pending.get("data", {}) if isinstance(pending, dict) and pending.get("type") == "error" else {}
            if data:
                raise RuntimeError(f"Server error: {data.get('message')} (code: {data.get('code')})") from closed
            reason = closed.rcvd.reason if closed.rcvd is not None else ""
            raise RuntimeError(f"the server closed the session: {reason or closed}") from closed

    def _step_payload(self, action: PDDLWorldsAction | str) -> dict[str, Any]:
        if isinstance(action, str):
            return {"text": action}
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[PDDLWorldsObservation]:
        observation = PDDLWorldsObservation(
            **payload.get("observation", {}), done=payload.get("done", False), reward=payload.get("reward")
        )
        return StepResult(observation=observation, reward=payload.get("reward"), done=bool(payload.get("done")))

    def _parse_state(self, payload: dict[str, Any]) -> PDDLWorldsState:
        return PDDLWorldsState(**payload)


def turn_of(observation: PDDLWorldsObservation) -> Turn:
    """A server observation as the `Turn` the in-process `Episode` gives (its info keys included)."""
    info: dict[str, Any] = {key: getattr(observation, key) for key in STEP_INFO_KEYS}
    if observation.claimed_impossible is not None:
        info["claimed_impossible"] = observation.claimed_impossible
    if observation.valid_actions is not None and observation.action_kind == "check valid actions":
        info["valid_actions"] = list(observation.valid_actions)
    reward = float(observation.reward) if observation.reward is not None else 0.0
    return Turn(observation.text, reward, observation.terminated, observation.truncated, info)  # type: ignore[arg-type]


class RemoteEpisode:
    """`episodes.Episode`'s interface over a server session (synchronous; one WebSocket per instance)."""

    def __init__(self, base_url: str, **client_options: Any) -> None:
        self._client = PDDLWorldsClient(base_url=base_url, **client_options).sync()
        self._client.connect()
        self.options: EpisodeOptions | None = None
        self.last: Turn | None = None
        #: The episode so far: the reset's turn, then each action sent and the turn it gave.
        self.history: list[tuple[str | None, Turn]] = []

    def reset(self, options: EpisodeOptions | Mapping[str, Any]) -> Turn:
        """A mapping sends only its options, so the server's defaults choose the rest; `self.options` is
        then what the server played (its state; the seed, observation mode and `allow_impossible` as sent)."""
        chosen = {k: getattr(options, k) for k in options.names()} if isinstance(options, EpisodeOptions) else options
        values = {k: v for k, v in chosen.items() if v is not None}
        self.last = turn_of(self._client.reset(**values).observation)
        self.history = [(None, self.last)]
        if isinstance(options, EpisodeOptions):
            self.options = options
        else:
            s, as_sent = self._client.state(), {k: values.get(k) for k in ("seed", "observation_mode")}
            self.options = EpisodeOptions.as_played(domain=s.domain, split=s.split, profile=s.profile, problem=s.problem,
                                                    max_steps=s.max_steps, reward=s.reward_mode,
                                                    allow_impossible=s.allow_impossible, **as_sent)
        return self.last

    def step(self, text: str) -> Turn:
        if self.last is None:
            raise EpisodeOver("no episode has started: reset first")
        if self.last.done:
            raise EpisodeOver(f"the episode is over after {self.last.info['step']} steps: reset to start another")
        self.last = turn_of(self._client.step(text).observation)
        self.history.append((text, self.last))
        return self.last

    def record(self, agent: str, **extra: Any) -> Any:
        """The episode so far as an `EpisodeRecord` (`episodes.episode_record`), the server saying whether the
        domain has action costs."""
        if self.last is None:
            raise EpisodeOver("no episode has started: reset first")
        costed = bool(self._client.state().action_costs)
        seed = self.options.seed if self.options is not None else None
        return episode_record(agent, self.history, seed=seed, costed=costed, **extra)

    def close(self) -> None:
        self._client.close()
