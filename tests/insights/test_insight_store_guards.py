"""The insight store under hostile use: one run at a time updates a store (a second is refused with the first
one's pid), a symbolic link is written through, a folder path is refused before trial 1, a store over the
cap is cut on load with a warning, and deep, huge or non-UTF-8 files are one error naming the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pddlworlds.evaluation import BackendSpec, RunPlan
from pddlworlds.evaluation.trials import MEMORY_DIR, run_trials, trial_dir
from pddlworlds.insights import InsightMemory, InsightStore, InsightStoreError
from pddlworlds.insights.memory import InsightCapWarning, store_path
from pddlworlds.insights.store import MAX_JSON_DEPTH, MAX_STORE_BYTES, lock_store

pytest.importorskip("openai")
from pddlworlds.testing.fake_openai import FakeOpenAIServer

SRC = str(Path(__file__).resolve().parents[2] / "src")


PLAN = ["unstack b2 from b3", "putdown b2", "unstack b3 from b1", "putdown b3", "pickup b2", "stack b2 on b1",
        "pickup b3", "stack b3 on b2"]


def responder(messages: list[dict]) -> str:
    """Generation calls add a rule; STANDARD plays the plan of problem1."""
    if messages[0]["content"].startswith("You keep a short list of rules"):
        return "ADD general: Look before you act."
    return f"Action: {PLAN[messages[-1]['content'].count('Observation: ') - 1]}"


def plan_for(srv: FakeOpenAIServer) -> RunPlan:
    return RunPlan(
        agents=["standard"],
        problems={"blocksworld": ["problem1"]},
        max_steps=10,
        backend=BackendSpec("openai", model="fake-model", base_url=srv.base_url, api_key="test"),
    )


def _store(rules: list[tuple[str, str, int]]) -> InsightStore:
    store = InsightStore()
    for scale, text, score in rules:
        store.add(scale, text, score)
    return store


def test_a_second_run_on_the_same_store_is_refused_with_the_first_ones_pid(tmp_path: Path) -> None:
    path = tmp_path / "insights.json"
    holder = subprocess.Popen(
        [sys.executable, "-c", (
            "import sys, time; sys.path.insert(0, sys.argv[1]);"
            "from pddlworlds.insights.store import lock_store\n"
            "with lock_store(sys.argv[2]):\n    print('locked', flush=True); time.sleep(60)"
        ), SRC, str(path)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with FakeOpenAIServer(responder) as srv, pytest.raises(
            InsightStoreError, match=rf"being updated by another run \(pid {holder.pid}\)"
        ):
            run_trials(plan_for(srv), tmp_path / "run", 1, InsightMemory(str(path)), progress=False)
        assert not trial_dir(tmp_path / "run", 1).exists()
    finally:
        holder.kill()
        holder.wait()
    with lock_store(path) as target:  # free again once the first run is gone
        assert target == path.resolve()


def test_a_folder_path_is_refused_before_trial_one(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with FakeOpenAIServer(responder) as srv, pytest.raises(InsightStoreError, match="is a folder or a device"):
        run_trials(plan_for(srv), tmp_path / "run", 2, InsightMemory(str(folder)), progress=False)
    assert not (tmp_path / "run" / MEMORY_DIR).exists() and not trial_dir(tmp_path / "run", 1).exists()


def test_a_symlinked_store_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "shared" / "insights.json"
    real.parent.mkdir()
    _store([("general", "Keep the goal in mind.", 2)]).save(real)
    link = tmp_path / "my-insights.json"
    link.symlink_to(real)
    with FakeOpenAIServer(responder) as srv:
        result = run_trials(
            plan_for(srv), tmp_path / "run", 1, InsightMemory(str(link), mode="success"), progress=False
        )
    assert result.done == 1
    assert link.is_symlink() and os.readlink(link) == str(real)
    texts = [r.text for r in InsightStore.load(real).rules]
    assert "Look before you act." in texts and "Keep the goal in mind." in texts


def test_a_store_over_the_cap_is_cut_on_load_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "insights.json"
    _store([("general", f"Rule number {i}.", 1 + i % 7) for i in range(2000)]).save(path)
    memory = InsightMemory(str(path), cap=5)
    with pytest.warns(InsightCapWarning, match=r"insights.json: 1995 rule\(s\) over the cap of 5 per scale"):
        memory.prepare(tmp_path / "memory")
    first = InsightStore.load(store_path(tmp_path / "memory", 0))
    assert len(first.rules) == 5 and {r.score for r in first.rules} == {7}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"[" * 100_000 + b"]" * 100_000, f"JSON nested deeper than {MAX_JSON_DEPTH} levels"),
        (b'{"rules": [{"id": 1, "scale": "general", "text": "t", "x": ' + b"[" * 40 + b"]" * 40 + b"}]}",
         "nested deeper"),
        (b'{"rules": [{"id": ' + b"9" * 5000 + b', "scale": "general", "text": "t"}]}', "not a readable JSON file"),
        (b'{"rules": [{"id": ' + b"9" * 40 + b', "scale": "general", "text": "t"}]}', "is not an integer from 1"),
        (b'{"rules": [{"id": 1, "scale": "general", "text": "caf\xe9"}]}', "line 1: not UTF-8 text (byte 0xe9)"),
        (b'{"rules": [], "pad": "' + b"x" * (MAX_STORE_BYTES + 1) + b'"}', "over the limit"),
    ],
)
def test_bad_files_are_one_error_naming_the_file(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "insights.json"
    path.write_bytes(content)
    with pytest.raises(InsightStoreError) as info:
        InsightStore.load(path)
    assert str(info.value).startswith(str(path)) and expected in str(info.value)


def test_strings_holding_brackets_do_not_count_as_nesting(tmp_path: Path) -> None:
    path = tmp_path / "insights.json"
    path.write_text(json.dumps({"rules": [{"id": 1, "scale": "general", "text": "[[[[" * 20 + ' \\" {{{'}]}))
    assert InsightStore.load(path).rules[0].text.startswith("[[[[")
