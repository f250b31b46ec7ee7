"""The run folder's one owner (`artefacts.runs`): its reader, and no other module naming its episode file."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from pddlworlds.artefacts.runs import (
    EPISODES_FILE,
    PACKED_EPISODES_FILE,
    RunFolderError,
    config_setting,
    episode_key,
    planned_episodes,
    read_episodes,
    read_run,
)
from pddlworlds.records import EpisodeRecord

REPO = Path(__file__).resolve().parents[2]


def line(problem: str, **extra) -> dict:
    record = EpisodeRecord(
        agent="expert", domain="gripper", split="agentboard", problem=problem, seed=0, success=True,
        progress=1.0, steps=3, optimal_length=3, run_time_s=0.1, goal="g", initial_observation="o",
    )
    return record.to_dict() | {"meta": {"agent_name": "expert", "max_steps": 30, "trial": 2}} | extra


def write(path: Path, *texts: str) -> Path:
    path.write_text("".join(texts))
    return path


def test_reads_records_with_their_meta(tmp_path: Path) -> None:
    path = write(tmp_path / EPISODES_FILE, json.dumps(line("p1")) + "\n", json.dumps(line("p2", later=1)) + "\n")
    found = read_episodes(path)
    assert [e.record.problem for e in found.episodes] == ["p1", "p2"]
    assert found.episodes[1].line["later"] == 1  # a field a newer version adds is carried along
    assert found.episodes[0].meta.max_steps == 30 and found.episodes[0].meta.trial == 2
    assert found.episodes[0].key == episode_key(found.lines[0]) == ("expert", "gripper", "agentboard", "p1", 0)
    assert found.skipped == [] and found.skipped_words() == ""


def test_torn_last_line_and_duplicates_are_skipped_and_counted_with_their_lines(tmp_path: Path) -> None:
    first = json.dumps(line("p1"))
    path = write(tmp_path / EPISODES_FILE, first + "\n", json.dumps(line("p1", steps=9)) + "\n", first[:40])
    found = read_episodes(path)
    assert [e.line["steps"] for e in found.episodes] == [3]  # the first line of an episode counts
    assert (found.torn, found.duplicates) == (1, 1)
    assert [(s.number, s.reason.split(" (")[0]) for s in found.skipped] == [
        (2, "duplicate of line 1"),
        (3, "torn last line"),
    ]
    assert found.skipped_words() == "1 torn last line and 1 duplicate line(s) of episodes already read"


def test_a_whole_last_line_without_its_newline_is_kept(tmp_path: Path) -> None:
    found = read_episodes(write(tmp_path / EPISODES_FILE, json.dumps(line("p1"))))
    assert len(found.episodes) == 1 and found.unterminated and found.torn == 0


@pytest.mark.parametrize("bad", ["{oops", "[]", "{}", json.dumps({"agent": "a", "domain": "d"})])
def test_a_bad_line_stops_a_strict_read_and_is_skipped_by_a_tolerant_one(tmp_path: Path, bad: str) -> None:
    path = write(tmp_path / EPISODES_FILE, json.dumps(line("p1")) + "\n", bad + "\n", json.dumps(line("p2")) + "\n")
    with pytest.raises(ValueError, match=rf"{EPISODES_FILE}, line 2: not "):
        read_episodes(path)
    found = read_episodes(path, strict=False)
    assert [e.number for e in found.episodes] == [1, 3]
    assert [s.number for s in found.skipped] == [2] and str(found.skipped[0]).endswith("; skipped")


def test_run_folder_needs_a_config_or_episodes(tmp_path: Path) -> None:
    with pytest.raises(RunFolderError, match="not a folder"):
        read_run(tmp_path / "missing")
    with pytest.raises(RunFolderError, match="not a run folder"):
        read_run(tmp_path)
    write(tmp_path / "config.json", "[1]")
    with pytest.raises(RunFolderError, match="expected a JSON object"):
        read_run(tmp_path)


def test_a_gzipped_episodes_file_is_read_like_a_plain_one(tmp_path: Path) -> None:
    text = json.dumps(line("p1")) + "\n" + json.dumps(line("p2")) + "\n"
    (tmp_path / PACKED_EPISODES_FILE).write_bytes(gzip.compress(text.encode()))
    run = read_run(tmp_path)  # no config.json: the gzipped episodes make it a run folder
    assert [e.record.problem for e in run.episodes.episodes] == ["p1", "p2"]
    write(tmp_path / EPISODES_FILE, text)
    with pytest.raises(RunFolderError, match=f"both {EPISODES_FILE} and {PACKED_EPISODES_FILE}"):
        read_run(tmp_path)


@pytest.mark.parametrize(("damage", "words"), [
    (lambda packed: packed[: len(packed) // 2], "damaged gzip file: it ends before its end-of-stream marker"),
    (lambda packed: b"not gzip at all", "damaged gzip file (Not a gzipped file"),
    (lambda packed: packed[:20] + bytes(b ^ 0xFF for b in packed[20:40]) + packed[40:], "damaged gzip file ("),
])
def test_a_damaged_gzip_is_named_as_a_damaged_file(tmp_path: Path, damage, words: str) -> None:
    text = "".join(json.dumps(line(f"p{i}")) + "\n" for i in range(50))
    (tmp_path / PACKED_EPISODES_FILE).write_bytes(damage(gzip.compress(text.encode())))
    for strict in (True, False):  # the report's read and the viewer's alike
        with pytest.raises(RunFolderError, match=re.escape(words)) as caught:
            read_run(tmp_path, strict=strict)
        assert str(caught.value).startswith(str(tmp_path / PACKED_EPISODES_FILE)) and "\n" not in str(caught.value)


def test_no_other_module_names_the_episode_file() -> None:
    """The file name lives in `artefacts.runs` only: everything else imports `EPISODES_FILE`."""
    owner = REPO / "src" / "pddlworlds" / "artefacts" / "runs.py"
    name = re.compile(rf"(?<![\w.]){re.escape(EPISODES_FILE)}")  # not the training data's teacher_episodes
    naming = [
        str(path.relative_to(REPO))
        for folder in ("src", "scripts")
        for path in sorted((REPO / folder).rglob("*.py"))
        if path != owner and name.search(path.read_text(encoding="utf-8"))
    ]
    assert naming == []


@pytest.mark.parametrize(
    "agents, problems, seeds",
    [(["expert"], {"blocksworld": ["problem1"]}, [0]),
     (["expert", "random"], {"blocksworld": ["problem1", "problem2"], "gripper": ["problem1"]}, [0, 1, 2]),
     (["expert"], {}, [0])],
)
def test_planned_episodes_counts_what_the_run_plan_plays(agents, problems, seeds) -> None:
    """The report counts a stored config's planned episodes without the runner's `RunPlan`: both must agree."""
    from pddlworlds.evaluation import RunPlan

    plan = RunPlan(agents=agents, problems=problems, seeds=seeds)
    config = {"agents": {a: {} for a in agents}, "problems": problems, "seeds": seeds}
    assert planned_episodes(config) == len(plan.episodes()) == planned_episodes(json.loads(json.dumps(config)))


def test_config_setting_reads_the_setting_or_the_older_decoding_key() -> None:
    assert config_setting({}) == "free"
    assert config_setting({"decoding": "admissible"}) == "admissible"
    assert config_setting({"setting": "fluents", "decoding": "admissible"}) == "fluents"
