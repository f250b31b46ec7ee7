"""scripts/validate_adapter.py plays through the evaluation's runner: a run folder beside the figures, the
held-out problems laid out in it, resumed by the same command; loops counted by replaying the actions; the
older script's episode file still read, never added to. Scripted agents, no model."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from pddlworlds.agents import make_agent
from pddlworlds.registration import make_domain_env
from pddlworlds.training.onpolicy import StateTrail
from pddlworlds.training.validation import count_returns

REPO = Path(__file__).resolve().parents[2]
#: One problem of blocksworld, two scripted agents, a short budget: a few seconds.
TINY = ["--agents", "expert,random", "--domains", "blocksworld", "--limit", "1", "--max-steps", "12", "--lora", "none"]


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("validate_adapter", REPO / "scripts" / "validate_adapter.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def played(err: str) -> list[str]:
    """The episodes a call played, as its per-episode lines on stderr name them."""
    return [line.split(":")[0].split()[-1] + " " + line.split()[0] for line in err.splitlines() if ": success=" in line]


def test_a_run_plays_into_a_run_folder_and_resumes_where_it_stopped(script, tmp_path, capsys) -> None:
    out = tmp_path / "v.json"
    assert script.main([*TINY, "--out", str(out)]) == 0
    first = capsys.readouterr()
    assert sorted(played(first.err)) == ["blocksworld/h9001-easy-01 expert", "blocksworld/h9001-easy-01 random"]
    run = tmp_path / "v.json.run"
    config = json.loads((run / "config.json").read_text())
    root = Path(config["domains_root"])
    assert root == run / "held-out-problems" and config["split"] == "held-out-standard"
    assert config["problems"] == {"blocksworld": ["h9001-easy-01"]}
    assert (root / "blocksworld" / "problems" / "held-out-standard" / "h9001-easy-01.pddl").is_file()
    figures = json.loads(out.read_text())
    assert figures["figures"]["expert/blocksworld"]["sr"] == 100.0 and figures["episodes"] == str(run)
    assert figures["episodes_missing"] == 0 and "| expert/blocksworld | 1 | 100.0 | 100.0 | 100.0 | 0.0 |" in first.out

    # a run stopped after its first episode: the same command plays the other one only
    lines = (run / "episodes.jsonl").read_text().splitlines(keepends=True)
    (run / "episodes.jsonl").write_text(lines[0])
    assert script.main([*TINY, "--out", str(out)]) == 0
    again = capsys.readouterr()
    assert len(played(again.err)) == 1
    assert (run / "episodes.jsonl").read_text().splitlines(keepends=True)[0] == lines[0]  # not played again
    assert json.loads(out.read_text())["figures"] == figures["figures"]  # the random agent replays alike

    # and a nothing-left call plays nothing; other options are refused, naming the key
    assert script.main([*TINY, "--out", str(out)]) == 0
    assert played(capsys.readouterr().err) == []
    with pytest.raises(SystemExit) as stop:
        script.main([*TINY[:-4], "--max-steps", "20", "--lora", "none", "--out", str(out)])
    assert stop.value.code == 2 and "differing keys: max_steps" in capsys.readouterr().err


def test_loops_counted_on_the_replay_are_those_of_the_episode_played(script, tmp_path, capsys) -> None:
    out = tmp_path / "r.json"
    assert script.main(["--agents", "random", "--domains", "blocksworld", "--limit", "2", "--max-steps", "25",
                        "--lora", "none", "--out", str(out)]) == 0
    capsys.readouterr()
    rows, _ = script._read_rows(out, "--out")
    root = tmp_path / "r.json.run" / "held-out-problems"
    for row in rows:  # the random agent again, its states kept as it plays
        env = StateTrail(make_domain_env("blocksworld", root, split="held-out-standard", max_episode_steps=25))
        record = make_agent("random").run(env, seed=0, options={"problem": row["problem"]})
        env.close()
        assert [s.action for s in record.trajectory] == row["actions"]
        assert row["loops"] == count_returns(env.states)
    assert sum(row["loops"] for row in rows) > 0  # the check above saw returns, not only zeros


def test_the_older_episode_file_is_read_and_compared_but_never_added_to(script, tmp_path, capsys) -> None:
    old = tmp_path / "old.json"
    row = {"agent": "expert", "domain": "blocksworld", "problem": "h9001-easy-01", "success": False, "progress": 0.5,
           "steps": 12, "valid_steps": 12, "loops": 2, "seconds": 1.0}
    (tmp_path / "old.json.episodes.jsonl").write_text(json.dumps(row) + "\n")
    old.write_text(json.dumps({"adapter": None, "held_out_set": "standard"}))
    with pytest.raises(SystemExit) as stop:  # playing into it would mix two formats
        script.main([*TINY, "--out", str(old)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "holds episodes of the older script" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "old.json.run").exists()

    new = tmp_path / "new.json"
    assert script.main([*TINY, "--out", str(new), "--compare", str(old)]) == 0
    compared = json.loads(new.read_text())["compared_with"]
    assert compared["episodes"] == str(tmp_path / "old.json.episodes.jsonl")
    assert compared["figures"]["expert/blocksworld"]["solved_only_a"] == 1
    assert script.main(["--out", str(old), "--report-only", "--agents", "expert", "--domains", "blocksworld",
                        "--limit", "1"]) == 0
    assert json.loads(old.read_text())["figures"]["expert/blocksworld"]["loops_per_episode"] == 2.0
    with pytest.raises(SystemExit) as stop:
        script.main(["--out", str(new), "--report-only", "--compare", str(tmp_path / "absent.json")])
    assert stop.value.code == 2 and "absent.json.run nor" in capsys.readouterr().err
