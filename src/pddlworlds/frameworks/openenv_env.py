"""The OpenEnv environment: pddlworlds episodes behind OpenEnv's HTTP/WebSocket server (`openenv-core`).

    pddlworlds env-server --port 8001 --max-sessions 16          # then, from any OpenEnv client:
    PDDLWorldsClient(base_url="http://127.0.0.1:8001").sync()    # pddlworlds.frameworks.openenv_client

`PDDLWorldsEnvironment` is an OpenEnv `Environment` over one `Episode` (the Gymnasium environment
itself), so a session's observations, rewards and ends are Gymnasium's step for step. Each WebSocket
connection is a session with its own environment; at most `max_sessions` at once (OpenEnv's
`CAPACITY_REACHED` for one more), a session the idle reaper ends having its connection closed with the
reason. The action is one required text field, so a generic driver that fills an action's single string
field (verifiers' OpenEnv environment does) plays it unchanged. `openenv_guard` stands in front: the API
key, the body bound, frames OpenEnv cannot read.

Reset options (each optional, the server's defaults otherwise): `seed` (picks the problem when none is
named), `domain`, `split`, `profile`, `problem` (a default problem applies to its own domain and split
only), `max_steps`, `reward` ("progress" or "success"), `observation_mode`, `allow_impossible` (default:
offered on splits with unsolvable problems, as `pddlworlds eval` does), `episode_id`, and
`show_valid_actions` (every observation then lists the executable actions, at no step's cost; a "check
valid actions" step lists them anyway). A bad option, an action longer than the action space's 1,024
characters, or a step after the end is answered with a one-line error and leaves the session as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pydantic import Field

from ..env import ACTION_MAX_LENGTH
from ..host import bind_port, url_host
from ..version import __version__
from . import DEFAULT_MAX_SESSIONS, missing_extra
from .episodes import STEP_INFO_KEYS, Episode, EpisodeOptions, Turn, check_action_text
from .openenv_guard import CONNECTION, Connection, Guard

try:
    from openenv.core.env_server.http_server import HTTPEnvServer
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
except ImportError as exc:  # the optional extra is not installed
    raise missing_extra("openenv", exc) from exc

__all__ = [
    "MAX_BODY_BYTES",
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
#: The largest HTTP body the server reads (`/reset`, `/step`); a larger one is a 413, unread.
MAX_BODY_BYTES = MAX_MESSAGE_BYTES
#: The longest `episode_id` a reset may give (OpenEnv's state carries it back on every `state` request).
MAX_EPISODE_ID_CHARS = 256

log = logging.getLogger(__name__)


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
    optimal_length: int | None = Field(default=None, description="length of the stored optimal (shortest) plan")
    optimal_cost: int | None = Field(default=None, description="cost of the stored cheapest plan, where the domain "
                                     "has action costs")
    solvable: bool | None = None
    cost: int = Field(default=0, description="the actions' total cost so far (one per action without action costs)")
    step_budget: int | None = Field(default=None, description="the steps this episode gets before it is truncated "
                                    "(30, or a ladder band's budget); None: no limit")
    claimed_impossible: bool | None = Field(
        default=None, description="whether the action claimed the problem impossible (where `impossible` is offered)"
    )
    valid_actions: list[str] | None = Field(
        default=None, description='the executable actions: after "check valid actions", or always with show_valid_actions'
    )


class PDDLWorldsState(State):
    """The session's episode: OpenEnv's `episode_id` and `step_count`, and where it stands."""

    domain: str | None = Field(default=None, description="the episode's domain (None before the first reset)")
    split: str | None = Field(default=None, description="its split")
    problem: str | None = Field(default=None, description="its problem")
    profile: str | None = Field(default=None, description='"pddlworlds" or "agentboard"')
    reward_mode: str | None = Field(default=None, description='"progress" or "success"')
    max_steps: int | None = Field(default=None, description="the step budget")
    allow_impossible: bool | None = Field(default=None, description="whether `impossible` is offered")
    progress: float = Field(default=0.0, description="best fraction of goal conditions reached so far")
    success: bool = Field(default=False, description="whether the goal has been reached")
    done: bool = Field(default=False, description="whether the episode has ended (terminated or truncated)")
    action_costs: bool | None = Field(default=None, description="whether the problem's actions have costs of their "
                                      "own (`info['cost']` is then more than a count of actions)")


def observation_of(turn: Turn, listing: list[str] | None = None) -> PDDLWorldsObservation:
    """A reset's or step's `Turn` as an OpenEnv observation; `listing` stands for the valid actions when
    the step itself listed none."""
    info = turn.info
    reset = info["action_kind"] == "reset"
    return PDDLWorldsObservation(
        done=turn.done,
        reward=None if reset else turn.reward,
        text=turn.observation,
        terminated=turn.terminated,
        truncated=turn.truncated,
        **{key: info[key] for key in STEP_INFO_KEYS},
        claimed_impossible=info.get("claimed_impossible"),
        valid_actions=info.get("valid_actions", listing),
    )


def _answered(what: str, call: Callable[[Any], Turn], argument: Any) -> Turn:
    """`call(argument)`; a refusal (ValueError) keeps its one line, anything else is logged here and
    answered without the internals (no path, no traceback to the client)."""
    try:
        return call(argument)
    except ValueError:
        raise
    except Exception:
        log.exception("pddlworlds env-server: the %s failed", what)
        raise RuntimeError(f"the {what} failed inside the server (its log has the details)") from None


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
        if episode_id is not None and (not isinstance(episode_id, str) or len(episode_id) > MAX_EPISODE_ID_CHARS):
            what = f"{len(episode_id):,} characters" if isinstance(episode_id, str) else type(episode_id).__name__
            raise ValueError(f"episode_id must be a text of at most {MAX_EPISODE_ID_CHARS} characters, not {what}")
        chosen = self.defaults.updated({**options, "seed": seed})
        turn = _answered("reset", self._episode.reset, chosen)  # refused options leave the episode as it was
        self._show_valid_actions, self._episode_id = show, episode_id
        return self._observe(turn)

    def step(self, action: PDDLWorldsAction, timeout_s: float | None = None, **kwargs: Any) -> PDDLWorldsObservation:
        return self._observe(_answered("step", self._episode.step, check_action_text(action.text)))

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
            max_steps=options.budget(info["problem"]), allow_impossible=options.offers_impossible, progress=info["progress"],
            success=info["success"], done=turn.done,
            action_costs=bool(getattr(self._episode.env.unwrapped, "action_costs", False)),
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


class _Server(HTTPEnvServer):
    """OpenEnv's server, whose reaper also closes the connection of the session it ends (with the reason):
    OpenEnv's own leaves it open, and the next reset there played outside `max_concurrent_envs`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._connections: dict[str, Connection] = {}

    async def _create_session(self) -> tuple[str, Environment]:
        session_id, env = await super()._create_session()
        connection = CONNECTION.get()  # set by the guard in this connection's own task
        if connection is not None:
            self._connections[session_id] = connection
        return session_id, env

    async def _destroy_session(self, session_id: str) -> None:
        connection = self._connections.pop(session_id, None)
        await super()._destroy_session(session_id)
        if connection is not None and CONNECTION.get() is not connection:  # not its own end: the reaper's
            idle = self._session_idle_timeout_s
            connection.end(f"session ended after {idle:g} s idle (the server's --session-timeout); connect again "
                           "for a new one" if idle is not None else "session ended by the server; connect again")


def build_app(
    defaults: EpisodeOptions | None = None,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    session_timeout_s: float | None = None,
    api_key: str | None = None,
) -> Any:
    """OpenEnv's FastAPI app serving `PDDLWorldsEnvironment` sessions (at most `max_sessions` at once; an
    idle session is closed after `session_timeout_s` when given), behind the guard (`openenv_guard`: the
    key when `api_key` is given, the body bound, WebSocket frames OpenEnv cannot read). A bad request on
    the stateless HTTP routes (`/reset`, `/step`) is a 400 with the one-line reason; `/schema` gives the
    state's own fields."""
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse
    from openenv.core.env_server.types import ConcurrencyConfig, SchemaResponse

    options = defaults or EpisodeOptions()
    config = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=session_timeout_s)

    def make_environment() -> PDDLWorldsEnvironment:
        return PDDLWorldsEnvironment(options)

    app = FastAPI(title="pddlworlds OpenEnv environment", version=__version__)
    _Server(make_environment, PDDLWorldsAction, PDDLWorldsObservation, concurrency_config=config).register_routes(app)
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) != "/schema"]

    @app.get("/schema", response_model=SchemaResponse, tags=["Schema"])
    async def schema() -> SchemaResponse:
        return SchemaResponse(
            action=PDDLWorldsAction.model_json_schema(), observation=PDDLWorldsObservation.model_json_schema(),
            state=PDDLWorldsState.model_json_schema(),
        )

    async def refused(_request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(status_code=400, content={"detail": str(exc)})

    app.add_exception_handler(ValueError, refused)
    return Guard(app, api_key, MAX_BODY_BYTES, reaping=session_timeout_s is not None)


def serve(
    host: str, port: int, defaults: EpisodeOptions | None = None, max_sessions: int = DEFAULT_MAX_SESSIONS,
    session_timeout_s: float | None = None, on_ready: Callable[[str], None] | None = None,
    api_key: str | None = None,
) -> None:
    """Serve until interrupted; `on_ready(url)` once the port is bound and listening (a port in use raises
    an OSError first, nothing announced)."""
    import uvicorn

    app = build_app(defaults, max_sessions, session_timeout_s, api_key)
    sock = bind_port(host, port)
    try:
        sock.listen(2048)
        if on_ready is not None:
            on_ready(f"http://{url_host(host)}:{port}")
        config = uvicorn.Config(app, log_level="warning", ws_max_size=MAX_MESSAGE_BYTES)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
