"""A run folder, an insight store's folder and an output folder may be shared: a symbolic link planted under
one of our file names must never lead a write outside. Each file we write is opened without following a
link (`files.open_no_follow`) or written by renaming over the link (`files.atomic_write`), and a folder of
a run that is a link is refused; the link's target is never touched."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pddlworlds.artefacts.runs import EPISODES_FILE, ERRORS_FILE, LOCK_FILE
from pddlworlds.cli import main
from pddlworlds.evaluation import RunPlan, RunStore, run_evaluation
from pddlworlds.evaluation.trials import run_trials, trial_dir
from pddlworlds.files import atomic_write
from pddlworlds.insights import InsightStore
from pddlworlds.insights.store import lock_store

FIXTURES = Path(__file__).parent / "fixtures"
WALKER = "pw_eval_agents:walker"
SECRET = b"someone else's file\n"


@pytest.fixture(autouse=True)
def _fixture_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FIXTURES))


def plant(link: Path, target: Path, content: bytes = SECRET) -> Path:
    """A file outside the folder, and a link to it under one of our names."""
    target.write_bytes(content)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return target


def plan(problems: tuple[str, ...] = ("problem1",)) -> RunPlan:
    return RunPlan(agents=[WALKER], problems={"blocksworld": list(problems)}, max_steps=4)


def test_open_no_follow_replaces_a_link_and_keeps_what_it_showed_when_asked(tmp_path: Path) -> None:
    from pddlworlds.files import open_no_follow

    outside = plant(tmp_path / "folder" / "log", tmp_path / "outside")
    fd = open_no_follow(tmp_path / "folder" / "log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, keep_content=True)
    os.write(fd, b"ours\n")
    os.close(fd)
    assert outside.read_bytes() == SECRET
    assert not (tmp_path / "folder" / "log").is_symlink()
    assert (tmp_path / "folder" / "log").read_bytes() == SECRET + b"ours\n"
    # a lock file: the link is replaced by an empty file
    outside = plant(tmp_path / "folder" / "lock", tmp_path / "outside2")
    os.close(open_no_follow(tmp_path / "folder" / "lock", os.O_RDWR | os.O_CREAT))
    assert outside.read_bytes() == SECRET and (tmp_path / "folder" / "lock").read_bytes() == b""
    # a dangling link: nothing is created where it points
    (tmp_path / "folder" / "dangling").symlink_to(tmp_path / "nowhere")
    os.close(open_no_follow(tmp_path / "folder" / "dangling", os.O_WRONLY | os.O_CREAT, keep_content=True))
    assert not (tmp_path / "nowhere").exists()
    # atomic_write renames over a link
    outside = plant(tmp_path / "folder" / "report.md", tmp_path / "outside3")
    atomic_write(tmp_path / "folder" / "report.md", "# ours\n")
    assert outside.read_bytes() == SECRET and (tmp_path / "folder" / "report.md").read_text() == "# ours\n"


def test_eval_writes_its_lock_episodes_and_errors_through_no_link(tmp_path: Path) -> None:
    out = tmp_path / "run"
    lock = plant(out / LOCK_FILE, tmp_path / "lock-target")
    errors = plant(out / ERRORS_FILE, tmp_path / "errors-target")
    two = plan(("problem1", "problem2"))
    result = run_evaluation(two, out, progress=False)
    assert len(result.lines) == 2
    assert lock.read_bytes() == SECRET and errors.read_bytes() == SECRET
    assert not (out / LOCK_FILE).is_symlink() and (out / LOCK_FILE).read_text() == str(os.getpid())
    # an episode file planted as a link: the episodes it shows are kept in a file of the folder's own, the
    # target stays as it was, and the resume adds the missing episode there
    episodes = out / EPISODES_FILE
    first = episodes.read_text().splitlines()[0] + "\n"
    episodes.unlink()
    target = plant(episodes, tmp_path / "episodes-target", first.encode())
    result = run_evaluation(two, out, progress=False)
    assert result.new == 1 and len(result.lines) == 2
    assert target.read_text() == first
    assert not episodes.is_symlink() and episodes.read_text().startswith(first)
    assert len(episodes.read_text().splitlines()) == 2


def test_report_writes_its_plots_report_and_summary_through_no_link(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_evaluation(plan(), out, progress=False)
    targets = {name: plant(out / name, tmp_path / f"{name}-target") for name in
               ("progress.png", "executability.png", "report.md", "summary.json")}
    for name in targets:
        assert (out / name).is_symlink()
    assert main(["report", str(out)]) == 0
    for name, target in targets.items():
        assert target.read_bytes() == SECRET, name
        assert not (out / name).is_symlink()
    assert (out / "progress.png").read_bytes().startswith(b"\x89PNG")


def test_the_insight_stores_lock_and_a_runs_store_copies_follow_no_link(tmp_path: Path) -> None:
    store_file = tmp_path / "insights.json"
    lock = plant(tmp_path / "insights.json.lock", tmp_path / "lock-target")
    with lock_store(store_file):
        pass
    assert lock.read_bytes() == SECRET and not (tmp_path / "insights.json.lock").is_symlink()
    copy = plant(tmp_path / "memory" / "store-1.json", tmp_path / "store-target")
    InsightStore().save(tmp_path / "memory" / "store-1.json")  # a run's own copy: the link is replaced
    assert copy.read_bytes() == SECRET and json.loads((tmp_path / "memory" / "store-1.json").read_text())["rules"] == []


def test_a_trial_folder_planted_as_a_link_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    from pddlworlds.files import FolderLinkError, own_folder

    out = tmp_path / "run"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    trial_dir(out, 1).symlink_to(elsewhere)
    with pytest.raises(FolderLinkError, match="symbolic link"):
        run_trials(plan(), out, 2, progress=False)
    assert list(elsewhere.iterdir()) == []
    code = main(["eval", "--agents", WALKER, "--domains", "blocksworld", "--limit", "1", "--trials", "2",
                 "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1 and f"cannot write {trial_dir(out, 1)}: a symbolic link stands there" in err, err
    assert "Traceback" not in err and list(elsewhere.iterdir()) == []
    with pytest.raises(FolderLinkError):
        own_folder(trial_dir(out, 1))
    assert RunStore(out).read_episodes().episodes == []
