"""Every door scores the same episodes alike, and says over which episodes each mean is taken: `pddlworlds
eval` (its summary), the Inspect task (its metrics and scored samples), OpenEnv (a server session's record)
and TRL (the environment's record). An episode without a known optimum (an unsolvable problem won by the
`impossible` claim) is left out of steps over optimal everywhere, never counted as 0."""

from __future__ import annotations

import json

import pytest

from pddlworlds.frameworks.episodes import EpisodeOptions
from pddlworlds.frameworks.trl_env import PDDLWorldsToolEnv
from pddlworlds.scoring import metrics as M

pytest.importorskip("openenv.core", reason="the OpenEnv adapter needs the openenv extra (scripts/setup.sh installs it)")
pytest.importorskip("inspect_ai", reason="the Inspect task needs the inspect extra (scripts/setup.sh installs it)")

DOMAIN, SPLIT, MAX_STEPS = "blocksworld", "agentboard-mixed", 20
#: A solvable problem with a proven optimum, and an unsolvable one (no optimum: the claim wins it).
PROBLEMS = ["problem1", "problem2-missing-b1"]
#: The means compared, and the count each is taken over (None: over every episode, `n`).
MEANS = {"sr": "n", "pr": "n", "steps": "n", "executability": "n", "steps_over_optimal": "n_solved_with_optimal"}
#: Inspect's score of each mean.
INSPECT_SCORES = {"sr": "success", "pr": "progress", "steps": "steps", "executability": "executability",
                  "steps_over_optimal": "steps_over_optimal"}


def scored(records: list) -> dict[str, tuple[float | None, int]]:
    row = M.aggregate(records, MAX_STEPS)
    return {name: (row[name], row[over]) for name, over in MEANS.items()}


def test_every_door_gives_the_same_means_over_the_same_episodes(cli, env_server, tmp_path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import get_model

    from pddlworlds.frameworks import inspect_task
    from pddlworlds.frameworks.openenv_client import RemoteEpisode

    code, _, err = cli(["eval", "--agents", "expert", "--domains", DOMAIN, "--split", SPLIT, "--problems",
                        ",".join(PROBLEMS), "--max-steps", str(MAX_STEPS), "--workers", "1", "--out",
                        str(tmp_path / "run"), "--no-progress"])
    assert code == 0, err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    overall = next(r for r in summary["rows"] if r["domain"] == M.OVERALL)
    expected = {name: (overall[name], overall[over]) for name, over in MEANS.items()}
    assert expected["steps_over_optimal"] == (1.0, 1)  # the expert's optimal plan, over the one known optimum
    assert expected["sr"] == (1.0, 2)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "never counting an unknown one as 0" in report

    task = inspect_task.pddlworlds(domain=DOMAIN, split=SPLIT, agent="expert", problems=",".join(PROBLEMS),
                                   max_steps=MAX_STEPS)
    [log] = inspect_eval(task, model=get_model("mockllm/model"), log_dir=str(tmp_path / "inspect"), display="none")
    assert log.status == "success", log.error
    scores = {s.name: s for s in read_eval_log(log.location).results.scores}
    inspected = {name: (next(iter(scores[key].metrics.values())).value, scores[key].scored_samples)
                 for name, key in INSPECT_SCORES.items()}
    assert inspected == expected

    lines = {line["problem"]: line for line in map(json.loads, (tmp_path / "run" / "episodes.jsonl").read_text().splitlines())}
    trl, served = [], []
    local = PDDLWorldsToolEnv(max_steps=MAX_STEPS)
    remote = RemoteEpisode(env_server)
    try:
        for problem in PROBLEMS:
            local.reset(domain=DOMAIN, split=SPLIT, problem=problem, seed=0)
            remote.reset(EpisodeOptions(domain=DOMAIN, split=SPLIT, problem=problem, seed=0, max_steps=MAX_STEPS))
            for step in lines[problem]["trajectory"]:  # the expert's own actions, through each door
                local.act(step["action"])
                remote.step(step["action"])
            trl.append(local.record())
            served.append(remote.record("expert"))
    finally:
        local.close()
        remote.close()
    assert scored(trl) == expected
    assert scored(served) == expected
