"""pddlworlds from the frameworks people train and evaluate with: OpenEnv, TRL, Inspect and verifiers.

One module per framework, each needing its optional extra (`pip install 'pddlworlds[openenv]'`, `[trl]`,
`[inspect]`, `[verifiers]`); importing this package imports none of them, and an adapter whose extra is
missing says which one to install. `FRAMEWORKS` names each framework's adapter:

- "openenv": `openenv_env.PDDLWorldsEnvironment` (served by `pddlworlds env-server`; its client is
  `openenv_client.PDDLWorldsClient`);
- "trl": `trl_env.PDDLWorldsToolEnv`, the class `GRPOTrainer(environment_factory=...)` takes;
- "inspect": `inspect_task.pddlworlds`, the Inspect task (`inspect eval pddlworlds/gripper`);
- "verifiers": `verifiers_env.load_environment`, the verifiers environment (`vf-eval pddlworlds`).

All four play `episodes.Episode`: the Gymnasium environment, its problem chosen at reset. The verifiers
environment and the expert's dataset (`expert_data`, `pddlworlds export`) share one chat form (`chat`).
"""

from __future__ import annotations

from ..registry import Registry
from .episodes import Episode, EpisodeOptions, EpisodeOver, Turn

__all__ = ["API_KEY_VARIABLE", "DEFAULT_MAX_SESSIONS", "EXTRAS", "FRAMEWORKS", "Episode", "EpisodeOptions", "EpisodeOver", "Turn", "adapter", "missing_extra"]

#: Concurrent sessions an OpenEnv server holds unless told otherwise (`pddlworlds env-server --max-sessions`).
DEFAULT_MAX_SESSIONS = 16
#: The environment variable holding an env-server's API key, read by the server (without `--api-key`) and
#: by its client (without `api_key=`).
API_KEY_VARIABLE = "PDDLWORLDS_API_KEY"

#: Framework -> (the pyproject extra that installs it, the module that must import).
EXTRAS: dict[str, tuple[str, str]] = {
    "openenv": ("openenv", "openenv.core"),
    "trl": ("trl", "trl"),
    "inspect": ("inspect", "inspect_ai"),
    "verifiers": ("verifiers", "verifiers"),
}

FRAMEWORKS: Registry[object] = Registry(
    "framework",
    {
        "openenv": "pddlworlds.frameworks.openenv_env:PDDLWorldsEnvironment",
        "trl": "pddlworlds.frameworks.trl_env:PDDLWorldsToolEnv",
        "inspect": "pddlworlds.frameworks.inspect_task:pddlworlds",
        "verifiers": "pddlworlds.frameworks.verifiers_env:load_environment",
    },
)


def missing_extra(framework: str, exc: ImportError | None = None) -> ImportError:
    """The error for a framework whose package is not installed: which extra brings it."""
    extra, module = EXTRAS[framework]
    what = f" ({exc.name} is missing)" if exc is not None and exc.name else ""
    return ImportError(f"the {framework} adapter needs {module}{what}: pip install 'pddlworlds[{extra}]'")


def adapter(framework: str) -> object:
    """The adapter `FRAMEWORKS` names, imported now (an ImportError naming the extra if it is missing)."""
    if framework not in FRAMEWORKS:
        raise FRAMEWORKS.unknown(framework)
    try:
        return FRAMEWORKS[framework]
    except ValueError as exc:  # the registry wraps the ImportError of a missing package
        if isinstance(exc.__cause__, ImportError):
            raise exc.__cause__ from None
        raise
