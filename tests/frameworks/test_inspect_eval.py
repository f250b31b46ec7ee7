"""`inspect eval` for real: the pddlworlds task file run as a process against `pddlworlds serve` (the
embedded model behind its OpenAI-compatible server) on 127.0.0.1, STANDARD playing one problem for a few
steps through Inspect's openai-api provider. The log is read back: it holds the episode, and its scores
are what our evaluation computes for that episode, which is the episode `pddlworlds eval` plays on the
same server.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from pddlworlds.records import EpisodeRecord
from pddlworlds.scoring.metrics import episode_metrics
from pddlworlds.testing.servers import free_port, pddlworlds_command, source_env, started

pytest.importorskip("inspect_ai", reason="the Inspect task needs the inspect extra (scripts/setup.sh installs it)")
pytest.importorskip("fastapi", reason="pddlworlds serve needs the server extra (scripts/setup.sh installs it)")
pytest.importorskip("llama_cpp", reason="the embedded model needs llama-cpp-python")

pytestmark = [pytest.mark.embedded, pytest.mark.slow, pytest.mark.xdist_group("model-processes")]  # see pyproject.toml

NAME = "pddlworlds-inspect-test"
STEPS = 3
TASK_FILE = Path(__file__).resolve().parents[2] / "src" / "pddlworlds" / "frameworks" / "inspect_task.py"


def run(command: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, env=source_env(**env), capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_inspect_eval_scores_the_episode_as_our_evaluation_does(tmp_path) -> None:
    from inspect_ai.log import list_eval_logs, read_eval_log

    from pddlworlds.frameworks.inspect_task import SCORES, STORE_KEY

    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    serve = pddlworlds_command("serve", "--port", str(port), "--name", NAME, "--threads", "1")
    with started(serve, f"{base_url}/models"):
        run([sys.executable, "-m", "inspect_ai", "eval", f"{TASK_FILE}@blocksworld",
             "-T", "agent=standard", "-T", "problems=problem1", "-T", f"max_steps={STEPS}", "-T", "example=false",
             "--model", f"openai-api/pddlworlds/{NAME}", "--model-base-url", base_url,
             "--log-dir", str(tmp_path / "logs"), "--log-format", "json", "--display", "none"],
            PDDLWORLDS_API_KEY="unused")
        run(pddlworlds_command("eval", "--agents", "standard", "--domains", "blocksworld", "--problems", "problem1",
                               "--max-steps", str(STEPS), "--workers", "1", "--llm", f"openai:{NAME}",
                               "--base-url", base_url, "--api-key", "unused", "--out", str(tmp_path / "run"),
                               "--no-progress", "--no-report"))
    [location] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(location)
    assert log.status == "success"
    [sample] = log.samples
    score = sample.scores["episode_scores"]
    logged = EpisodeRecord.from_dict(score.metadata["episode"])
    assert sample.store[STORE_KEY]["record"] == score.metadata["episode"]
    assert len(sample.store[STORE_KEY]["turns"]) == logged.steps + 1 == STEPS + 1
    assert any(event.event == "model" for event in sample.events)  # Inspect made the model calls
    ours = EpisodeRecord.from_stored(json.loads((tmp_path / "run" / "episodes.jsonl").read_text().splitlines()[0]))
    assert [(s.action, s.observation, s.valid) for s in logged.trajectory] == [
        (s.action, s.observation, s.valid) for s in ours.trajectory
    ]
    expected = episode_metrics(ours, STEPS)
    # an unknown value (None in ours) is NaN in Inspect's score, which Inspect leaves out of the mean
    scored = {name: None if isinstance(value, float) and math.isnan(value) else value
              for name, value in score.value.items()}
    assert scored == {name: expected[name] for name in SCORES} == {
        name: episode_metrics(logged, STEPS)[name] for name in SCORES
    }
