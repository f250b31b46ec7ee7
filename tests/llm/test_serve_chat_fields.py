"""The chat route of `pddlworlds serve` refuses what it would otherwise answer without (`llm.serve_requests`):
`"n": true` is no number, `"logprobs": true` asks for what the completions route lists, `tools` and a
structured `response_format` ask for more than text. Each is one 400 line naming the field; what asks for
nothing more passes."""

from __future__ import annotations

from typing import Any

import pytest

from pddlworlds.llm.serve_requests import RequestError, parse_chat, parse_completion

USER = {"role": "user", "content": "Blocks b1 and b2 are on the table.\nAction:"}
TOOL = {"type": "function", "function": {"name": "act", "parameters": {"type": "object", "properties": {}}}}


@pytest.mark.parametrize(("fields", "param", "words"), [
    ({"n": True}, "n", "n must be 1 (one reply per request), not true"),
    ({"logprobs": True}, "logprobs", "logprobs is not supported on /v1/chat/completions"),
    ({"logprobs": True, "top_logprobs": 2}, "logprobs", "/v1/completions"),
    ({"top_logprobs": 0}, "top_logprobs", "top_logprobs is not supported"),
    ({"logprobs": 1}, "logprobs", "logprobs must be true or false, not a number"),
    ({"tools": [TOOL]}, "tools", "tools are not supported: pddlworlds serve answers text only"),
    ({"functions": [TOOL["function"]]}, "functions", "functions are not supported"),
    ({"tool_choice": "required"}, "tool_choice", 'tool_choice "required" asks for a call'),
    ({"response_format": {"type": "json_object"}}, "response_format", "structured output is not supported"),
])
def test_a_chat_field_beyond_one_text_reply_is_refused_in_one_line(fields: dict[str, Any], param: str,
                                                                   words: str) -> None:
    with pytest.raises(RequestError) as caught:
        parse_chat({"messages": [USER], **fields})
    error = caught.value
    assert error.status == 400 and error.param == param and words in error.message and "\n" not in error.message


@pytest.mark.parametrize("fields", [
    {"n": 1}, {"logprobs": False}, {"tools": []}, {"tool_choice": "none"}, {"tool_choice": "auto"},
    {"response_format": {"type": "text"}}, {"top_p": 0.9, "seed": 3},
])
def test_what_asks_for_nothing_more_is_read(fields: dict[str, Any]) -> None:
    assert parse_chat({"messages": [USER], **fields}).messages[0].content == USER["content"]


def test_best_of_true_is_no_number_on_the_completions_route() -> None:
    with pytest.raises(RequestError, match="best_of must be 1, not true"):
        parse_completion({"prompt": "a", "best_of": True})
    with pytest.raises(RequestError, match="n must be 1"):
        parse_completion({"prompt": "a", "n": True})
