"""A new model backend is one factory plus one `BACKENDS` entry: registered here, run through `pddlworlds eval`."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from pddlworlds import cli
from pddlworlds.llm import BACKENDS, Backend, BackendSpec, Completion, Message, parse_llm


class ScriptedLLM:
    """Answers every action call with the same action; counts a token per word."""

    def __init__(self, spec: BackendSpec) -> None:
        self.arg = spec.model
        self.calls = 0

    @property
    def model_id(self) -> str:
        return f"scripted-{self.arg}"

    def describe(self) -> dict[str, str]:
        return {"model": self.model_id}

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 128,
        stop: Sequence[str] = (),
        temperature: float = 0.0,
    ) -> Completion:
        self.calls += 1
        prompt = sum(self.count_tokens(m.content) for m in messages)
        return Completion(" check valid actions", prompt, 3, 0.0)


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Backend:
    backend = Backend(
        "scripted",
        ScriptedLLM,
        usage="scripted:ARG",
        help="a test's scripted model",
        arg_required=True,
        default_workers=1,
        label=lambda entry: f"the scripted model {entry['model']}",
    )
    monkeypatch.setitem(BACKENDS, "scripted", backend)
    return backend


def test_registered_backend_is_parsed_and_listed(scripted: Backend) -> None:
    spec = parse_llm("scripted:x")
    assert spec == BackendSpec("scripted", model="x") and isinstance(spec.build(), ScriptedLLM)
    with pytest.raises(ValueError, match="needs an argument: --llm scripted:ARG"):
        parse_llm("scripted")
    with pytest.raises(ValueError, match="use one of: .*scripted:ARG"):
        parse_llm("nosuch:x")


def test_registered_backend_is_in_the_help(scripted: Backend, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["eval", "-h"])
    assert "scripted:ARG: a test's scripted model" in " ".join(capsys.readouterr().out.split())


def test_eval_runs_a_backend_registered_from_a_test(
    scripted: Backend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["eval", "--llm", "scripted:x", "--agents", "standard", "--domains", "blocksworld", "--limit", "1"]
    code = cli.main([*argv, "--max-steps", "3", "--out", str(out), "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    config = json.loads((out / "config.json").read_text())
    assert config["llm"] == {"backend": "scripted", "model": "scripted-x"}
    lines = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["steps"] == 3
    steps = lines[0]["trajectory"]
    assert [s["action"] for s in steps] == ["check valid actions"] * 3
    assert all(s["prompt_tokens"] > 0 for s in steps)  # counted by the scripted backend's own tokenizer
    report = (out / "report.md").read_text()
    assert "the scripted model scripted-x" in report
    # Resuming the same command plays nothing again.
    assert cli.main([*argv, "--max-steps", "3", "--out", str(out), "--no-progress"]) == 0
    assert "1/1 episodes stored (0 new)" in capsys.readouterr().err


def _plan(*options: str):
    from pddlworlds.evaluation.options import build_plan

    return build_plan(cli.build_parser().parse_args(["eval", "--domains", "gripper", "--limit", "1", *options]))


def test_the_adapter_option_becomes_a_file_once_where_it_enters(tmp_path: Path) -> None:
    """`--lora` (default: the shipped adapter) is resolved by the CLI; below it None means no adapter."""
    from pddlworlds.llm import shipped_adapter_path

    assert _plan("--agents", "standard").backend.lora == str(shipped_adapter_path("state-choice-subgoals"))
    assert _plan("--agents", "standard", "--setting", "free").backend.lora == str(shipped_adapter_path())
    assert _plan("--agents", "standard", "--lora", "none").backend.lora is None
    assert _plan("--agents", "expert").backend.lora is None  # no agent loads the model
    own = tmp_path / "own.gguf"
    own.write_bytes(b"GGUF")
    assert _plan("--agents", "standard", "--lora", str(own)).backend.lora == str(own.resolve())
    with pytest.raises(ValueError, match="--lora: LoRA adapter file not found"):
        _plan("--agents", "standard", "--lora", str(tmp_path / "missing.gguf"))
    with pytest.raises(ValueError, match="--lora needs a model backend that takes an adapter"):
        _plan("--agents", "standard", "--llm", "openai:m", "--lora", str(own))
    assert BackendSpec("embedded").lora is None


def test_the_embedded_model_plays_its_shipped_pair_unless_a_run_asks_for_something_else(tmp_path: Path) -> None:
    """With nothing said, the embedded model plays state-choice-subgoals with the adapter trained in it (cs1h);
    the diffs form and the taught summaries keep df1, whose prompts they are;
    a setting, an adapter, a model, a profile or a prompt file of your own, or agents that play no model,
    keep the free setting (and the free setting's adapter) as before."""
    from pddlworlds.llm import SHIPPED_ADAPTERS, shipped_adapter_path

    plan = _plan()
    assert plan.setting == "state-choice-subgoals" and plan.backend.lora == str(shipped_adapter_path("state-choice-subgoals"))
    df1, cs1h = "gemma-3-270m-pddlworlds-lora-df1-s86.gguf", "gemma-3-270m-pddlworlds-lora-cs1h-s68.gguf"
    assert Path(plan.backend.lora).name == SHIPPED_ADAPTERS["state-choice-subgoals"] == cs1h
    assert SHIPPED_ADAPTERS["state-choice-diffs"] == SHIPPED_ADAPTERS["state-choice-subgoals-taught"] == df1
    assert _plan("--setting", "state-choice").backend.lora == str(shipped_adapter_path("state-choice"))  # sc1
    for options in (
        ("--setting", "free"),
        ("--decoding", "free"),
        ("--profile", "agentboard"),
        ("--observation-mode", "changes"),
        ("--lora", "none"),
    ):
        assert _plan(*options).setting == "free", options
    assert _plan("--setting", "admissible").backend.lora == str(shipped_adapter_path("admissible"))
    own = tmp_path / "own.gguf"
    own.write_bytes(b"GGUF")
    mine = _plan("--lora", str(own))
    assert (mine.setting, mine.backend.lora) == ("free", str(own.resolve()))
    assert _plan("--llm", "openai:m").setting == "free"
    assert _plan("--agents", "expert,random").setting == "free"
    assert _plan("--agents", "hiagent,os:getcwd").setting == "free"  # an agent of your own takes no setting
    assert _plan("--choice-score", "sum").choice_score == "sum"  # ranks within the default it chooses in


class OwnedScriptedLLM(ScriptedLLM):
    """A scripted backend that, like the embedded one, keeps a prompt cache per owner: it notes whose each
    call is."""

    calls_by: ClassVar[list[str | None]] = []

    def __init__(self, spec: BackendSpec) -> None:
        super().__init__(spec)
        self.owner: str | None = None

    def with_cache_owner(self, owner: str) -> OwnedScriptedLLM:
        view = copy.copy(self)
        view.owner = owner
        return view

    def chat(self, messages: Sequence[Message], **kwargs: object) -> Completion:
        self.calls_by.append(self.owner)
        return super().chat(messages, **kwargs)


def test_each_agent_gets_its_own_share_of_the_prompt_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every model call of an episode is made as its agent (`for_cache_owner`), so one agent's prompts never
    shorten another's calls and the agents' times compare whichever ran first."""
    backend = Backend("owned", OwnedScriptedLLM, usage="owned:ARG", help="owners", arg_required=True, default_workers=1)
    monkeypatch.setitem(BACKENDS, "owned", backend)
    monkeypatch.setattr(OwnedScriptedLLM, "calls_by", [])
    argv = ["eval", "--llm", "owned:x", "--agents", "standard,hiagent", "--domains", "blocksworld", "--limit", "1"]
    assert cli.main([*argv, "--max-steps", "2", "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    lines = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    calls = {line["agent"]: sum(len(s["calls"]) for s in line["trajectory"]) for line in lines}
    assert OwnedScriptedLLM.calls_by == ["standard"] * calls["standard"] + ["hiagent"] * calls["hiagent"]


def test_a_backend_without_a_shared_cache_is_used_as_it_is() -> None:
    from pddlworlds.llm import for_cache_owner

    llm = ScriptedLLM(BackendSpec("scripted", model="x"))
    assert for_cache_owner(llm, "standard") is llm
