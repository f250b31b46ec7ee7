"""Gymnasium vector envs: the async mode (worker processes, observations through shared memory) gives what
the sync mode gives for the same seeds and actions."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest

import pddlworlds  # noqa: F401  (registers the ids)

ACTIONS = [
    ("check valid actions", "look around"),
    ("fly to the moon", "unstack b1 from b2"),
    ("look around", "check valid actions"),
]


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _play(mode: str, domain: str, seeds: list[int], **vector_kwargs) -> list:
    envs = gym.make_vec(
        f"pddlworlds/{domain}-v0", num_envs=2, vectorization_mode=mode, vector_kwargs=vector_kwargs or None
    )
    try:
        trace = [envs.reset(seed=seeds)]
        for actions in ACTIONS:
            trace.append(envs.step(actions))
        return trace
    finally:
        envs.close()


@pytest.mark.parametrize("domain", ["Blocksworld", "Tyreworld"])
def test_async_vector_env_equals_sync(domain):
    sync = _play("sync", domain, [3, 8])
    asynchronous = _play("async", domain, [3, 8])
    observations = [step[0] for step in asynchronous]
    assert all(isinstance(o, tuple) and all(isinstance(t, str) for t in o) for o in observations)
    assert not any(set(t) <= {"a"} for o in observations for t in o)  # not the empty buffer decoded
    for got, want in zip(asynchronous, sync, strict=True):
        assert _same(got, want)


def test_async_without_shared_memory_equals_sync():
    assert all(
        _same(a, b)
        for a, b in zip(_play("async", "Blocksworld", [1, 2], shared_memory=False), _play("sync", "Blocksworld", [1, 2]),
                        strict=True)
    )


def test_shared_observations_without_copy_are_read_live():
    envs = gym.make_vec("pddlworlds/Blocksworld-v0", num_envs=2, vectorization_mode="async", vector_kwargs={"copy": False})
    try:
        first, _ = envs.reset(seed=[3, 8])
        start = copy.deepcopy(first)
        later, *_ = envs.step(("check valid actions", "look around"))
        assert isinstance(start, tuple) and later[0] != start[0]
        assert list(later) == [later[0], later[1]] and len(later) == 2
    finally:
        envs.close()
