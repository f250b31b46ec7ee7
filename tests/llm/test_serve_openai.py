"""`pddlworlds serve` spoken to as today's OpenAI clients speak: the official `openai` client on
`/v1/completions` (logprobs, echo), `/v1/embeddings`, `/v1/responses` and chat with a developer message,
and `inspect eval --model openai/...` (Inspect's OpenAI provider, which uses the Responses API).

One server for the module, behind an API key, on 127.0.0.1 with one llama.cpp thread; stopped (SIGTERM,
exit 0) at the end, its log free of tracebacks. The log-probabilities are checked against the model itself,
loaded by llama-cpp-python with every position's logits kept: echoed ones against the log-softmax of those
logits, generated ones against llama-cpp-python's own; and a likely continuation above an unlikely one.
"""

from __future__ import annotations

import json
import math
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pddlworlds.llm.embedded import quiet_native_stderr
from pddlworlds.llm.model_files import SHIPPED_ADAPTER, default_model_path, resolve_adapter
from pddlworlds.llm.serve_logprobs import ECHO_BATCH
from pddlworlds.testing.servers import free_port, pddlworlds_command, source_env

openai = pytest.importorskip("openai", reason="the openai client is a dependency of the OpenAI-compatible backend")
pytest.importorskip("starlette", reason="pddlworlds serve needs the server extra (scripts/setup.sh installs it)")
pytest.importorskip("llama_cpp", reason="the embedded model needs llama-cpp-python")

pytestmark = [pytest.mark.embedded, pytest.mark.xdist_group("model-processes")]  # see pyproject.toml: one worker runs these

NAME = "pddlworlds-openai-test"
KEY = "openai-test-key"
N_CTX = 8192
PROMPT = "Blocks b1 and b2 are on the table. The goal is to put b1 on b2.\nAction:"
#: Put before the prompt to score, so that its tokens fill more than one of the server's echo batches.
SCENE = "b3 is on b4. b4 is on the table. b5 is clear. Your hand is empty. "
LIKELY, UNLIKELY = " stack b1 on b2", " purple elephants sing loudly"


class Served:
    """The running server: its base URL, an `openai` client with its key, and its stderr log."""

    def __init__(self, port: int, log: Path) -> None:
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.log = log
        self.client = openai.OpenAI(base_url=self.base_url, api_key=KEY, max_retries=0, timeout=300)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    port, log = free_port(), tmp_path_factory.mktemp("serve") / "serve.log"
    command = pddlworlds_command("serve", "--port", str(port), "--name", NAME, "--api-key", KEY, "--n-ctx",
                                 str(N_CTX), "--threads", "1")
    with log.open("w") as err:
        proc = subprocess.Popen(command, env=source_env(), stdout=subprocess.DEVNULL, stderr=err, text=True)
    try:
        deadline = time.monotonic() + 180
        while status(port, "/v1/models") != 200:
            assert proc.poll() is None, f"pddlworlds serve exited with {proc.returncode}: {log.read_text()[-2000:]}"
            assert time.monotonic() < deadline, "pddlworlds serve did not answer within 180 s"
            time.sleep(0.2)
        yield Served(port, log)
    finally:
        proc.terminate()
        try:
            code = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
    text = log.read_text()
    assert code == 0 and "Traceback" not in text and "failed in the model" not in text, (code, text[-3000:])


def status(port: int, path: str, body: bytes | None = None, key: str | None = KEY) -> int:
    """The HTTP status of one request (0 while nothing listens)."""
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {key}"} if key else {})
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0


@pytest.fixture(scope="module")
def reference() -> Any:
    """The served model (the same GGUF and adapter) loaded by llama-cpp-python with every position's logits
    kept (`logits_all`, a small context), in batches of the server's echo batch: llama-cpp-python's own
    completion logprobs, and the rows to compute echoed ones from, decoded as the server decodes them."""
    import llama_cpp

    with quiet_native_stderr(enabled=True):
        return llama_cpp.Llama(str(default_model_path()), lora_path=str(resolve_adapter(SHIPPED_ADAPTER)),
                               n_ctx=128, n_batch=ECHO_BATCH, n_threads=1, logits_all=True, swa_full=True,
                               verbose=False)


def echoed(server: Served, text: str, k: int = 2) -> tuple[list[str], list[float], list[dict[str, float]]]:
    """The tokens of `text`, each one's log-probability and likeliest tokens, as lm-evaluation-harness asks."""
    choice = server.client.completions.create(model=NAME, prompt=text, max_tokens=0, echo=True, logprobs=k).choices[0]
    table = choice.logprobs
    assert choice.text == text and "".join(table.tokens) == text and choice.finish_reason == "length"
    assert table.text_offset == [sum(len(t) for t in table.tokens[:i]) for i in range(len(table.tokens))]
    return table.tokens, table.token_logprobs, table.top_logprobs


def test_echoed_logprobs_are_the_log_softmax_of_the_models_logits(server: Served, reference: Any) -> None:
    """Echoed with `max_tokens: 0`, each token's log-probability is the log-softmax, at the position before
    it, of the logits llama-cpp-python keeps for the same tokens (computed here with numpy), for a text past
    one echo batch; each position lists its two likeliest tokens, best first, the token's own value at most
    the best; after the same prompt, the likely continuation scores far above the unlikely one."""
    text = SCENE + PROMPT + LIKELY
    tokens, values, tops = echoed(server, text)
    ids = reference.tokenize(text.encode(), add_bos=True, special=False)
    assert len(ids) > ECHO_BATCH + 1 and len(tokens) == len(ids) - 1  # BOS is read, not echoed
    reference.reset()
    reference.eval(ids[:-1])
    rows = reference.scores[: len(ids) - 1].astype(np.float64)
    top = rows.max(axis=1, keepdims=True)
    expected = rows[np.arange(len(ids) - 1), ids[1:]] - (top[:, 0] + np.log(np.exp(rows - top).sum(axis=1)))
    assert values == pytest.approx(expected.tolist(), abs=1e-4)
    for value, best in zip(values, tops, strict=True):
        ranked = sorted(best.values(), reverse=True)
        assert len(best) >= 2 and value <= ranked[0] + 1e-9 and math.exp(ranked[0]) + math.exp(ranked[1]) <= 1
    sums = {}
    for continuation in (LIKELY, UNLIKELY):
        tokens, values, _ = echoed(server, PROMPT + continuation)
        n = len(reference.tokenize(continuation.encode(), add_bos=False))
        assert "".join(tokens[-n:]) == continuation  # the prompt's tokens end where the continuation begins
        sums[continuation] = sum(values[-n:])
    assert sums[LIKELY] > sums[UNLIKELY] + 10, sums


def test_generated_logprobs_are_llama_cpp_pythons_and_replies_the_chat_routes(server: Served, reference: Any) -> None:
    """A greedy completion is the chat route's reply for the same text (the same sampler), each token it
    generates is its position's likeliest, and its tokens and log-probabilities are the ones llama-cpp-python
    gives with every logit kept; a developer message is read as a system message; several prompts, several
    choices; a stop sequence cuts the text."""
    choice = server.client.completions.create(model=NAME, prompt=PROMPT, max_tokens=6, logprobs=3).choices[0]
    table = choice.logprobs
    user = {"role": "user", "content": PROMPT}
    alone = server.client.chat.completions.create(model=NAME, max_tokens=6, messages=[user])
    assert choice.text == alone.choices[0].message.content and choice.text.strip()
    assert alone.usage.completion_tokens == len(table.tokens) and "".join(table.tokens) == choice.text
    assert table.text_offset == [sum(len(t) for t in table.tokens[:i]) for i in range(len(table.tokens))]
    for token, value, best in zip(table.tokens, table.token_logprobs, table.top_logprobs, strict=True):
        assert len(best) == 3 and best[token] == value == max(best.values())
    theirs = reference.create_completion(PROMPT, max_tokens=6, logprobs=3, temperature=0, top_k=0, top_p=1.0,
                                         min_p=0.0, repeat_penalty=1.0)["choices"][0]
    assert theirs["text"] == choice.text and theirs["logprobs"]["tokens"] == table.tokens
    # The server's cache holds earlier requests' tokens, so it decodes this prompt in other batches than
    # llama-cpp-python here, and llama.cpp's quantised kernels round by the batch (up to 0.25 in a
    # log-probability seen): the values agree as probabilities, within 0.1.
    ours = [math.exp(v) for v in table.token_logprobs]
    assert ours == pytest.approx([math.exp(v) for v in theirs["logprobs"]["token_logprobs"]], abs=0.1)
    chats = [server.client.chat.completions.create(model=NAME, max_tokens=6, messages=[
        {"role": role, "content": "You play Blocksworld."}, user]) for role in ("developer", "system")]
    assert chats[0].choices[0].message.content == chats[1].choices[0].message.content
    both = server.client.completions.create(model=NAME, prompt=[PROMPT, "b2 is on b1.\nAction:"], max_tokens=4,
                                            stop=["\n"], echo=True)
    assert [c.index for c in both.choices] == [0, 1] and both.choices[0].text.startswith(PROMPT)
    assert both.choices[0].logprobs is None and "\n" not in both.choices[1].text.removeprefix("b2 is on b1.\nAction:")


def test_embeddings_are_unit_vectors_near_for_near_texts(server: Served) -> None:
    """Mean-pooled, length 1; the same text gives the same vector in both encodings (the client asks for
    base64 by default), and two texts about blocks are nearer each other than either is to the weather."""
    texts = ["pick up block b1", "put down block b2", "the weather in Paris is mild today"]
    floats = server.client.embeddings.create(model=NAME, input=texts, encoding_format="float")
    vectors = [d.embedding for d in floats.data]
    assert [d.index for d in floats.data] == [0, 1, 2] and floats.usage.prompt_tokens > len(texts)
    assert {len(v) for v in vectors} == {640}  # Gemma 3 270M's width
    assert all(sum(x * x for x in v) == pytest.approx(1.0, abs=1e-4) for v in vectors)
    again = server.client.embeddings.create(model=NAME, input=texts[0]).data[0].embedding  # base64 on the wire
    assert again == pytest.approx(vectors[0], abs=1e-6)

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(vectors[0], vectors[1]) > max(cosine(vectors[0], vectors[2]), cosine(vectors[1], vectors[2]))


def test_responses_are_the_chat_replies_in_the_responses_shape(server: Served) -> None:
    """Text in, text out: `instructions` and an input text, or message items with `input_text` parts, give
    the chat route's reply as `output_text` (whole, each evaluated afresh: `cache_prompt: false`), usage
    included; a reply cut by `max_output_tokens` is "incomplete"; tools are refused in one line."""
    # PROMPT's greedy first token is a near-tie ("Move" / "1."): a call that reuses part of it from the cache
    # evaluates the rest in other batches, and the last bits of the sums decide. `cache_prompt: false`
    # (llama.cpp server's field) evaluates every prompt afresh, so the routes' whole replies compare; the
    # warm call between the first two would flip the near-tie for a route that ignored the field.
    fresh = {"cache_prompt": False}
    messages = [{"role": "system", "content": "You play Blocksworld."}, {"role": "user", "content": PROMPT}]
    chat = server.client.chat.completions.create(model=NAME, max_tokens=8, messages=messages, extra_body=fresh)
    server.client.chat.completions.create(model=NAME, max_tokens=8, messages=messages)
    reply = server.client.responses.create(model=NAME, instructions="You play Blocksworld.", input=PROMPT,
                                           max_output_tokens=8, extra_body=fresh)
    items = server.client.responses.create(model=NAME, max_output_tokens=8, extra_body=fresh, input=[
        {"role": "developer", "content": "You play Blocksworld."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": PROMPT}]}])
    text = chat.choices[0].message.content
    assert text.strip(), text
    assert reply.output_text == text, ("instructions and input", reply.output_text, text)
    assert items.output_text == text, ("message items", items.output_text, text)
    plain = [server.client.completions.create(model=NAME, prompt=PROMPT, max_tokens=8, **cache).choices[0].text
             for cache in ({"extra_body": fresh}, {}, {"extra_body": fresh})]
    assert plain[0] == plain[2], ("completions, evaluated afresh twice", plain)
    assert reply.output[0].content[0].text == reply.output_text
    assert reply.usage.input_tokens == chat.usage.prompt_tokens
    assert reply.usage.output_tokens == chat.usage.completion_tokens
    if chat.choices[0].finish_reason == "length":
        assert reply.status == "incomplete" and reply.incomplete_details.reason == "max_output_tokens"
    else:
        assert reply.status == "completed" and reply.incomplete_details is None
    with pytest.raises(openai.BadRequestError, match="tools are not supported"):
        server.client.responses.create(model=NAME, input=PROMPT, tools=[
            {"type": "function", "name": "act", "parameters": {"type": "object", "properties": {}}}])


def test_the_new_routes_keep_the_key_the_bounds_and_free_the_model_when_a_client_goes(server: Served) -> None:
    """Without the key, a 401; a body over the bound, a 413; a prompt or text over the context, a 400
    naming it; a client that leaves mid-completion frees the model for the next request at once."""
    for path in ("/v1/completions", "/v1/embeddings", "/v1/responses"):
        assert status(server.port, path, b'{"input": "x", "prompt": "x"}', key=None) == 401
        assert status(server.port, path, json.dumps({"input": "a" * 2_000_000}).encode()) == 413
    with pytest.raises(openai.BadRequestError, match="maximum context length is 8192 tokens"):
        server.client.completions.create(model=NAME, prompt="a " * 9000, max_tokens=1)
    with pytest.raises(openai.BadRequestError, match="An embedding reads at most 2048 tokens, and input.1. is"):
        server.client.embeddings.create(model=NAME, input=["b1", "a " * 3000])
    with pytest.raises(openai.BadRequestError, match="logprobs must be a whole number from 0 to 20"):
        server.client.completions.create(model=NAME, prompt=PROMPT, logprobs=21)
    body = json.dumps({"prompt": "a a a a a a a a a a a a a a a a", "max_tokens": N_CTX}).encode()
    with socket.create_connection(("127.0.0.1", server.port)) as abandoned:  # thousands of tokens asked for
        abandoned.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                          b"Authorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s" % (KEY.encode(), len(body), body))
        time.sleep(2)  # generating by now
    gone = time.monotonic()
    assert server.client.completions.create(model=NAME, prompt=PROMPT, max_tokens=2).usage.completion_tokens >= 1
    assert time.monotonic() - gone < 30


@pytest.mark.slow
def test_inspect_eval_plays_through_the_openai_provider(server: Served, tmp_path: Path) -> None:
    """`inspect eval pddlworlds/blocksworld --model openai/NAME --model-base-url URL`, the key in
    OPENAI_API_KEY: Inspect's OpenAI provider (the Responses API) plays STANDARD for two steps."""
    inspect_log = pytest.importorskip("inspect_ai.log", reason="the Inspect task needs the inspect extra")
    command = [sys.executable, "-m", "inspect_ai", "eval", "pddlworlds/blocksworld", "-T", "agent=standard",
               "-T", "problems=problem1", "-T", "max_steps=2", "-T", "example=false", "--model", f"openai/{NAME}",
               "--model-base-url", server.base_url, "--log-dir", str(tmp_path), "--log-format", "json",
               "--display", "none"]
    done = subprocess.run(command, env=source_env(OPENAI_API_KEY=KEY), capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    [location] = inspect_log.list_eval_logs(str(tmp_path))
    log = inspect_log.read_eval_log(location)
    assert log.status == "success", log.error
    [sample] = log.samples
    turns = sample.store["pddlworlds_episode"]["turns"]
    assert len(turns) == 3 and all(t["action"] for t in turns[1:])
    calls = [event.call.request for event in sample.events if event.event == "model" and event.call is not None]
    assert len(calls) == 2 and all("input" in c and "messages" not in c for c in calls)  # the Responses API
