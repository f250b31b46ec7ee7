"""HiAgent's subgoal as a choice (`state-choice-subgoals`): the world lists the goal conditions not yet true,
the model's score picks one, the world says when it is finished (its condition holds, another goal condition
came true under it, or `subgoal_steps` steps passed without it), and the finished one is folded with the world's summary (no model call), or the
summariser's in `state-choice-subgoals-taught`; the expert plays the setting and its picks are the planner's."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401  (registers the environments)
from pddlworlds import cli
from pddlworlds.agents import HiAgent, StandardAgent, compact, get_setting
from pddlworlds.agents.admissible import SUBGOAL_HEAD
from pddlworlds.llm import BACKENDS, Backend, Choice, Completion
from pddlworlds.records import HEAD_PURPOSE
from pddlworlds.registration import env_id, make_env
from pddlworlds.training.expert import StateExpert
from pddlworlds.training.onpolicy import play_labelled
from pddlworlds.worlds.catalogue import domains

SETTING = "state-choice-subgoals"
REPO = Path(__file__).resolve().parents[2]


class ScriptedScorer:
    """Picks, among a turn's candidates, the first of `actions` offered (else the first candidate), and among
    subgoal candidates the first of `subgoals` offered; keeps every choice it was asked to make."""

    model_id = "scripted-scorer"

    def __init__(self, actions: tuple[str, ...] = (), subgoals: tuple[str, ...] = ()) -> None:
        self.actions = list(actions)
        self.subgoals = list(subgoals)
        self.choices: list[tuple[str, list[str]]] = []  # (prefix, candidates)
        self.summaries = 0

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def chat(self, messages, *, max_tokens=128, stop=(), temperature=0.0) -> Completion:
        self.summaries += 1  # the only free call this setting makes is the summariser's
        return Completion("Met: yes\nSummary: the model's words", 10, 4, 0.0)

    def choose(self, messages, continuations, prefix: str = "", rank=None) -> Choice:
        texts = [c.strip() for c in continuations]
        self.choices.append((prefix, texts))
        wanted = self.subgoals if prefix == SUBGOAL_HEAD else self.actions
        index = next((texts.index(w) for w in wanted if w in texts), 0)
        if wanted and texts[index] == wanted[0]:
            wanted.pop(0)
        scores = tuple(0.0 if i == index else -1.0 for i in range(len(texts)))
        return Choice(index, scores, 10, len(texts), 0.0, tuple(1 for _ in texts))


def blocksworld(max_steps: int) -> gym.Env:
    return gym.make(env_id("blocksworld"), max_episode_steps=max_steps, observation_mode="fluents")


def test_the_settings_choose_subgoals_in_the_diffs_form() -> None:
    for name, world_summary in ((SETTING, True), ("state-choice-subgoals-taught", False)):
        setting = get_setting(name)
        assert setting.subgoals == "chosen" and setting.diffs and setting.world_summary is world_summary
    assert get_setting("state-choice-diffs").subgoals == "written"


def test_a_met_subgoal_is_folded_with_the_worlds_summary_and_the_next_is_chosen_among_the_open_conditions() -> None:
    # problem3: b1 on b3 on b2, b4 alone; the goal is b2 on b1 and b3 on b4 (in either order)
    llm = ScriptedScorer(actions=("unstack b1 from b3", "putdown b1", "unstack b3 from b2", "stack b3 on b4"),
                         subgoals=("on b3 b4",))
    agent = HiAgent(llm, setting=SETTING)
    record = agent.run(blocksworld(6), options={"problem": "problem3"})
    heads = [(p, c) for p, c in llm.choices if p == SUBGOAL_HEAD]
    # the first turn chooses among both goal conditions; after on b3 b4 holds, on b2 b1 is the only one
    # left, so it is taken without a call
    assert heads == [(SUBGOAL_HEAD, ["on b2 b1", "on b3 b4"])]
    first, second = agent.wm.subgoals
    assert (first.text, first.finished, first.met) == ("on b3 b4", True, True)
    assert first.summary == compact.changed_text(record_world(agent), first.start_state, second.start_state)
    assert "on b3 b4" in first.summary and llm.summaries == 0  # the world wrote it: no summariser call
    assert (second.text, second.finished) == ("on b2 b1", False)
    assert [s.subgoal for s in record.trajectory] == ["on b3 b4"] * 4 + ["on b2 b1"] * 2
    head_calls = [c for s in record.trajectory for c in s.calls if c.purpose == HEAD_PURPOSE]
    assert len(head_calls) == 1 and head_calls[0].candidates == 2
    # the choice is made on the prompt that still shows subgoal 1's steps (as the teacher's subgoal lines
    # are); the next shows it folded, and the state subgoal 2 began in
    assert "Subgoal 1: on b3 b4\n> unstack b1 from b3" in record.trajectory[4].memory_view
    assert f"Subgoal 1: on b3 b4\nSummary (met: yes): {first.summary}\nSubgoal 2: on b2 b1\nState:\n" in (
        record.trajectory[5].memory_view)


def test_a_condition_another_comes_before_is_not_offered() -> None:
    """problem1's goal is b3 on b2 on b1: b3 put on b2 before b2 is on b1 would have to come off again
    (`worlds/goal_orders.py`), so the first subgoal is on b2 b1, taken without a call; once it holds, on b3
    b2 is the one left."""
    llm = ScriptedScorer(actions=("unstack b2 from b3", "stack b2 on b1"))
    agent = HiAgent(llm, setting=SETTING)
    record = agent.run(blocksworld(2), options={"problem": "problem1"})
    world = record_world(agent)
    state = world.initial_state
    assert [t for t, _ in compact.open_goal_conditions(world, state, ordered=False)] == ["on b2 b1", "on b3 b2"]
    assert [t for t, _ in compact.open_goal_conditions(world, state)] == ["on b2 b1"]
    assert not [c for c in llm.choices if c[0] == SUBGOAL_HEAD]
    assert [s.subgoal for s in record.trajectory] == ["on b2 b1"] * 2
    assert agent.flags()["subgoal_candidates"].startswith("open goal conditions no other open one comes before")


def record_world(agent: HiAgent):
    return agent._env.unwrapped.world


def test_a_subgoal_open_too_long_is_folded_as_not_met_and_chosen_again() -> None:
    steps = get_setting(SETTING).subgoal_steps
    pace = ("unstack b1 from b3", "stack b1 on b3") * steps  # undoes itself: the condition never holds
    llm = ScriptedScorer(actions=pace, subgoals=("on b2 b1", "on b2 b1"))
    agent = HiAgent(llm, setting=SETTING)
    record = agent.run(blocksworld(steps + 2), options={"problem": "problem3"})
    first, second = agent.wm.subgoals
    assert first.finished and first.met is False and len(first.env_pairs) == steps
    assert second.text == first.text == "on b2 b1" and not second.finished
    assert sum(1 for p, _ in llm.choices if p == SUBGOAL_HEAD) == 2
    assert [s.subgoal_index for s in record.trajectory] == [1] * steps + [2, 2]


def test_a_subgoal_under_which_another_goal_condition_comes_true_is_folded_and_chosen_again() -> None:
    """Where the teacher's segment ends (a goal condition came true), the agent's does too: working under
    `on b3 b4`, the steps make `on b2 b1` true instead, so the next turn folds the subgoal as not met and
    chooses again (the one open condition left, without a call), long before `subgoal_steps`."""
    actions = ("unstack b1 from b3", "putdown b1", "unstack b3 from b2", "putdown b3", "pickup b2", "stack b2 on b1",
               "pickup b3")
    llm = ScriptedScorer(actions=actions, subgoals=("on b3 b4",))
    agent = HiAgent(llm, setting=SETTING)
    record = agent.run(blocksworld(len(actions)), options={"problem": "problem3"})
    assert [s.action for s in record.trajectory] == list(actions)
    first, second = agent.wm.subgoals
    assert (first.text, first.finished, first.met, len(first.env_pairs)) == ("on b3 b4", True, False, 6)
    assert "on b2 b1" in first.summary
    assert (second.text, second.finished) == ("on b3 b4", False)
    assert [s.subgoal_index for s in record.trajectory] == [1] * 6 + [2]
    assert sum(1 for p, _ in llm.choices if p == SUBGOAL_HEAD) == 1
    assert agent.flags()["subgoal_ends"] == "met, other goal progress, or subgoal_steps"


def test_the_taught_variant_asks_the_summariser() -> None:
    llm = ScriptedScorer(actions=("unstack b2 from b3", "putdown b2", "unstack b3 from b1", "stack b3 on b2"),
                         subgoals=("on b3 b2",))
    agent = HiAgent(llm, setting="state-choice-subgoals-taught")
    agent.run(blocksworld(5), options={"problem": "problem1"})
    assert llm.summaries == 1 and agent.wm.subgoals[0].summary == "the model's words"


def test_standard_plays_as_in_the_diffs_setting() -> None:
    prompts = {}
    for setting in (SETTING, "state-choice-diffs"):
        llm = ScriptedScorer()
        record = StandardAgent(llm, setting=setting).run(blocksworld(4), options={"problem": "problem1"})
        prompts[setting] = ([c for _, c in llm.choices], [s.action for s in record.trajectory])
    assert prompts[SETTING] == prompts["state-choice-diffs"]


def _memory_use():
    spec = importlib.util.spec_from_file_location("memory_use", REPO / "scripts" / "memory_use.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_expert_picks_the_planners_subgoals_and_they_agree_at_every_state(tmp_path: Path) -> None:
    """Played by the expert (no detours), every subgoal is the planner's next segment from every state on the
    way: memory_use.py's agreement is 1.0. Its labels are written as the turns are played: `Subgoal: <the
    condition chosen>` first on the turns that open a subgoal, the bare action on the others."""
    d = domains()["blocksworld"]
    path = Path(d.domain_file).parent / "problems" / "agentboard" / "problem8.pddl"
    env = make_env(d.domain_file, path, text_file=d.text_file, max_episode_steps=40, observation_mode="fluents")
    expert = StateExpert(env.unwrapped.world, Path(d.domain_file), path, d.text_file)
    record, calls = play_labelled(env, None, "hiagent", expert, setting=SETTING, detour=0.0)
    assert record.success and not any(c.purpose == "summary" for c in calls)
    opened = [step.subgoal_index != (before.subgoal_index if before else None)
              for before, step in zip([None, *record.trajectory], record.trajectory)]
    assert len(calls) == len(record.trajectory) and sum(opened) >= 2
    for call, step, new in zip(calls, record.trajectory, opened):
        expected = f"Subgoal: {step.subgoal}\nAction: {step.action}" if new else f"Action: {step.action}"
        assert call.reply == expected == call.model_reply, (step.index, call.reply)
    finished = [m for m in record.memory if m["finished"]]
    assert finished and all(m["met"] for m in finished)
    world = env.unwrapped.world
    env.reset()
    for step in record.trajectory:
        wanted = _memory_use()._planner_subgoal(world, expert, int(env.unwrapped.state), True)
        assert _memory_use()._agrees(step.subgoal, wanted, True), (step.index, step.subgoal, wanted)
        env.step(step.action)


def test_a_subgoal_the_model_chose_against_the_planner_is_labelled_once_where_it_was_chosen() -> None:
    """On-policy labels follow the play: the turn that opened the model's subgoal is labelled with the
    planner's pick (`Subgoal: on b3 b4`, the condition its optimal plan makes true first), and the turns under
    it with the expert's bare action, not a subgoal line the world would never let the model write there."""
    # problem3: b1 on b3 on b2, b4 alone, goal b2 on b1 and b3 on b4; every optimal plan makes b3 on b4 true
    # first (b3 is lifted off b2 anyway), while b2 on b1 first costs two more steps
    d = domains()["blocksworld"]
    path = Path(d.domain_file).parent / "problems" / "agentboard" / "problem3.pddl"
    env = make_env(d.domain_file, path, text_file=d.text_file, max_episode_steps=4, observation_mode="fluents")
    env.reset()
    expert = StateExpert(env.unwrapped.world, Path(d.domain_file), path, d.text_file)
    model = ScriptedScorer(actions=("unstack b1 from b3", "putdown b1", "unstack b3 from b2", "putdown b3"),
                           subgoals=("on b2 b1",))
    record, calls = play_labelled(env, model, "hiagent", expert, setting=SETTING)
    assert [s.subgoal for s in record.trajectory] == ["on b2 b1"] * 4
    assert [c.reply for c in calls] == ["Subgoal: on b3 b4\nAction: unstack b1 from b3", "Action: putdown b1",
                                        "Action: unstack b3 from b2", "Action: stack b3 on b4"]
    assert calls[0].model_reply == "Subgoal: on b2 b1\nAction: unstack b1 from b3"


def test_memory_use_reports_folds_agreement_and_costs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    backend = Backend("scripted", lambda spec: ScriptedScorer(), usage="scripted", help="a test's scoring model",
                      default_workers=1, scores_candidates=True)
    monkeypatch.setitem(BACKENDS, "scripted", backend)
    out = tmp_path / "run"
    argv = ["eval", "--llm", "scripted", "--agents", "standard,hiagent", "--domains", "blocksworld",
            "--problems", "problem1", "--max-steps", "12", "--setting", SETTING, "--out", str(out), "--no-progress"]
    assert cli.main(argv) == 0
    assert json.loads((out / "config.json").read_text())["setting"] == SETTING
    figures = _memory_use().analyse(out, min_optimal=1)
    row = figures["hiagent/all"]
    assert row["episodes"] == 1 and row["states_judged"] == 12
    assert row["finished_per_episode"] == row["finished_per_long_episode"] == 1.0  # folded after 10 steps
    assert row["met_share"] == 0.0 and row["summary_calls_per_episode"] == 0.0
    assert 0.0 <= row["subgoal_agreement"] <= row["subgoal_agreement_up_to_renaming"] <= 1.0
    assert row["subgoal_agreement_up_to_renaming"] <= row["subgoal_agreement_on_an_optimal_plan"] <= 1.0
    assert 1 <= row["decisions_judged"] <= row["states_judged"] and row["states_search_undecided"] == 0
    assert row["states_planner_not_offered"] == 0  # problem1 has an order: b2 on b1 before b3 on b2
    assert 0.0 <= row["decision_agreement"] <= row["decision_agreement_up_to_renaming"] <= 1.0
    assert row["decision_agreement_up_to_renaming"] <= row["decision_agreement_on_an_optimal_plan"] <= 1.0
    costs = figures["hiagent/against-standard"]
    assert costs["problems"] == 1 and costs["context_share"] > 0


def test_a_subgoal_agrees_up_to_renaming_when_its_objects_are_interchangeable() -> None:
    """Gripper's first public problem, both hands full in room b: dropping either ball first is optimal, so
    the agent's `at ball2 roomb` agrees with the planner's `at ball1 roomb` up to renaming (balls and hands
    swapped), and not strictly; a ball still in room a agrees in neither reading."""
    d = domains()["gripper"]
    path = Path(d.domain_file).parent / "problems" / "agentboard" / "prob01.pddl"
    env = make_env(d.domain_file, path, text_file=d.text_file, max_episode_steps=10, observation_mode="fluents")
    env.reset()
    world = env.unwrapped.world
    for action in ("pick ball1 rooma left", "pick ball2 rooma right", "move rooma roomb"):
        schema, *args = action.split()
        index = world.action_of(schema, args)
        assert index is not None, action
        env.unwrapped.state = world.task.apply(int(env.unwrapped.state), index)
    state = int(env.unwrapped.state)
    memory_use = _memory_use()
    assert not memory_use._agrees("at ball2 roomb", "at ball1 roomb", True)
    assert memory_use._agrees_up_to_renaming(world, state, "at ball2 roomb", "at ball1 roomb")
    assert not memory_use._agrees_up_to_renaming(world, state, "at ball3 roomb", "at ball1 roomb")
    assert not memory_use._agrees_up_to_renaming(world, state, "not a fact", "at ball1 roomb")
    # on an optimal plan: the planner's is 8 steps from here (two drops, then two balls' round trip of six);
    # ball3 first puts ball1 down in room a on the way, 12 steps
    length = len(StateExpert(world, Path(d.domain_file), path, d.text_file).plan_from(state) or ())
    assert length == 8
    assert memory_use._on_an_optimal_plan(world, state, "at ball2 roomb", length, cap=10_000) is True
    assert memory_use._on_an_optimal_plan(world, state, "at ball3 roomb", length + 3, cap=10_000) is False
    assert memory_use._on_an_optimal_plan(world, state, "at ball3 roomb", length + 4, cap=10_000) is True
    assert memory_use._on_an_optimal_plan(world, state, "at ball3 roomb", length, cap=5) is None
