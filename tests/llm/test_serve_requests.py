"""What `pddlworlds serve` accepts and refuses, checked without a model: every refusal is a 4xx with a
one-line message naming the field (`llm.serve_requests`). The same checks on a running server, with the
`openai` client: `test_serve.py`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pddlworlds.llm.base import Message
from pddlworlds.llm.serve_requests import (
    COMPLETION_TOKENS,
    DRAIN_BYTES,
    MAX_INPUTS,
    MAX_STOPS,
    RequestError,
    body_limit,
    parse_chat,
    parse_completion,
    parse_count,
    parse_embeddings,
    parse_json,
    parse_responses,
    read_body,
)

starlette_requests = pytest.importorskip("starlette.requests", reason="pddlworlds serve needs the server extra")

USER = {"role": "user", "content": "Blocks b1 and b2 are on the table.\nAction:"}


def refusal(status: int, words: str, call: Any, *args: Any) -> RequestError:
    with pytest.raises(RequestError) as caught:
        call(*args)
    assert caught.value.status == status and words in caught.value.message, caught.value.message
    assert "\n" not in caught.value.message
    body = caught.value.body()["error"]
    assert body["type"] == ("invalid_request_error" if status < 500 else "server_error")
    return caught.value


def test_a_plain_request_is_read_as_the_in_process_backend_takes_it() -> None:
    call = parse_chat({"model": "any", "messages": [{"role": "system", "content": "Play."}, USER], "max_tokens": 24,
                       "stop": "\n", "temperature": 0, "top_p": 0.5, "seed": 3, "repeat_penalty": 1.0})
    assert call.messages == [Message("system", "Play."), Message("user", USER["content"])]
    assert (call.max_tokens, call.stop, call.temperature) == (24, ["\n"], 0.0)
    assert parse_chat({"messages": [USER]}).max_tokens is None  # up to the context's end
    assert parse_chat({"messages": [USER], "max_completion_tokens": 5, "max_tokens": 9}).max_tokens == 5
    assert parse_chat({"messages": [USER], "stream": False, "n": 1, "stop": ["a", "b"]}).stop == ["a", "b"]
    assert parse_count({"input": "quotes <eos> as text"}) == "quotes <eos> as text"


def test_cache_prompt_false_asks_for_a_fresh_evaluation_on_every_generating_route() -> None:
    """llama.cpp server's `cache_prompt`: absent or true reuses the cache, false evaluates afresh."""
    assert parse_chat({"messages": [USER]}).cache_prompt is True
    assert parse_chat({"messages": [USER], "cache_prompt": False}).cache_prompt is False
    assert parse_completion({"prompt": "a", "cache_prompt": False}).cache_prompt is False
    assert parse_completion({"prompt": "a", "cache_prompt": True}).cache_prompt is True
    assert parse_responses({"input": "a", "cache_prompt": False}).cache_prompt is False
    for parse, body in ((parse_chat, {"messages": [USER]}), (parse_completion, {"prompt": "a"}),
                        (parse_responses, {"input": "a"})):
        error = refusal(400, "cache_prompt must be true or false, not a number", parse, {**body, "cache_prompt": 0})
        assert error.param == "cache_prompt"


def test_a_developer_message_is_a_system_message() -> None:
    """Current OpenAI clients send the system prompt with the role "developer"."""
    call = parse_chat({"messages": [{"role": "developer", "content": "Play."}, USER]})
    assert call.messages == [Message("system", "Play."), Message("user", USER["content"])]


def test_completion_requests_are_read_with_openai_defaults() -> None:
    call = parse_completion({"model": "m", "prompt": "b1 is on b2.", "top_p": 0.3, "seed": 1})
    assert call.prompts == ["b1 is on b2."] and call.max_tokens == COMPLETION_TOKENS == 16
    assert (call.logprobs, call.echo, call.stop, call.temperature) == (None, False, [], 0.0)
    scoring = parse_completion({"prompt": ["a", ""], "max_tokens": 0, "logprobs": 2, "echo": True, "stop": "\n"})
    assert (scoring.prompts, scoring.max_tokens, scoring.logprobs, scoring.echo, scoring.stop) == (
        ["a", ""], 0, 2, True, ["\n"])
    assert parse_completion({"prompt": "a", "logprobs": 0, "n": 1, "best_of": 1}).logprobs == 0


@pytest.mark.parametrize(("fields", "words"), [
    ({}, "prompt must be a text or a list of 1 to 64 texts, not null"),
    ({"prompt": []}, "not a list"),
    ({"prompt": ["a"] * (MAX_INPUTS + 1)}, "list of 1 to 64 texts"),
    ({"prompt": [1, 2, 3]}, "prompt[0] must be a text (token ids are not accepted), not 1"),
    ({"prompt": [[1, 2]]}, "token ids are not accepted"),
    ({"prompt": "\ud800"}, "prompt[0] is not valid Unicode"),
    ({"prompt": "a", "max_tokens": -1}, "max_tokens must be a whole number of at least 0, not -1"),
    ({"prompt": "a", "logprobs": 21}, "logprobs must be a whole number from 0 to 20, not 21"),
    ({"prompt": "a", "logprobs": True}, "not true"),
    ({"prompt": "a", "logprobs": -1}, "not -1"),
    ({"prompt": "a", "echo": "yes"}, "echo must be true or false, not a string"),
    ({"prompt": "a", "suffix": "b"}, "suffix is not supported"),
    ({"prompt": "a", "best_of": 3}, "best_of must be 1"),
    ({"prompt": "a", "n": 2}, "n must be 1"),
    ({"prompt": "a", "stream": True}, "streaming is not supported"),
    ({"prompt": "a", "temperature": 5}, "temperature must be a number from 0 to 2"),
])
def test_a_completion_request_with_a_bad_field_is_a_400_naming_it(fields: dict[str, Any], words: str) -> None:
    error = refusal(400, words, parse_completion, fields)
    assert error.param is not None and error.param in json.dumps(fields) + '"prompt"'


def test_embedding_requests_take_texts_as_floats_or_base64() -> None:
    assert parse_embeddings({"model": "m", "input": "pick up b1"}).inputs == ["pick up b1"]
    call = parse_embeddings({"input": ["a", "b"], "encoding_format": "base64"})
    assert call.inputs == ["a", "b"] and call.base64
    assert not parse_embeddings({"input": "a", "encoding_format": "float"}).base64


@pytest.mark.parametrize(("fields", "words"), [
    ({}, "input must be a text or a list of 1 to 64 texts, not null"),
    ({"input": ""}, "input[0] must be a non-empty text"),
    ({"input": ["a", ""]}, "input[1] must be a non-empty text"),
    ({"input": [[1, 2]]}, "token ids are not accepted"),
    ({"input": ["a"] * (MAX_INPUTS + 1)}, "list of 1 to 64 texts"),
    ({"input": "a", "encoding_format": "int8"}, 'encoding_format must be "float" or "base64", not "int8"'),
    ({"input": "a", "dimensions": 64}, "dimensions is not supported"),
    ({"input": "a", "model": 3}, "model must be a string"),
])
def test_an_embedding_request_with_a_bad_field_is_a_400_naming_it(fields: dict[str, Any], words: str) -> None:
    error = refusal(400, words, parse_embeddings, fields)
    assert error.param is not None


def test_a_responses_request_is_read_as_a_chat() -> None:
    """`instructions` first, as a system message; a text input is one user message; message items with
    text parts (an assistant's earlier `output_text` included) are the conversation."""
    call = parse_responses({"model": "m", "input": "b1 is clear.\nAction:", "instructions": "Play.",
                            "max_output_tokens": 8, "temperature": 0, "store": False,
                            "text": {"format": {"type": "text"}},
                            "tools": [], "reasoning": {"effort": None}, "truncation": "disabled",
                            "include": ["reasoning.encrypted_content"]})
    assert call == parse_chat({"messages": [{"role": "system", "content": "Play."}, {"role": "user",
                               "content": "b1 is clear.\nAction:"}], "max_tokens": 8})
    items = [{"role": "developer", "content": "Play."},
             {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "b1 "},
                                                              {"type": "input_text", "text": "is clear."}]},
             {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
              "content": [{"type": "output_text", "text": "pick up b1", "annotations": []}]},
             {"role": "user", "content": "Action:"}]
    call = parse_responses({"input": items})
    assert call.messages == [Message("system", "Play."), Message("user", "b1 is clear."),
                             Message("assistant", "pick up b1"), Message("user", "Action:")]
    assert call.max_tokens is None and call.stop == []


@pytest.mark.parametrize(("fields", "words"), [
    ({}, "input must be a text or a non-empty list of message items, not null"),
    ({"input": []}, "not a list"),
    ({"input": "a", "tools": [{"type": "function", "name": "act"}]}, "tools are not supported"),
    ({"input": "a", "previous_response_id": "resp_1"}, "previous_response_id is not supported: nothing is stored"),
    ({"input": "a", "stream": True}, "streaming is not supported"),
    ({"input": "a", "background": True}, "background is not supported"),
    ({"input": "a", "reasoning": {"effort": "low", "summary": "auto"}}, "reasoning is not supported"),
    ({"input": "a", "max_output_tokens": 0}, "max_output_tokens must be a whole number of at least 1, not 0"),
    ({"input": "a", "instructions": 5}, "instructions must be a string, not a number"),
    ({"input": "a", "text": {"format": {"type": "json_schema", "name": "x"}}}, "structured output is not supported"),
    ({"input": [{"type": "function_call_output", "call_id": "1", "output": "x"}]},
     'input[0] must be a message item (text in, text out), not "function_call_output"'),
    ({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
     'input[0].content[0] must be an input_text or output_text part with a text, not "input_image"'),
    ({"input": [{"role": "tool", "content": "x"}]}, 'input[0].role must be one of system, developer, user, assistant'),
    ({"input": [{"role": "user", "content": None}]}, "input[0].content must be a string (text only), not null"),
])
def test_a_responses_request_beyond_text_is_a_400_naming_the_field(fields: dict[str, Any], words: str) -> None:
    error = refusal(400, words, parse_responses, fields)
    assert error.param is not None and error.param in json.dumps(fields) + '"input"'


@pytest.mark.parametrize(("raw", "words"), [
    (b'{"messages": [{"role": "user", "content": "hi"', "not JSON: Expecting ',' delimiter at line 1, column 47"),
    (b"", "not JSON"),
    (b"\xff\xfe{}", "not UTF-8 text (byte 0xff at offset 0)"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b"[1, 2]", "must be a JSON object, not a list"),
    (b'"text"', "must be a JSON object, not a string"),
])
def test_a_body_that_is_no_json_object_is_a_400(raw: bytes, words: str) -> None:
    refusal(400, words, parse_json, raw)


@pytest.mark.parametrize(("fields", "words"), [
    ({"messages": "hi"}, "messages must be a non-empty list"),
    ({"messages": []}, "messages must be a non-empty list"),
    ({}, "not null"),
    ({"messages": ["hi"]}, "messages[0] must be an object"),
    ({"messages": [{"role": "<start_of_turn>", "content": "hi"}]},
     'role must be one of system, developer, user, assistant, not "<start_of_turn>"'),
    ({"messages": [{"role": "tool", "content": "hi"}]}, 'not "tool"'),
    ({"messages": [{"role": ["user"], "content": "hi"}]}, 'not ["user"]'),
    ({"messages": [{"content": "hi"}]}, "not null"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}, "content must be a string"),
    ({"messages": [{"role": "user", "content": None}]}, "content must be a string (text only), not null"),
    ({"messages": [{"role": "user", "content": "\ud800"}]}, "messages[0].content is not valid Unicode"),
    ({"messages": [USER], "max_tokens": -5}, "max_tokens must be a whole number of at least 1, not -5"),
    ({"messages": [USER], "max_tokens": 0}, "not 0"),
    ({"messages": [USER], "max_tokens": 2.5}, "not 2.5"),
    ({"messages": [USER], "max_tokens": True}, "not true"),
    ({"messages": [USER], "max_tokens": "9"}, 'not "9"'),
    ({"messages": [USER], "max_completion_tokens": -1}, "max_completion_tokens must be"),
    ({"messages": [USER], "temperature": float("nan")}, "temperature must be a number from 0 to 2, not NaN"),
    ({"messages": [USER], "temperature": 3}, "not 3"),
    ({"messages": [USER], "temperature": "0"}, 'not "0"'),
    ({"messages": [USER], "stop": 5}, "stop must be a string or a list"),
    ({"messages": [USER], "stop": ["a"] * (MAX_STOPS + 1)}, f"at most {MAX_STOPS} strings"),
    ({"messages": [USER], "stop": [""]}, "stop[0] must be a non-empty string"),
    ({"messages": [USER], "stop": ["\n", None]}, "stop[1] must be a non-empty string, not null"),
    ({"messages": [USER], "stream": True}, "streaming is not supported"),
    ({"messages": [USER], "stream": "yes"}, "stream must be true or false, not a string"),
    ({"messages": [USER], "model": 7}, "model must be a string, not a number"),
    ({"messages": [USER], "n": 2}, "n must be 1"),
])
def test_a_chat_request_with_a_bad_field_is_a_400_naming_it(fields: dict[str, Any], words: str) -> None:
    error = refusal(400, words, parse_chat, fields)
    assert error.param is None or error.param in json.dumps(fields) or error.param == "messages"


def test_a_count_request_needs_a_text() -> None:
    refusal(400, "input must be a string, not a number", parse_count, {"input": 5})
    refusal(400, "input must be a string, not null", parse_count, {})


def starlette_request(chunks: list[bytes], headers: dict[str, str]) -> tuple[Any, list[int]]:
    """A real Starlette request whose body arrives in `chunks`, and how many of them were read."""
    read = [0]

    async def receive() -> dict[str, Any]:
        read[0] += 1
        more = read[0] < len(chunks)
        return {"type": "http.request", "body": chunks[read[0] - 1], "more_body": more}

    scope = {"type": "http", "method": "POST", "path": "/v1/chat/completions", "headers":
             [(k.lower().encode(), v.encode()) for k, v in headers.items()]}
    return starlette_requests.Request(scope, receive), read


def test_a_body_over_the_bound_is_a_413_never_held_whole() -> None:
    """Refused on its declared length or at the first chunk past the bound. What is left of it is read and
    thrown away up to `DRAIN_BYTES` (so that a client sending its whole body first reads the 413), not
    when it is larger still or the client waits for `100 Continue`."""
    limit = body_limit(16384)
    assert limit == 1 << 20 and body_limit(32768) == 2 << 20 and body_limit(128) == 1 << 20
    chunk = b"a" * 65536
    for headers, chunks, read_at_refusal in (
        ({"Content-Length": str(80 * len(chunk))}, 80, 80),  # 5 MiB: read to its end, thrown away
        ({"Content-Length": str(80 * len(chunk)), "Expect": "100-continue"}, 80, 0),
        ({"Content-Length": str(DRAIN_BYTES + 1)}, 400, 0),  # cut off with the connection
        ({}, 80, 80),  # chunked: refused at chunk 17, the rest thrown away
        ({}, 400, DRAIN_BYTES // len(chunk) + 1),
    ):
        request, read = starlette_request([chunk] * chunks, headers)
        refusal(413, "over 1048576 bytes", lambda request=request: asyncio.run(read_body(request, limit)))
        assert read[0] == read_at_refusal, (headers, chunks, read[0])
    fits, _ = starlette_request([b'{"input": ', b'"x"}'], {"Content-Length": "14"})
    assert asyncio.run(read_body(fits, limit)) == b'{"input": "x"}'
