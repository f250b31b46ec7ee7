"""Cross-trial insight memory: the operations parser on messy replies, the store after a
scripted sequence of operations (exact JSON), experience selection, rule selection per scale and category,
and the instruction text each LLM agent receives with insights (through the stand-in server)."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import pddlworlds  # noqa: F401  (registers the environments)
from pddlworlds.agents import LLM_AGENT_NAMES, make_agent, prompts
from pddlworlds.insights import (
    EditContext,
    InsightSelector,
    InsightStore,
    InsightStoreError,
    Operation,
    apply_operations,
    category_of,
    parse_operations,
    select_experiences,
    select_rules,
    update_store,
)
from pddlworlds.insights.embedding import cosine_ranking, load_embedder
from pddlworlds.llm import OpenAICompatibleLLM
from pddlworlds.testing.fake_openai import FakeOpenAIServer

pytest.importorskip("openai")

HEADING = "Insights from earlier episodes (rules that helped before; follow them where they apply):"


# ---- the operations parser -------------------------------------------------------------------------


def test_parser_reads_messy_replies() -> None:
    reply = (
        "Sure! Here are my operations:\n"
        "1. ADD GENERAL: Check the valid actions when an action fails.\n"
        "- **add domain**: Clear a block before you pick it up.\n"
        "* Remove 3; agree #2 AGREE 4\n"
        "\n"
        "edit rule 5 - Put blocks down on the table first.\n"
        "MOVE 2 task: Build towers from the bottom up.\n"
        "move [6] to general\n"
        "ADD domain:blocksworld: Stack only on a clear block. ADD task on: Work bottom up.\n"
        "add general Move a block only when it is clear; REMOVE 7\n"
        "• AGREE: 1\n"
        "REMOVE\n"
        "NONE\n"
        "I think that is all.\n"
    )
    parsed = parse_operations(reply)
    assert [(o.kind, o.number, o.scale, o.text) for o in parsed.operations] == [
        ("ADD", None, "general", "Check the valid actions when an action fails."),
        ("ADD", None, "domain", "Clear a block before you pick it up."),
        ("REMOVE", 3, None, None),
        ("AGREE", 2, None, None),
        ("AGREE", 4, None, None),
        ("EDIT", 5, None, "Put blocks down on the table first."),
        ("MOVE", 2, "task", "Build towers from the bottom up."),
        ("MOVE", 6, "general", None),
        ("ADD", None, "domain:blocksworld", "Stack only on a clear block."),
        ("ADD", None, "task:on", "Work bottom up."),
        ("ADD", None, "general", "Move a block only when it is clear"),
        ("REMOVE", 7, None, None),
        ("AGREE", 1, None, None),
    ]
    # recorded, never fatal: chatter, and an operation without its number
    assert parsed.unparsable == ["Sure! Here are my operations:", "REMOVE", "I think that is all."]


def test_parser_keeps_operation_words_inside_a_rule() -> None:
    parsed = parse_operations("ADD general: Remove the lid, then move the shaker to the left hand.")
    assert [(o.kind, o.text) for o in parsed.operations] == [
        ("ADD", "Remove the lid, then move the shaker to the left hand.")
    ]
    assert parse_operations("").operations == [] and parse_operations("ADD general:").unparsable == [
        "ADD general:"
    ]


# ---- the store after a scripted sequence of operations ----------------------------------------------


def test_store_after_scripted_operations(tmp_path: Path) -> None:
    store = InsightStore()
    bw = EditContext("blocksworld", "on")
    log = apply_operations(
        store,
        parse_operations(
            "ADD general: Check valid actions when stuck.\n"
            "ADD domain: Clear a block before picking it up.\n"
            "ADD task: Build the tower from the bottom.\n"
            "ADD domain:gripper: not this domain\n"
        ).operations,
        [],
        bw,
    )
    assert log.applied == ["ADD #1 general", "ADD #2 domain:blocksworld", "ADD #3 task:on"]
    assert log.rejected == [
        "ADD domain:gripper: not this domain: scale 'domain:gripper' is not this experience's (domain:blocksworld)"
    ]
    # shown as 1 = #1 (general), 2 = #2 (domain), 3 = #3 (task)
    log = apply_operations(
        store,
        parse_operations(
            "AGREE 1\nREMOVE 3\nEDIT 2: Unstack the block on top first.\nREMOVE 9\n"
            "ADD general: check valid actions when stuck.\nMOVE 3 general"
        ).operations,
        [1, 2, 3],
        bw,
    )
    assert log.applied == [
        "AGREE #1 (score 3)",
        "REMOVE #3 (score 1)",
        "EDIT #2 (score 3)",
        "ADD general (same as #1: score 4)",
        "MOVE #3 general",
    ]
    assert log.rejected == ["REMOVE 9: no rule 9 was shown (rules 1-3 were shown)"]
    # a rule at zero is dropped; the cap (2 per scale) keeps the highest scores, the older on a tie
    log = apply_operations(
        store,
        [Operation("REMOVE", 2), Operation("ADD", scale="general", text="Read the goal twice.")],
        [1, 3, 2],
        bw,
        cap=2,
    )
    assert log.applied == ["REMOVE #3 (score 0)", "ADD #4 general"] and log.dropped == [3]
    store.revision += 1
    store.save(tmp_path / "insights.json")
    assert (tmp_path / "insights.json").read_text() == (
        "{\n"
        '  "format": "pddlworlds-insights",\n'
        '  "format_version": 1,\n'
        '  "revision": 1,\n'
        '  "next_id": 5,\n'
        '  "rules": [\n'
        "    {\n"
        '      "id": 1,\n'
        '      "scale": "general",\n'
        '      "text": "Check valid actions when stuck.",\n'
        '      "score": 4\n'
        "    },\n"
        "    {\n"
        '      "id": 4,\n'
        '      "scale": "general",\n'
        '      "text": "Read the goal twice.",\n'
        '      "score": 2\n'
        "    },\n"
        "    {\n"
        '      "id": 2,\n'
        '      "scale": "domain:blocksworld",\n'
        '      "text": "Unstack the block on top first.",\n'
        '      "score": 3\n'
        "    }\n"
        "  ]\n"
        "}\n"
    )
    assert InsightStore.load(tmp_path / "insights.json").to_json() == store.to_json()
    apply_operations(store, [Operation("ADD", scale="general", text="A third general rule.")], [], bw, cap=2)
    assert [r.id for r in store.by_scale("general")] == [1, 4]  # the new rule (score 2) loses the tie to #4


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{\n  "rules": [\n', "insights.json, line 3: not valid JSON"),
        (
            '{"rules": [{"id": 1, "scale": "galaxy", "text": "x"}]}',
            r"rules\[0\] \(id 1\): scale 'galaxy' is not",
        ),
        (
            '{"rules": [{"id": 1, "scale": "general", "text": "x"}, {"id": 1, "scale": "general", "text": "y"}]}',
            r"rules\[1\]: id 1 is used twice",
        ),
        ('{"rules": [{"id": 2, "scale": "general"}]}', r"rules\[0\]: missing text"),
        ('{"format": "other", "rules": []}', "'format' is 'other'"),
    ],
)
def test_bad_store_files_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "insights.json"
    path.write_text(text)
    with pytest.raises(InsightStoreError, match=message) as caught:
        InsightStore.load(path)
    assert str(path) in str(caught.value)


def test_a_hand_edited_store_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "insights.json"
    path.write_text(
        '{"rules": [{"id": 7, "scale": "task:on", "text": "  two   spaces "}, {"id": 3, "scale": "general", "text": "gone", "score": 0}]}'
    )
    store = InsightStore.load(path)
    assert [(r.id, r.scale, r.text, r.score) for r in store.rules] == [(7, "task:on", "two spaces", 1)]
    assert store.next_id == 8 and store.add("general", "new", 2).id == 8


# ---- categories, experiences and selection ----------------------------------------------------------


def test_categories_come_from_the_goal_predicates() -> None:
    assert category_of("blocksworld", "agentboard", "problem1") == "on"
    assert category_of("gripper", "agentboard", "prob01") == "at"
    assert {category_of("tyreworld", "agentboard", f"p{i:02d}") for i in range(1, 11)} >= {
        "in",
        "in+inflated+on",
    }


def line(domain: str, problem: str, success: bool, agent: str = "standard", seed: int = 0, **extra) -> dict:
    return {
        "agent": agent,
        "domain": domain,
        "split": "agentboard",
        "problem": problem,
        "seed": seed,
        "success": success,
        "progress": 1.0 if success else 0.5,
        "steps": 3,
        "goal": "g",
        "initial_observation": "o",
        "trajectory": [],
        **extra,
    }


def categories(domain: str, split: str, problem: str) -> str:
    return {"p1": "on", "p2": "on", "p3": "at"}[problem]


def test_experience_selection_modes() -> None:
    trial = [
        line("blocksworld", "p1", False),
        line("blocksworld", "p1", True, agent="hiagent"),
        line("blocksworld", "p2", False),
        line("gripper", "p3", False),
        line("blocksworld", "p2", True, error={"kind": "timeout"}),  # a fault: never used
    ]
    success = select_experiences("success", trial, category=categories)
    assert [e.label for e in success] == ["hiagent blocksworld/p1 seed 0"]
    pairs = select_experiences("pair", trial, category=categories)
    # p1: its own success; p2: a success of the same category; p3 (gripper, at): no partner, left out
    assert [e.label for e in pairs] == [
        "standard blocksworld/p1 seed 0 vs hiagent blocksworld/p1 seed 0",
        "standard blocksworld/p2 seed 0 vs hiagent blocksworld/p1 seed 0",
    ]
    assert [(e.mode, e.domain, e.category) for e in pairs] == [("pair", "blocksworld", "on")] * 2
    earlier = [[line("gripper", "p3", True, seed=5)]]
    later = select_experiences("pair", [line("gripper", "p3", False)], earlier, category=categories)
    assert [e.label for e in later] == ["standard gripper/p3 seed 0 vs standard gripper/p3 seed 5"]
    with pytest.raises(ValueError, match="unknown experience mode 'all'"):
        select_experiences("all", trial)


def scaled_store() -> InsightStore:
    store = InsightStore()
    for scale, text, score in [
        ("general", "G low", 1),
        ("general", "G high", 5),
        ("domain:blocksworld", "D blocks", 2),
        ("domain:gripper", "D gripper", 9),
        ("task:on", "T on", 3),
        ("task:at", "T at", 3),
    ]:
        store.add(scale, text, score)
    return store


def test_selection_per_scale_and_category() -> None:
    store = scaled_store()
    texts = lambda rules: [r.text for r in rules]
    assert texts(select_rules(store, "blocksworld", "on")) == ["G high", "G low", "D blocks", "T on"]
    assert texts(select_rules(store, "gripper", "at")) == ["G high", "G low", "D gripper", "T at"]
    assert texts(select_rules(store, "barman", "contains")) == ["G high", "G low"]
    assert texts(select_rules(store, "blocksworld", "on", limit=3)) == ["G high", "G low", "D blocks"]

    def words(texts_: list[str]) -> np.ndarray:  # a bag-of-words stand-in for an embedding model
        vocabulary = ["blocks", "on", "low", "high"]
        return np.array([[t.lower().split().count(w) for w in vocabulary] for t in texts_], dtype=float)

    ranked = select_rules(store, "blocksworld", "on", query="stack blocks", embedder=words, limit=2)
    assert texts(ranked) == ["D blocks", "G high"]  # most similar first; ties keep the scale order
    assert cosine_ranking("x", [], words) == []
    with pytest.raises(ValueError, match="unknown embedding 'word2vec:x'"):
        load_embedder("word2vec:x")


# ---- what each agent receives -----------------------------------------------------------------------

PROBLEM = "problem1"


def play(name: str, **kwargs) -> list[dict]:
    with FakeOpenAIServer("Action: pickup b1\nSubgoal: x") as srv:
        llm = OpenAICompatibleLLM(
            "fake-model", base_url=srv.base_url, api_key="t", timeout=5.0, max_retries=1
        )
        agent = make_agent(name, llm, **kwargs)
        record = agent.run(
            gym.make("pddlworlds/Blocksworld-v0", max_episode_steps=2), options={"problem": PROBLEM}
        )
    return srv.chat_requests, record


@pytest.mark.parametrize("name", LLM_AGENT_NAMES)
def test_agents_show_insights_under_one_heading(name: str) -> None:
    plain, plain_record = play(name)
    store = scaled_store()
    given, record = play(name, insights=InsightSelector(store))
    assert len(given) == len(plain)
    for a, b in zip(plain, given):
        assert b["messages"][1:] == a["messages"][1:]  # the user messages do not change
        if a["messages"][0]["content"] == b["messages"][0]["content"]:
            continue  # a summariser call: no insights there
        assert b["messages"][0]["content"] == (
            a["messages"][0]["content"] + f"\n\n{HEADING}\n- G high\n- G low\n- D blocks\n- T on"
        )
    assert any(HEADING in r["messages"][0]["content"] for r in given)
    assert record.flags["insights"] == ["G high", "G low", "D blocks", "T on"]
    assert "insights" not in plain_record.flags
    # fixed texts work too, and an empty list leaves the prompt as it was
    fixed, _ = play(name, insights=["Look before you leap."])
    assert fixed[0]["messages"][0]["content"].endswith(f"{HEADING}\n- Look before you leap.")
    empty, _ = play(name, insights=[])
    assert [r["messages"] for r in empty] == [r["messages"] for r in plain]


def test_with_insights_words() -> None:
    assert prompts.with_insights("S", []) == "S"
    assert prompts.with_insights("S", ["a", "b"]) == f"S\n\n{HEADING}\n- a\n- b"


# ---- generation through the stand-in server ---------------------------------------------------------


def test_generation_call_sees_numbered_rules_and_edits_the_store() -> None:
    store = scaled_store()
    experience = select_experiences(
        "pair",
        [
            line("blocksworld", "p1", False, trajectory=[{"action": "pickup b9", "observation": "No b9."}]),
            line("blocksworld", "p1", True, agent="hiagent"),
        ],
        category=categories,
    )
    with FakeOpenAIServer("- AGREE 3\nADD task: Stack from the bottom.\nREMOVE 2\nwhat?") as srv:
        llm = OpenAICompatibleLLM(
            "fake-model", base_url=srv.base_url, api_key="t", timeout=5.0, max_retries=1
        )
        log = update_store(store, experience, llm)
    request = srv.chat_requests[0]
    user = request["messages"][1]["content"]
    assert user.startswith(
        "Current rules:\nGeneral rules:\n1. G low\n2. G high\nRules for the blocksworld domain:\n3. D blocks\n"
        "Rules for tasks about on:\n4. T on\n\nThe same kind of task failed once and succeeded once."
    )
    assert (
        "Episode (failed: 50% of the goal after 3 steps):\nGoal: g\nObservation: o\nAction: pickup b9\nObservation: No b9."
        in user
    )
    assert "Episode (succeeded in 3 steps):" in user and user.endswith("Your operations:")
    assert "ADD general: <rule>" in request["messages"][0]["content"] and request["temperature"] == 0.0
    assert request["stop"] == ["\nEpisode (", "\nAction:", "\nObservation:"]
    assert log[0]["applied"] == ["AGREE #3 (score 3)", "ADD #7 task:on", "REMOVE #2 (score 4)"]
    assert log[0]["unparsable"] == ["what?"] and store.revision == 1
    assert [(r.id, r.score) for r in store.by_scale("task:on")] == [(5, 3), (7, 2)]
    json.dumps(log)  # the log is written as JSON lines


@pytest.mark.slow
def test_transformers_embedder_on_a_tiny_local_encoder(tmp_path: Path) -> None:
    """The lazily imported embedder end to end on a randomly initialised 2-layer BERT saved to disk (no
    download): it loads, embeds, and ranks an identical text first."""
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    words = [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        "clear",
        "the",
        "block",
        "stack",
        "shaker",
        "fill",
        "tyre",
    ]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    transformers.BertTokenizer(str(tmp_path / "vocab.txt")).save_pretrained(tmp_path)
    config = transformers.BertConfig(
        vocab_size=len(words),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
    )
    transformers.BertModel(config).save_pretrained(tmp_path)
    embed = load_embedder(f"transformers:{tmp_path}")
    vectors = embed(["clear the block", "fill the shaker"])
    assert vectors.shape == (2, 16) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert cosine_ranking("fill the shaker", ["clear the block", "fill the shaker"], embed)[0] == 1
    with pytest.raises(ValueError, match="cannot load embedding model"):
        load_embedder(f"transformers:{tmp_path / 'missing'}")
