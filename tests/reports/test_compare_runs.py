"""`pddlworlds compare RUN_A RUN_B`: two run folders paired episode by episode (seed with seed), a gzipped
one included; what cannot be paired refused in one line."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from pddlworlds import cli
from pddlworlds.artefacts.runs import CONFIG_FILE, EPISODES_FILE, PACKED_EPISODES_FILE
from pddlworlds.reports.comparison import PairingError, compare_episodes, problem_level

BASE = ["eval", "--agents", "expert,random", "--domains", "blocksworld", "--limit", "3", "--max-steps", "12",
        "--no-progress", "--no-report"]


@pytest.fixture(scope="module")
def five_seeds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """expert and random on 3 problems, seeds 0-4: the random agent's episodes differ seed by seed."""
    out = tmp_path_factory.mktemp("compare") / "five-seeds"
    assert cli.main([*BASE, "--seeds", "0-4", "--out", str(out)]) == 0
    return out


def packed_copy(run: Path, to: Path) -> Path:
    to.mkdir()
    shutil.copy(run / CONFIG_FILE, to / CONFIG_FILE)
    (to / PACKED_EPISODES_FILE).write_bytes(gzip.compress((run / EPISODES_FILE).read_bytes()))
    return to


def compare(*argv: str | Path) -> int:
    return cli.main(["compare", *map(str, argv)])


def test_a_multi_seed_run_compared_with_itself_finds_no_difference(five_seeds: Path, tmp_path: Path, capsys) -> None:
    lines = [json.loads(x) for x in (five_seeds / EPISODES_FILE).read_text().splitlines()]
    random_progress = {(x["problem"], x["seed"]): x["progress"] for x in lines if x["agent"] == "random"}
    assert len(set(random_progress.values())) > 1, "the seeds must differ for the test to mean anything"
    out = tmp_path / "cmp.json"
    capsys.readouterr()
    assert compare(five_seeds, packed_copy(five_seeds, tmp_path / "packed"), "--json", out) == 0
    comparison = json.loads(out.read_text())
    assert comparison["unpaired"] == {"a": 0, "b": 0} and comparison["figures"]["all/all"]["pairs"] == 30
    for group, f in comparison["figures"].items():
        assert (f["sr_a"], f["pr_a"]) == (f["sr_b"], f["pr_b"]), group
        assert f["solved_only_a"] == f["solved_only_b"] == f["pr_differing"] == 0, group
        assert f["sr_p"] is None and f["pr_p"] is None, group  # no discordant pair: nothing to test
    printed = capsys.readouterr()
    assert "| random/blocksworld | 15 |" in printed.out and "none differ | " in printed.out
    assert printed.err == ""  # nothing left out


def test_seeds_pair_with_the_same_seeds_only(five_seeds: Path, tmp_path: Path, capsys) -> None:
    two = tmp_path / "seeds-3-7"
    assert cli.main([*BASE, "--seeds", "3,7", "--out", str(two)]) == 0
    capsys.readouterr()
    assert compare(five_seeds, two, "--json", tmp_path / "cmp.json") == 0
    comparison = json.loads((tmp_path / "cmp.json").read_text())
    assert comparison["figures"]["all/all"]["pairs"] == 6  # seed 3 of 2 agents x 3 problems
    assert comparison["figures"]["random/all"]["pr_differing"] == 0  # seed 3 against seed 3: the same episodes
    assert comparison["unpaired"] == {"a": 24, "b": 6}
    assert "unpaired episodes left out: 24 of five-seeds and 6 of seeds-3-7" in capsys.readouterr().err


def test_runs_with_no_episode_in_common_are_refused_in_one_line(five_seeds: Path, tmp_path: Path, capsys) -> None:
    other = tmp_path / "seed-9"
    assert cli.main([*BASE, "--seeds", "9", "--out", str(other)]) == 0
    capsys.readouterr()
    assert compare(five_seeds, other) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "have no episode in common" in err
    assert "30 scored episode(s) against 6; no seed in common (0, 1, 2, 3, 4 against 9)" in err


def test_folders_read_as_one_run_must_not_hold_the_same_episode(five_seeds: Path, tmp_path: Path, capsys) -> None:
    copy = packed_copy(five_seeds, tmp_path / "copy")
    assert compare(five_seeds, five_seeds, copy) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{copy} and {five_seeds} both hold the episode agent expert, domain blocksworld" in err
    assert compare(five_seeds, five_seeds, five_seeds) == 2 and "is given twice" in capsys.readouterr().err
    line = json.loads((five_seeds / EPISODES_FILE).read_text().splitlines()[0])
    with pytest.raises(PairingError, match="A holds the episode agent expert, .* twice"):
        compare_episodes([line, line], [line])


@pytest.mark.parametrize("damage", [lambda b: b[: len(b) // 2], lambda b: b[:30] + b"\0" * 40 + b[70:]])
def test_a_damaged_gzip_is_one_line_naming_the_file(five_seeds: Path, tmp_path: Path, capsys, damage) -> None:
    packed = packed_copy(five_seeds, tmp_path / "packed")
    (packed / PACKED_EPISODES_FILE).write_bytes(damage((packed / PACKED_EPISODES_FILE).read_bytes()))
    capsys.readouterr()
    assert compare(five_seeds, packed) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"pddlworlds compare: error: {packed / PACKED_EPISODES_FILE}: damaged gzip file")


def test_an_unwritable_json_is_one_line_after_the_table(five_seeds: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "a-file").write_text("")
    capsys.readouterr()
    assert compare(five_seeds, five_seeds, "--json", tmp_path / "a-file" / "cmp.json") == 1
    printed = capsys.readouterr()
    assert "| all/all | 30 |" in printed.out  # the figures computed are shown, not lost
    assert printed.err == f"pddlworlds compare: error: cannot write {tmp_path / 'a-file'}: a file stands where a folder should be\n"
    assert compare(five_seeds, tmp_path / "nowhere") == 2 and "not a folder" in capsys.readouterr().err


def test_generated_problems_are_grouped_by_level_too() -> None:
    assert problem_level("pl9301-easy-01") == "easy" and problem_level("problem1") is None
    line = {"agent": "standard", "domain": "gripper", "split": "heldout", "problem": "pl9301-hard-01", "seed": 0,
            "success": True, "progress": 1.0}
    figures = compare_episodes([line], [{**line, "success": False, "progress": 0.5}]).figures
    assert set(figures) == {"standard/gripper", "standard/all", "standard/level:hard", "all/all"}
    assert figures["standard/level:hard"]["solved_only_a"] == 1 and figures["all/all"]["sr_p"] == 1.0
