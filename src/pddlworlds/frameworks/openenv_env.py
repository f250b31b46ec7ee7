"""The OpenEnv environment: pddlworlds episodes behind OpenEnv's HTTP/WebSocket server (`openenv-core`).

    pddlworlds env-server --port 8001 --max-sessions 16          # then, from any OpenEnv client:
    PDDLWorldsClient(base_url="http://127.0.0.1:8001").sync()    # pddlworlds.frameworks.openenv_client

`PDDLWorldsEnvironment` is an OpenEnv `Environment` over one `Episode` (the Gymnasium environment
itself), so a session's observations, rewards and ends are Gymnasium's step for step. Each WebSocket
connection is a session with its own environment; `create_app(..., max_concurrent_envs=N)` refuses the
N+1th with OpenEnv's `CAPACITY_REACHED` error. The action is one required text field, so a generic driver
that fills an action's single string field (verifiers' OpenEnv environment does) plays it unchanged.

Reset options (each optional, the server's defaults otherwise): `seed` (picks the problem when none is
named), `domain`, `split`, `profile`, `problem`, `max_steps`, `reward` ("progress" or "success"),
`observation_mode`, and `show_valid_actions` (every observation then lists the executable actions, at no
step's cost; a "check valid actions" step lists them anyway). A bad option, an action longer than the
action space's 1,024 characters, or a step after the end is answered with a one-line error and leaves the
session as it was.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..env import ACTION_MAX_LENGTH
from ..version import __version__
from . import DEFAULT_MAX_SESSIONS, missing_extra
from .episodes import Episode, EpisodeOptions, Turn, check_action_text

try:
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
except ImportError as exc:  # the optional extra is not installed
    raise missing_extra("openenv", exc) from exc

__all__ = [
    "MAX_MESSAGE_BYTES",
    "PDDLWorldsAction",
    "PDDLWorldsEnvironment",
    "PDDLWorldsObservation",
    "PDDLWorldsState",
    "build_app",
    "observation_of",
    "serve",
]

#: The largest WebSocket message the server reads (an action is at most 1,024 characters; a larger
#: message up to this size gets a clear error, a larger one closes only its own connection).
MAX_MESSAGE_BYTES = 4 * 1024 * 1024


class PDDLWorldsAction(Action):
    """One action in words ("stack b1 on b2", "(stack b1 b2)", "check valid actions", "look around")."""

    text: str = Field(
        description=f"the action, in free text (at most {ACTION_MAX_LENGTH} characters)",
        json_schema_extra={"maxLength": ACTION_MAX_LENGTH},
    )


class PDDLWorldsObservation(Observation):
    """What the Gymnasium environment returned, field by field (`done` and `reward` are OpenEnv's own:
    terminated or truncated, and the step's reward; None at reset)."""

    text: str = Field(description="the observation text, exactly as the Gymnasium environment returns it")
    goal: str = Field(description="the goal in words")
    domain: str
    split: str
    problem: str
    profile: str
    step: int = Field(description="steps taken this episode (0 at reset)")
    progress: float = Field(description="best fraction of goal conditions reached so far")
    success: bool = Field(description="whether the goal has been reached")
    terminated: bool = Field(default=False, description="the goal holds (or an impossible claim ended it)")
    truncated: bool = Field(default=False, description="the step budget ran out")
    action_valid: bool = Field(description="whether the text was executed (False for invalid text)")
    action_kind: str = Field(description='"reset", "action", "invalid", "check valid actions", "look around"')
    action: str | None = Field(default=None, description="the parsed action's canonical text")
    error: str | None = Field(default=None, description="why the text was invalid")
    optimal_length: int | None = Field(default=None, description="length of the stored optimal plan")
    solvable: bool | None = None
    valid_actions: list[str] | None = Field(
        default=None, description='the executable actions: after "check valid actions", or always with show_valid_actions'
    )


class PDDLWorldsState(State):
    """The session's episode: OpenEnv's `episode_id` and `step_count`, and where it stands."""

    domain: str | None = None
    split: str | None = None
    problem: str | None = None
    profile: str | None = None
    reward_mode: str | None = None
    max_steps: int | None = None
    progress: float = 0.0
    success: bool = False
    done: bool = False


def observation_of(turn: Turn, listing: list[str] | None = None) -> PDDLWorldsObservation:
    """A reset's or step's `Turn` as an OpenEnv observation; `listing` stands for the valid actions when
    the step itself listed none."""
    info = turn.info
    reset = info["action_kind"] == "reset"
    return PDDLWorldsObservation(
        done=turn.done,
        reward=None if reset else turn.reward,
        text=turn.observation,
        goal=info["goal"],
        domain=info["domain"],
        split=info["split"],
        problem=info["problem"],
        profile=info["profile"],
        step=info["step"],
        progress=info["progress"],
        success=info["success"],
        terminated=turn.terminated,
        truncated=turn.truncated,
        action_valid=info["action_valid"],
        action_kind=info["action_kind"],
        action=info["action"],
        error=info["error"],
        optimal_length=info["optimal_length"],
        solvable=info["solvable"],
        valid_actions=info.get("valid_actions", listing),
    )


class PDDLWorldsEnvironment(Environment[PDDLWorldsAction, PDDLWorldsObservation, PDDLWorldsState]):
    """One session: episodes of the domain, split and problem each reset chooses (`defaults` otherwise)."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has its own Gymnasium environment; worlds are data

    def __init__(self, defaults: EpisodeOptions | None = None) -> None:
        super().__init__()
        self.defaults = defaults or EpisodeOptions()
        self._episode = Episode()
        self._show_valid_actions = False
        self._episode_id: str | None = None

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **options: Any
    ) -> PDDLWorldsObservation:
        show = options.pop("show_valid_actions", False)
        if not isinstance(show, bool):
            raise ValueError(f"show_valid_actions must be true or false, not {show!r}")  # noqa: TRY004 - a bad option
        chosen = self.defaults.updated({**options, "seed": seed})
        turn = self._episode.reset(chosen)  # refused options leave the session's episode as it was
        self._show_valid_actions, self._episode_id = show, episode_id
        return self._observe(turn)

    def step(self, action: PDDLWorldsAction, timeout_s: float | None = None, **kwargs: Any) -> PDDLWorldsObservation:
        return self._observe(self._episode.step(check_action_text(action.text)))

    def _observe(self, turn: Turn) -> PDDLWorldsObservation:
        listing = self._episode.valid_actions() if self._show_valid_actions and not turn.done else None
        return observation_of(turn, listing)

    @property
    def state(self) -> PDDLWorldsState:
        turn, options = self._episode.last, self._episode.options
        if turn is None or options is None:
            return PDDLWorldsState(episode_id=self._episode_id)
        info = turn.info
        return PDDLWorldsState(
            episode_id=self._episode_id, step_count=info["step"], domain=info["domain"], split=info["split"],
            problem=info["problem"], profile=info["profile"], reward_mode=options.reward,
            max_steps=options.max_steps, progress=info["progress"], success=info["success"], done=turn.done,
        )

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="pddlworlds",
            description="PDDL planning problems (Blocksworld, Gripper, Tyreworld, Barman) played in natural "
            "language, with an exact progress reward",
            version=__version__,
        )

    def close(self) -> None:
        self._episode.close()


def build_app(
    defaults: EpisodeOptions | None = None,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    session_timeout_s: float | None = None,
) -> Any:
    """OpenEnv's FastAPI app serving `PDDLWorldsEnvironment` sessions (at most `max_sessions` at once; an
    idle session is closed after `session_timeout_s` when given). A bad request on the stateless HTTP
    routes (`/reset`, `/step`) is a 400 with the one-line reason."""
    from fastapi import Request
    from fastapi.responses import JSONResponse
    from openenv.core.env_server.http_server import create_fastapi_app
    from openenv.core.env_server.types import ConcurrencyConfig

    options = defaults or EpisodeOptions()
    config = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=session_timeout_s)

    def make_environment() -> PDDLWorldsEnvironment:
        return PDDLWorldsEnvironment(options)

    app = create_fastapi_app(make_environment, PDDLWorldsAction, PDDLWorldsObservation, concurrency_config=config)

    async def refused(_request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(status_code=400, content={"detail": str(exc)})

    app.add_exception_handler(ValueError, refused)
    return app


def serve(
    host: str, port: int, defaults: EpisodeOptions | None = None, max_sessions: int = DEFAULT_MAX_SESSIONS,
    session_timeout_s: float | None = None, on_ready: Any = None,
) -> None:
    """Serve until interrupted; `on_ready(url)` once the app is built (before uvicorn binds)."""
    import uvicorn

    app = build_app(defaults, max_sessions, session_timeout_s)
    if on_ready is not None:
        on_ready(f"http://{host}:{port}")
    uvicorn.run(app, host=host, port=port, log_level="warning", ws_max_size=MAX_MESSAGE_BYTES)
