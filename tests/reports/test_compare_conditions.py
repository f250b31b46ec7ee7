"""`pddlworlds compare` pairs only runs played under the same conditions (`reports.comparison.CONDITIONS`):
the step budget, the profile, the setting, and the domain files by content, not by the folder's name; any
other pair is refused in one line saying what differs. `--across setting` compares two settings on purpose."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pddlworlds import cli
from pddlworlds.artefacts.runs import CONFIG_FILE
from pddlworlds.worlds.catalogue import get_domain

BASE = ["eval", "--agents", "expert", "--problems", "problem1,problem2", "--no-progress", "--no-report"]


def run(out: Path, *argv: str) -> Path:
    assert cli.main([*BASE, "--out", str(out), *argv]) == 0
    return out


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run(tmp_path_factory.mktemp("conditions") / "shipped", "--domains", "blocksworld")


def compare(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(["compare", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def edited(run_dir: Path, to: Path, **changes: object) -> Path:
    """A copy of a run whose configuration says `changes` (None: the key removed)."""
    shutil.copytree(run_dir, to)
    config = json.loads((to / CONFIG_FILE).read_text())
    for key, value in changes.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    (to / CONFIG_FILE).write_text(json.dumps(config))
    return to


def own_blocksworld(tmp_path: Path, change: str = "") -> Path:
    """A folder of one's own holding a domain named `blocksworld`: the shipped files, `change` appended to
    problem1's last line (nothing: the same content)."""
    shipped_domain = get_domain("blocksworld")
    folder = tmp_path / "mine" / "blocksworld"
    (folder / "problems" / "agentboard").mkdir(parents=True)
    shutil.copy(shipped_domain.domain_file, folder / "domain.pddl")
    shutil.copy(shipped_domain.text_file, folder / "text.toml")
    for problem in ("problem1", "problem2"):
        text = shipped_domain.problem_file(problem).read_text()
        (folder / "problems" / "agentboard" / f"{problem}.pddl").write_text(text + (change if problem == "problem1" else ""))
    return tmp_path / "mine"


def test_runs_played_alike_pair_and_record_their_files_by_content(shipped: Path, capsys) -> None:
    files = json.loads((shipped / CONFIG_FILE).read_text())["domain_files"]["blocksworld"]
    assert set(files) == {"domain", "text", "problems"} and set(files["problems"]) == {"problem1", "problem2"}
    code, out, err = compare(capsys, shipped, shipped)
    assert code == 0 and err == "" and "| expert/blocksworld | 2 |" in out


@pytest.mark.parametrize(("argv", "said"), [
    (["--max-steps", "8"], "step budget 30 against 8"),
    (["--profile", "agentboard"], "profile pddlworlds against agentboard"),
])
def test_runs_played_otherwise_are_refused_in_one_line(shipped: Path, tmp_path: Path, capsys, argv, said) -> None:
    other = run(tmp_path / "other", "--domains", "blocksworld", *argv)
    code, out, err = compare(capsys, shipped, other)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "were not played under the same conditions: " + said in err


def test_a_folder_named_like_a_shipped_domain_pairs_by_content(shipped: Path, tmp_path: Path, capsys) -> None:
    same = run(tmp_path / "same", "--domains", "blocksworld", "--domains-root", str(own_blocksworld(tmp_path / "a")))
    assert compare(capsys, shipped, same)[0] == 0
    changed = run(tmp_path / "changed", "--domains", "blocksworld", "--domains-root",
                  str(own_blocksworld(tmp_path / "b", "\n; another problem\n")))
    code, _, err = compare(capsys, shipped, changed)
    assert code == 2 and "blocksworld's problem problem1 differs by content" in err and err.count("\n") == 1


def test_a_setting_is_compared_across_only_on_purpose(shipped: Path, tmp_path: Path, capsys) -> None:
    other = edited(shipped, tmp_path / "choosing", setting="state-choice", observation_mode="fluents")
    code, _, err = compare(capsys, shipped, other)
    assert code == 2 and "setting free against state-choice (fluents observations)" in err
    assert "--across setting pairs runs of different settings" in err
    code, out, err = compare(capsys, shipped, other, "--across", "setting")
    assert code == 0 and "| expert/blocksworld | 2 |" in out
    assert "note: played across setting free against state-choice (fluents observations)" in err


def test_runs_from_before_the_files_were_recorded(shipped: Path, tmp_path: Path, capsys) -> None:
    old = edited(shipped, tmp_path / "old", domain_files=None)
    assert compare(capsys, shipped, old)[0] == 0  # both the shipped domains: by name, as before
    mine = edited(shipped, tmp_path / "mine-old", domain_files=None, domains_root=str(tmp_path / "elsewhere"))
    code, _, err = compare(capsys, shipped, mine)
    assert code == 2 and "are not recorded" in err and "whether the files are the same is not known" in err
