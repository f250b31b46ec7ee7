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
    DRAIN_BYTES,
    MAX_STOPS,
    RequestError,
    body_limit,
    parse_chat,
    parse_count,
    parse_json,
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
     'role must be one of system, user, assistant, not "<start_of_turn>"'),
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
