"""The state-choice setting offline: the environment it needs, the candidates and ranking rules, the state
always in view, HiAgent's summariser reading changes, the run's configuration, and the planner's teacher
for both of HiAgent's levels (subgoal lines from the plan's goal conditions, summaries from what changed).
(Scoring on the real model: tests/llm/test_scoring_embedded.py.)"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401  (registers the environments)
from pddlworlds import cli
from pddlworlds.agents import HiAgent, StandardAgent, get_setting
from pddlworlds.agents.admissible import CHOICE_SCORES, choice_scores, choose_action
from pddlworlds.agents.segments import goal_segment
from pddlworlds.llm import BACKENDS, Backend, Choice, Completion, Message
from pddlworlds.registration import make_env
from pddlworlds.training.expert import StateExpert
from pddlworlds.training.onpolicy import play_labelled
from pddlworlds.worlds.catalogue import domains
from pddlworlds.worlds.search import shortest_plan


class WordScorer:
    """A scoring model whose log-probability of a candidate is -1 per token, except that candidates
    containing `liked` cost -0.5 per token; tokens are words. Keeps every request."""

    model_id = "word-scorer"

    def __init__(self, liked: str = "", head: str | Sequence[str] = "") -> None:
        self.liked = liked
        self.heads = [head] if isinstance(head, str) else list(head)
        self.requests: list[tuple[list[Message], list[str], str]] = []
        self.chats: list[list[Message]] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def chat(self, messages, *, max_tokens=128, stop=(), temperature=0.0) -> Completion:
        self.chats.append(list(messages))
        if "\nSubgoal:" in stop:  # a summary call
            return Completion("Met: yes\nSummary: done.", 10, 4, 0.0)
        head = self.heads[0] if len(self.heads) == 1 else self.heads.pop(0)
        return Completion(head, 10, 4, 0.0)

    def choose(self, messages: Sequence[Message], continuations: Sequence[str], prefix: str = "", rank=None) -> Choice:
        self.requests.append((list(messages), list(continuations), prefix))
        lengths = tuple(len(c.split()) for c in continuations)
        logprobs = tuple(-(0.5 if self.liked and self.liked in c else 1.0) * n for c, n in zip(continuations, lengths))
        # the pick under the caller's rule, as the protocol says (else the largest sum); ties: the first
        score = (lambda i: rank(logprobs[i], lengths[i], continuations[i])) if rank else (lambda i: logprobs[i])
        best = max(range(len(continuations)), key=lambda i: (score(i), -i))
        return Choice(best, logprobs, 10, sum(lengths), 0.0, lengths)


def full_env(domain: str = "Gripper", max_steps: int = 6) -> gym.Env:
    return gym.make(f"pddlworlds/{domain}-v0", observation_mode="full", max_episode_steps=max_steps)


def test_the_setting_needs_the_full_state_and_offers_no_describing_meta_actions() -> None:
    agent = StandardAgent(WordScorer(), setting="state-choice")
    with pytest.raises(ValueError, match="observation_mode 'fluents' or 'full', not 'changes'"):
        agent.run(gym.make("pddlworlds/Tyreworld-v0", max_episode_steps=2), options={"problem": "p01"})
    llm = WordScorer()
    env = full_env("Tyreworld", 2)
    StandardAgent(llm, setting="state-choice").run(env, options={"problem": "p01"})
    messages, candidates, prefix = llm.requests[0]
    env.reset(options={"problem": "p01"})
    assert candidates == [f" {a}\n" for a in env.unwrapped.valid_actions()] and prefix == ""
    system = messages[0].content
    assert "check valid actions" not in system and "look around" not in system


def test_a_length_normalised_rule_is_not_won_by_brevity() -> None:
    choice = Choice(0, (-2.0, -3.0), 5, 7, 0.0, (2, 6))
    texts = [" short\n", " a much longer candidate here\n"]
    assert choice_scores(choice, texts, "sum") == [-2.0, -3.0]  # the sum favours the short one
    assert choice_scores(choice, texts, "token-mean") == [-1.0, -0.5]
    assert choice_scores(choice, texts, "word-mean") == [-2.0, -0.6]
    assert list(CHOICE_SCORES) == ["sum", "token-mean", "word-mean"]
    llm = WordScorer(liked="move from rooma to roomb")
    pick = choose_action(llm, [Message("user", "x")], ["drop b", "move from rooma to roomb"], rule="token-mean")
    assert pick.action == "move from rooma to roomb"
    assert [c["action"] for c in pick.call.candidate_scores] == ["drop b", "move from rooma to roomb"]
    assert choose_action(llm, [Message("user", "x")], ["drop b", "move from rooma to roomb"], rule="sum").action == "drop b"


def test_the_last_observation_in_every_prompt_is_the_current_state() -> None:
    for agent in (StandardAgent(WordScorer(), setting="state-choice"),
                  HiAgent(WordScorer(head="Subgoal: carry the balls\n"), setting="state-choice")):
        record = agent.run(full_env(), options={"problem": "prob01"})
        prompts_sent = [m[-1].content for m, _, _ in agent.llm.requests]
        observations = [record.initial_observation] + [s.observation for s in record.trajectory]
        assert len(prompts_sent) == record.steps
        for prompt, state in zip(prompts_sent, observations):
            last = prompt.rpartition("Observation: ")[2].partition("\n")[0]
            assert last == state and "Current state:" not in prompt


def test_after_a_retrieval_the_current_state_is_shown_again() -> None:
    llm = WordScorer(head="")
    agent = HiAgent(llm, setting="state-choice", summarize=False)
    env = full_env()
    observation, info = env.reset(options={"problem": "prob01"})
    agent.reset(observation, info, env)
    agent.wm.open("first")
    agent.observe("move from rooma to rooma", observation, {**info, "step": 1})
    agent.wm.current.finished = True
    agent.wm.open("second")
    agent._retrieve(agent.wm.current, "retrieve(1)", 1)
    memory = agent.in_view(agent.memory_text(), observation)
    assert memory.endswith(f"Current state: {observation}\n")


def test_the_summariser_reads_what_each_step_made_true() -> None:
    llm = WordScorer(head=["Subgoal: ball1 is at roomb\n", "Subgoal: ball2 is at roomb\n", "Subgoal: ball3 is at roomb\n"])
    agent = HiAgent(llm, setting="state-choice")
    agent.run(full_env(max_steps=3), options={"problem": "prob01"})
    summaries = [m for m in llm.chats if m[-1].content.endswith("Met:")]
    assert summaries, "a new subgoal each turn finishes the one before"
    text = summaries[0][-1].content
    assert "Made true: " in text and "Observation:" not in text
    assert "facts it made true" in summaries[0][0].content


def test_goal_segments_follow_the_plans_goal_conditions() -> None:
    env = full_env()
    env.reset(options={"problem": "prob01"})
    world = env.unwrapped.world
    plan = shortest_plan(world.task)
    segment = goal_segment(world, plan, world.initial_state)
    # four balls from rooma to roomb: the first segment ends where the first ball is dropped in roomb
    assert segment.text.endswith("is at roomb") and segment.text.startswith("ball")
    assert world.action_text(plan[segment.end - 1]).startswith("drop ")
    assert "Robby is at roomb." in segment.summary


def _expert(domain: str, problem: str, max_steps: int) -> tuple[gym.Env, StateExpert]:
    d = domains()[domain]
    path = Path(gym.make(f"pddlworlds/{domain.capitalize()}-v0").unwrapped.problem_files[problem])
    env = make_env(d.domain_file, path, text_file=d.text_file, max_episode_steps=max_steps, observation_mode="full")
    return env, StateExpert(env.unwrapped.world, Path(d.domain_file), path, d.text_file)


@pytest.mark.parametrize("agent", ["standard", "hiagent"])
def test_the_expert_player_reaches_the_goal_and_every_pick_is_labelled(agent: str) -> None:
    env, expert = _expert("gripper", "prob01", 30)
    record, calls = play_labelled(env, None, agent, expert, seed=3, setting="state-choice", detour=0.0)
    assert record.success and record.steps == 11  # the optimal length: no detour
    actions = [c for c in calls if c.purpose == "action"]
    assert len(actions) == record.steps and all(c.stop == ("\n",) for c in actions)
    for call, step in zip(actions, record.trajectory):
        assert call.reply.rpartition("Action: ")[2].strip() == step.action
    if agent == "hiagent":
        assert actions[0].reply.startswith("Subgoal: ball") and "is at roomb\nAction: " in actions[0].reply
        summaries = [c for c in calls if c.purpose == "summary"]
        assert summaries and all(c.reply.startswith("Met: yes\nSummary: ") for c in summaries)
    else:
        assert all(c.reply.startswith(" ") and "Subgoal" not in c.reply for c in actions)


def test_detours_leave_the_path_and_are_labelled_with_the_way_back() -> None:
    env, expert = _expert("blocksworld", "problem4", 40)
    record, calls = play_labelled(env, None, "standard", expert, seed=1, setting="state-choice", detour=0.5)
    off_path = [(c, s) for c, s in zip(calls, record.trajectory) if c.reply.strip() != s.action]
    assert off_path, "half the picks are detours"
    for call, _ in off_path:  # the label is an optimal next action from the state the call was made in
        assert expert.plan_from(call.state) and call.reply.strip() == expert.world.action_text(expert.plan_from(call.state)[0])


def test_the_cli_records_the_setting_and_refuses_a_model_that_cannot_score(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    backend = Backend("wordscorer", lambda spec: WordScorer(), usage="wordscorer", help="a test's scoring model",
                      default_workers=1, scores_candidates=True)
    monkeypatch.setitem(BACKENDS, "wordscorer", backend)
    out = tmp_path / "run"
    argv = ["eval", "--llm", "wordscorer", "--agents", "standard", "--domains", "tyreworld", "--limit", "1",
            "--max-steps", "2", "--setting", "state-choice", "--out", str(out), "--no-progress"]
    assert cli.main(argv) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["setting"] == "state-choice" and config["observation_mode"] == "fluents"
    assert "- setting: **state-choice**" in (out / "report.md").read_text()
    episode = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    assert all(call["candidate_scores"] for step in episode["trajectory"] for call in step["calls"])
    env = gym.make("pddlworlds/Tyreworld-v0", observation_mode="full")
    first, _ = env.reset(options={"problem": episode["problem"]})
    assert episode["initial_observation"] == first  # the full state, not the domain's default
    assert cli.main([*argv[:-3], "--choice-score", "word-mean", "--out", str(tmp_path / "w"), "--no-progress"]) == 0
    assert json.loads((tmp_path / "w" / "config.json").read_text())["choice_score"] == "word-mean"
    assert get_setting("state-choice").choice_score in CHOICE_SCORES


def test_the_fluents_mode_shows_every_fact_an_action_can_change_after_the_first_observation() -> None:
    full = gym.make("pddlworlds/Barman-v0", observation_mode="full")
    fluents = gym.make("pddlworlds/Barman-v0", observation_mode="fluents")
    first_full, _ = full.reset(options={"problem": "p01"})
    first, _ = fluents.reset(options={"problem": "p01"})
    assert first == first_full and "dispenser1 dispenses ingredient1." in first  # everything at reset
    after_full, *_ = full.step("left grasp shot1")
    after, *_ = fluents.step("left grasp shot1")
    static = [s for s in after_full.split(". ") if "dispenses" in s or "part of" in s or "level after" in s]
    assert static and not any(s in after for s in static)  # the facts no action changes are left out
    assert set(after.rstrip(".").split(". ")) <= set(after_full.rstrip(".").split(". "))
    assert "left hand is holding shot1" in after and len(after) < 0.7 * len(after_full)
    with pytest.raises(ValueError, match="agentboard profile"):
        gym.make("pddlworlds/Barman-v0", observation_mode="fluents", profile="agentboard")


def _scoring_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    backend = Backend("wordscorer", lambda spec: WordScorer(), usage="wordscorer", help="a test's scoring model",
                      default_workers=1, scores_candidates=True)
    monkeypatch.setitem(BACKENDS, "wordscorer", backend)


def test_a_state_choice_run_is_never_set_beside_published_numbers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's promise: the paper's columns and AgentBoard's twelve models stand beside a free run of
    STANDARD under the agentboard profile, and never beside the same run in the state-choice setting."""
    _scoring_backend(monkeypatch)
    argv = ["eval", "--llm", "wordscorer", "--agents", "standard", "--domains", "blocksworld", "--problems",
            "problem1", "--max-steps", "2", "--profile", "agentboard", "--no-progress"]
    assert cli.main([*argv, "--out", str(tmp_path / "free")]) == 0
    free = (tmp_path / "free" / "report.md").read_text()
    assert "Paper SR %" in free and "## Beside the models AgentBoard published" in free
    capsys.readouterr()
    out = tmp_path / "sc"
    assert cli.main([*argv, "--setting", "state-choice", "--observation-mode", "full", "--out", str(out)]) == 0
    assert "Paper SR" not in capsys.readouterr().out  # the table on screen
    text = (out / "report.md").read_text()
    assert "Paper SR" not in text and "Beside the models AgentBoard published" not in text
    assert "The paper's numbers (HiAgent paper" in text and "setting (state-choice) is not comparable" in text
    section = text[text.index("## The models AgentBoard published (not comparable with this run)"):]
    assert "This run played in the `state-choice` setting" in section
    assert "| GPT-4 | published |" in section and not [x for x in section.splitlines() if "| this run |" in x]
    assert not (out / "published_progress.png").exists()


def test_a_mode_the_profile_lacks_is_refused_before_anything_is_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _scoring_backend(monkeypatch)
    out = tmp_path / "run"
    base = ["eval", "--domains", "blocksworld", "--limit", "1", "--profile", "agentboard", "--no-progress",
            "--out", str(out)]
    assert cli.main([*base, "--agents", "expert", "--observation-mode", "fluents"]) == 2
    assert capsys.readouterr().err == (
        "pddlworlds eval: error: --observation-mode fluents cannot run under --profile agentboard: "
        "observation_mode 'fluents' is not one of the agentboard profile's: full or changes\n"
    )
    assert cli.main([*base, "--agents", "standard", "--llm", "wordscorer", "--setting", "state-choice"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--setting state-choice (observation mode fluents) cannot run under" in err
    assert not out.exists()  # no config.json, no errors.jsonl: nothing to "run again"
    assert cli.main([*base, "--agents", "expert", "--observation-mode", "full", "--max-steps", "3"]) == 0
