"""One TRL GRPO step on a Gemma 3 loaded through transformers as `pddlworlds train` loads it (the tests'
tiny random one, with the embedded model's tokenizer: the step's mechanics, not what it learns) with
`PDDLWorldsToolEnv` as `environment_factory`: the reward TRL logs is the environments' own."""

from __future__ import annotations

import pytest

pytest.importorskip("trl", reason="the GRPO example needs the trl extra (scripts/setup.sh installs it)")
pytest.importorskip("peft", reason="the GRPO example needs the train extra (scripts/setup.sh installs it)")

pytestmark = [pytest.mark.embedded, pytest.mark.slow]


def test_one_grpo_step_logs_the_environments_reward(tmp_path, monkeypatch, tiny_base_model) -> None:
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    from pddlworlds.training.trl_grpo import grpo_example

    report = grpo_example(tmp_path, steps=1, problems=("problem5",), generations=2, max_completion_length=16,
                          base_model=tiny_base_model)
    assert len(report.seconds_per_step) == 1 and report.seconds_per_step[0] > 0
    assert report.problems == ["problem5", "problem5"]  # the dataset row chose the episode of each rollout
    assert len(report.last_env_rewards) == 2 and all(0.0 <= r <= 1.0 for r in report.last_env_rewards)
    # problem5 starts with one of its two goal conditions true: no episode returns less than 0.5
    assert min(report.last_env_rewards) >= 0.5
    assert report.logged_rewards == [pytest.approx(sum(report.last_env_rewards) / 2)]
