"""The admissible-action setting offline: which replies the agents offer a scoring model, how HiAgent's
subgoal line is written before the scored action, how the setting reaches config.json and the report's
header, and that backends which cannot score texts are refused. (The scoring itself, on the real model:
tests/llm/test_scoring_embedded.py.)"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401  (registers the environments)
from pddlworlds import cli
from pddlworlds.agents import HiAgent, StandardAgent, make_agent
from pddlworlds.agents.admissible import candidate_actions
from pddlworlds.evaluation.configuration import build_config
from pddlworlds.evaluation.errors import EvaluationError
from pddlworlds.evaluation.spec import RunPlan, resolve_agent
from pddlworlds.llm import BACKENDS, Backend, BackendSpec, CandidateScorer, Choice, Completion, Message
from pddlworlds.testing.scenarios import BLOCKSWORLD_PROBLEM1_PLAN as PLAN

PROBLEM = "problem1"  # b1 on the table, b3 on b1, b2 on b3; goal: b3 on b2, b2 on b1


class PlanScorer:
    """A scoring model that prefers the reply whose action is the next one of `plan` (else the first one),
    writes `head` whenever it may write freely, and keeps every request."""

    def __init__(self, plan: Sequence[str] = PLAN, head: str = "") -> None:
        self.plan = list(plan)
        self.head = head
        self.chats: list[tuple[list[Message], tuple[str, ...]]] = []
        self.choices: list[list[str]] = []
        self.prefixes: list[str] = []
        self.ranks: list = []
        self.model_id = "plan-scorer"

    def describe(self) -> dict[str, str]:
        return {"model": self.model_id}

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def chat(self, messages, *, max_tokens=128, stop=(), temperature=0.0) -> Completion:
        self.chats.append((list(messages), tuple(stop)))
        return Completion(self.head, 10, 4, 0.0)

    def choose(self, messages: Sequence[Message], continuations: Sequence[str], prefix: str = "", rank=None) -> Choice:
        self.choices.append(list(continuations))
        self.prefixes.append(prefix)
        self.ranks.append(rank)
        wanted = next((i for i, c in enumerate(continuations) if self.plan and c.endswith(f" {self.plan[0]}\n")), 0)
        if self.plan and continuations[wanted].endswith(f" {self.plan[0]}\n"):
            self.plan.pop(0)
        scores = tuple(0.0 if i == wanted else -5.0 for i in range(len(continuations)))
        # given the rule, a backend may stop at the pick: here every other candidate is left at a bound
        exact = () if rank is None else tuple(i == wanted for i in range(len(continuations)))
        return Choice(wanted, scores, 10, 3 * len(continuations), 0.0, tuple(len(c.split()) for c in continuations),
                      exact=exact)


def blocksworld(max_steps: int = 12) -> gym.Env:
    return gym.make("pddlworlds/Blocksworld-v0", max_episode_steps=max_steps)


def test_standard_chooses_among_the_valid_actions_and_the_offered_meta_actions() -> None:
    llm = PlanScorer()
    agent = StandardAgent(llm, setting="admissible")
    env = blocksworld()
    record = agent.run(env, options={"problem": PROBLEM})
    assert record.success and record.steps == len(PLAN)
    assert all(step.valid for step in record.trajectory)
    assert not llm.chats  # STANDARD's cue ends on "Action:": nothing is written freely
    first = llm.choices[0]
    # every valid action of the first state once, then `check valid actions` (Blocksworld shows the full state,
    # so `look around` is not offered), each as " <action>" and a line end
    env.reset(options={"problem": PROBLEM})
    expected = [*env.unwrapped.valid_actions(), "check valid actions"]
    assert first == [f" {a}\n" for a in expected]
    call = record.trajectory[0].calls[0]
    assert call.purpose == "action" and call.candidates == len(expected) and call.logprob == 0.0
    assert call.raw_output == " unstack b2 from b3"
    assert agent.flags()["setting"] == "admissible"
    assert "setting" not in StandardAgent(llm).flags()  # free runs keep their configuration as it was


def test_the_backend_is_given_the_rule_unless_every_candidate_is_to_be_scored() -> None:
    """The pick is all an agent needs, so the backend gets the rule and may stop scoring once the pick is
    decided; the record marks the log-probabilities it left at bounds. `score_all` asks for every sum (the
    record then replays under another rule) and is recorded in the agent's flags."""
    from pddlworlds.agents.admissible import CHOICE_SCORES

    llm = PlanScorer()
    record = StandardAgent(llm, setting="state-choice").run(blocksworld(), options={"problem": PROBLEM})
    assert llm.ranks and all(rank is CHOICE_SCORES["token-mean"] for rank in llm.ranks)  # the setting's rule
    scored = record.trajectory[1].calls[0].candidate_scores
    assert [c.get("exact", True) for c in scored] == [c["action"] == record.trajectory[1].action for c in scored]
    assert sum(c.get("exact", True) for c in scored) == 1 and len(scored) > 1
    llm = PlanScorer()
    agent = StandardAgent(llm, setting="state-choice", score_all=True)
    record = agent.run(blocksworld(), options={"problem": PROBLEM})
    assert llm.ranks and all(rank is None for rank in llm.ranks)
    assert all("exact" not in c for step in record.trajectory for c in step.calls[0].candidate_scores)
    assert agent.flags()["score_all"] is True and "score_all" not in StandardAgent(llm, setting="state-choice").flags()
    with pytest.raises(ValueError, match="does not choose"):
        StandardAgent(llm, score_all=True)


def test_hiagent_writes_its_subgoal_line_then_scores_the_actions_after_it() -> None:
    llm = PlanScorer(head="Subgoal 1: clear b1.\n")
    agent = HiAgent(llm, setting="admissible", summarize=False)
    record = agent.run(blocksworld(3), options={"problem": PROBLEM})
    _, stop = llm.chats[0]
    assert "Action:" in stop and "\nObservation:" in stop  # the model writes up to its action label
    assert llm.prefixes[0] == "Subgoal: clear b1\nAction:"  # its subgoal, in the stated format, starts the reply
    assert all(c.startswith(" ") and c.endswith("\n") for c in llm.choices[0])
    assert record.trajectory[0].subgoal == "clear b1" and record.trajectory[0].action == "unstack b2 from b3"
    assert [c.purpose for c in record.trajectory[0].calls] == ["head", "action"]


def test_hiagent_offers_retrieval_of_finished_subgoals_only_when_it_may_retrieve() -> None:
    llm = PlanScorer(plan=["unstack b2 from b3"], head="")
    agent = HiAgent(llm, setting="admissible", summarize=False)
    env = blocksworld(3)
    observation, info = env.reset(options={"problem": PROBLEM})
    agent.reset(observation, info, env)
    agent.wm.open("clear b3")
    agent.wm.current.finished = True
    agent.wm.open("clear b1")
    agent.act(observation, info)
    assert llm.choices[-1][-1] == " retrieve(1)\n" and llm.prefixes[-1] == "Action:"
    no_retrieval = HiAgent(PlanScorer(head=""), setting="admissible", retrieve=False)
    no_retrieval.reset(observation, info, env)
    no_retrieval.wm.open("clear b3")
    no_retrieval.wm.current.finished = True
    no_retrieval.act(observation, info)
    assert not any("retrieve" in c for c in no_retrieval.llm.choices[-1])


def test_candidates_put_impossible_and_look_around_with_the_meta_actions() -> None:
    env = gym.make("pddlworlds/Tyreworld-v0", split="agentboard", allow_impossible=True)
    env.reset(options={"problem": "p01"})
    actions = candidate_actions(env, look_around=True, retrievable=[2])
    world = [a for a in env.unwrapped.valid_actions() if a != "impossible"]
    assert actions == [*world, "check valid actions", "look around", "retrieve(2)", "impossible"]


def test_a_backend_that_cannot_score_is_refused_clearly() -> None:
    from pddlworlds.llm import OpenAICompatibleLLM

    pytest.importorskip("openai")
    llm = OpenAICompatibleLLM("fake-model", base_url="http://127.0.0.1:9/v1", api_key="x")
    assert not isinstance(llm, CandidateScorer)
    for name in ("standard", "hiagent"):
        for setting in ("admissible", "state-choice"):
            with pytest.raises(ValueError, match="needs a model that scores given texts"):
                make_agent(name, llm, setting=setting)
    with pytest.raises(ValueError, match="unknown setting 'greedy'"):
        make_agent("standard", llm, setting="greedy")


def test_the_cli_refuses_the_setting_where_it_cannot_apply(tmp_path: Path) -> None:
    base = ["eval", "--domains", "blocksworld", "--limit", "1", "--out", str(tmp_path / "r"), "--no-progress"]
    with pytest.raises(SystemExit):  # argparse names the choices
        cli.main([*base, "--decoding", "greedy"])
    assert cli.main([*base, "--setting", "greedy"]) != 0
    for setting in ("--decoding", "--setting"):
        assert cli.main([*base, "--llm", "openai:m", "--base-url", "http://127.0.0.1:9/v1", setting, "admissible"]) != 0
    assert cli.main([*base, "--llm", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--setting", "state-choice"]) != 0
    assert cli.main([*base, "--setting", "state-choice", "--observation-mode", "changes"]) != 0
    assert cli.main([*base, "--setting", "free", "--choice-score", "token-mean"]) != 0
    assert cli.main([*base, "--setting", "state-choice", "--choice-score", "longest"]) != 0
    assert cli.main([*base, "--setting", "free", "--score-all-candidates"]) != 0
    assert not (tmp_path / "r" / "config.json").exists()  # refused before anything ran
    with pytest.raises(EvaluationError, match="applies to the built-in LLM agents"):
        resolve_agent("mypackage.agents:make", None, "admissible")
    _, needs = resolve_agent("expert", None, "admissible")  # scripted agents have no decoding to change
    assert needs is False


@pytest.fixture
def plan_scorer_backend(monkeypatch: pytest.MonkeyPatch) -> Backend:
    backend = Backend(
        "planscorer",
        lambda spec: PlanScorer(),
        usage="planscorer",
        help="a test's scoring model",
        default_workers=1,
        scores_candidates=True,
    )
    monkeypatch.setitem(BACKENDS, "planscorer", backend)
    return backend


def test_the_setting_is_recorded_in_the_configuration_and_shown_in_the_report(
    plan_scorer_backend: Backend, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    argv = ["eval", "--llm", "planscorer", "--agents", "standard", "--domains", "blocksworld", "--limit", "1"]
    assert cli.main([*argv, "--max-steps", "3", "--decoding", "admissible", "--out", str(out), "--no-progress"]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["setting"] == "admissible" and config["agents"]["standard"]["setting"] == "admissible"
    assert "score_all_candidates" not in config
    report = (out / "report.md").read_text()
    assert "- setting: **admissible**" in report and "not comparable with published numbers" in report
    line = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    assert all(call["candidates"] for step in line["trajectory"] for call in step["calls"])
    # resuming the same folder in the other setting is a different run
    assert cli.main([*argv, "--max-steps", "3", "--out", str(out), "--no-progress"]) != 0
    every = tmp_path / "every"
    assert cli.main([*argv, "--max-steps", "3", "--decoding", "admissible", "--score-all-candidates", "--out",
                     str(every), "--no-progress"]) == 0
    config = json.loads((every / "config.json").read_text())
    assert config["score_all_candidates"] is True and config["agents"]["standard"]["score_all"] is True


def test_free_decoding_keeps_the_configuration_and_says_so_in_the_report(tmp_path: Path) -> None:
    plan = RunPlan(agents=["expert"], problems={"blocksworld": ["problem1"]}, backend=BackendSpec())
    assert "setting" not in build_config(plan)
    from dataclasses import replace

    assert build_config(replace(plan, setting="admissible"))["setting"] == "admissible"
    from pddlworlds.reports.setting import setting_words

    assert setting_words({}).startswith("**free**")
    assert setting_words({"decoding": "admissible"}).startswith("**admissible**")  # runs made before settings had names


def test_a_head_that_goes_straight_to_its_action_is_no_error() -> None:
    """`Action:` written first stops the head call with nothing before it: no new subgoal, not a failed call;
    a reply cut by the length limit with nothing in it stays an error."""
    from pddlworlds.agents.admissible import free_head

    class Straight(PlanScorer):
        def __init__(self, finish: str) -> None:
            super().__init__()
            self.finish = finish

        def chat(self, messages, *, max_tokens=128, stop=(), temperature=0.0) -> Completion:
            return Completion("", 10, 2, 0.0, error="empty completion", raw="", finish_reason=self.finish)

    head, call = free_head(Straight("stop"), [Message("user", "x")], 16)
    assert head == "Action:" and call.error is None and call.purpose == "head"
    head, call = free_head(Straight("length"), [Message("user", "x")], 16)
    assert head == "Action:" and call.error == "empty completion"
