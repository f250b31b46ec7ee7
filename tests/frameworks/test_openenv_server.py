"""`pddlworlds env-server` for real: an OpenEnv server process on 127.0.0.1 driven by the OpenEnv client.

Sixteen sessions at once play different problems of one domain without cross-talk (each equals a solo
Gymnasium run of the same actions); bad input (an unknown domain or problem, malformed JSON, an action of
1 MB, a session past the bound) gets a clear error and leaves every other session as it was.
(Whole episodes per domain, against Gymnasium, are in test_frameworks_equivalence.py.)
"""

from __future__ import annotations

import asyncio
import json
import random
import urllib.error
import urllib.request

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401  (registers the ids)
from pddlworlds.registration import env_id

pytest.importorskip("openenv.core", reason="the OpenEnv adapter needs the openenv extra (scripts/setup.sh installs it)")

from pddlworlds.frameworks.openenv_client import PDDLWorldsClient, turn_of

DOMAIN = "gripper"
SESSIONS = 16
STEPS = 12


def solo_run(problem: str, seed: int) -> tuple[list[str], list[tuple]]:
    """Seeded random actions (mostly valid, some not, some listings) and what Gymnasium gives for them."""
    rng = random.Random(f"{problem}:{seed}")
    env = gym.make(env_id(DOMAIN))
    observation, info = env.reset(seed=seed, options={"problem": problem})
    actions, seen = [], [(observation, 0.0, False, False, info)]
    for _ in range(STEPS):
        roll = rng.random()
        action = rng.choice(env.unwrapped.valid_actions()) if roll < 0.7 else "check valid actions" if roll < 0.85 else "jump"
        result = env.step(action)
        actions.append(action)
        seen.append(result[:1] + (float(result[1]),) + result[2:])
        if result[2] or result[3]:
            break
    env.close()
    return actions, seen


def outcome(result) -> tuple:
    t = turn_of(result.observation)
    return (t.observation, t.reward, t.terminated, t.truncated, t.info)


async def play(url: str, problem: str, seed: int, actions: list[str]) -> list[tuple]:
    async with PDDLWorldsClient(base_url=url) as client:
        seen = [outcome(await client.reset(domain=DOMAIN, problem=problem, seed=seed))]
        for action in actions:
            seen.append(outcome(await client.step(action)))
            await asyncio.sleep(0)  # let the other sessions interleave
    return seen


def test_sixteen_concurrent_sessions_do_not_cross_talk(env_server) -> None:
    problems = [f"prob{i:02d}" for i in range(1, SESSIONS + 1)]
    runs = [solo_run(problem, seed) for seed, problem in enumerate(problems)]

    async def everyone() -> list[list[tuple]]:
        return await asyncio.gather(*(play(env_server, p, s, actions) for s, (p, (actions, _)) in enumerate(zip(problems, runs))))

    served = asyncio.run(everyone())
    for problem, (_, expected), got in zip(problems, runs, served):
        assert got == expected, f"session playing {problem} differs from its solo run"


def test_bad_input_gets_a_clear_error_and_leaves_other_sessions_alone(env_server) -> None:
    import websockets

    actions, expected = solo_run("prob03", 3)
    ws_url = env_server.replace("http", "ws", 1) + "/ws"

    async def scenario() -> tuple[list[tuple], dict[str, str]]:
        errors: dict[str, str] = {}
        async with PDDLWorldsClient(base_url=env_server) as witness:  # a session mid-episode throughout
            seen = [outcome(await witness.reset(domain=DOMAIN, problem="prob03", seed=3))]
            seen.append(outcome(await witness.step(actions[0])))
            async with PDDLWorldsClient(base_url=env_server) as bad:
                for name, call in [
                    ("domain", bad.reset(domain="nosuch")),
                    ("problem", bad.reset(domain=DOMAIN, problem="prob99")),
                    ("option", bad.reset(domain=DOMAIN, colour="red")),
                    ("before reset", bad.step("pick up ball1 at rooma with arm left")),
                    ("1 MB", bad.step("x" * 1_000_000)),
                ]:
                    with pytest.raises(RuntimeError) as caught:
                        await call
                    errors[name] = str(caught.value)
                # the refused session still plays
                assert (await bad.reset(domain=DOMAIN, problem="prob01")).observation.step == 0
            async with websockets.connect(ws_url) as raw:
                await raw.send("{not json")
                errors["json"] = json.loads(await raw.recv())["data"]["message"]
                await raw.send(json.dumps({"type": "reset", "data": {"domain": DOMAIN}}))
                assert json.loads(await raw.recv())["type"] == "observation"  # the connection goes on
            await asyncio.sleep(1.0)  # the server ends a closed session after its socket closes
            others = [PDDLWorldsClient(base_url=env_server) for _ in range(SESSIONS - 1)]
            for client in others:
                await client.connect()
                await client.reset(domain=DOMAIN)
            extra = PDDLWorldsClient(base_url=env_server)
            with pytest.raises(RuntimeError) as caught:
                await extra.reset(domain=DOMAIN)
            errors["bound"] = str(caught.value)
            await extra.close()
            for client in others:
                await client.close()
            for action in actions[1:]:
                seen.append(outcome(await witness.step(action)))
        return seen, errors

    seen, errors = asyncio.run(scenario())
    assert seen == expected  # the witness session never noticed
    assert "unknown domain 'nosuch'; " in errors["domain"] and "`pddlworlds list` shows them" in errors["domain"]
    assert "unknown problem 'prob99'; problems: prob01, prob02" in errors["problem"]
    assert "unknown reset option 'colour'" in errors["option"]
    assert "no episode has started: reset first" in errors["before reset"]
    assert "the action is 1,000,000 characters long; at most 1,024 are accepted" in errors["1 MB"]
    assert errors["json"].startswith("Invalid JSON")
    assert "CAPACITY_REACHED" in errors["bound"] and "16/16 sessions" in errors["bound"]
    for message in errors.values():
        assert "\n" not in message and len(message) < 500  # one line, not a traceback


def test_http_routes_and_schema(env_server) -> None:
    """The stateless HTTP routes answer a bad reset with a 400 and its reason; the action schema has one
    required text field (what a generic driver such as verifiers' fills)."""
    with urllib.request.urlopen(f"{env_server}/schema", timeout=10) as reply:
        action = json.loads(reply.read())["action"]
    assert action["required"] == ["text"] and action["properties"]["text"]["type"] == "string"
    request = urllib.request.Request(
        f"{env_server}/reset", data=json.dumps({"domain": "nosuch"}).encode(), headers={"Content-Type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 400
    assert "unknown domain 'nosuch'" in json.loads(caught.value.read())["detail"]
    good = urllib.request.Request(
        f"{env_server}/reset", data=json.dumps({"domain": DOMAIN, "problem": "prob01", "seed": 0}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(good, timeout=10) as reply:
        body = json.loads(reply.read())
    assert body["observation"]["problem"] == "prob01" and body["done"] is False


def test_trl_environment_plays_on_the_server_as_in_process(env_server) -> None:
    """`PDDLWorldsToolEnv(base_url=...)` (one session per environment) gives the in-process prompts, tool
    results and reward."""
    from pddlworlds.frameworks.trl_env import PDDLWorldsToolEnv

    local, remote = PDDLWorldsToolEnv(max_steps=6), PDDLWorldsToolEnv(base_url=env_server, max_steps=6)
    row = {"domain": "barman", "problem": "p15", "seed": 2}
    assert remote.reset(**row) == local.reset(**row)
    for action in ["check valid actions", "left grasp shot1", "fly", "look around"]:
        if action == "check valid actions":
            assert remote.check_valid_actions() == local.check_valid_actions()
        else:
            assert remote.act(action) == local.act(action)
    assert remote.get_reward() == local.get_reward() and remote.info == local.info
