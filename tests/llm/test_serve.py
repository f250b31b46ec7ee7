"""`pddlworlds serve` for real: its OpenAI-compatible server on 127.0.0.1, driven by the OpenAI-compatible
backend and by `pddlworlds eval`, beside the in-process embedded backend (the newer routes, with the
`openai` client and Inspect: `test_serve_openai.py`).

Kept small for CI: short episodes (a few steps of STANDARD on the easiest Blocksworld problem), one server
per test, one llama.cpp thread on both sides.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pddlworlds.llm import EmbeddedLLM, Message, OpenAICompatibleLLM
from pddlworlds.testing.servers import free_port, source_env

pytest.importorskip("starlette", reason="pddlworlds serve needs the server extra (scripts/setup.sh installs it)")
pytest.importorskip("llama_cpp", reason="the embedded model needs llama-cpp-python")

pytestmark = [pytest.mark.embedded, pytest.mark.xdist_group("model-processes")]  # see pyproject.toml: one worker runs these

THREADS = 1
NAME = "pddlworlds-test"


@contextlib.contextmanager
def served(port: int, *extra: str, log: Path | None = None, ready: bool = True) -> Iterator[subprocess.Popen[str]]:
    """`pddlworlds serve` on `port` until the block ends (or the test stops it), its stderr in `log` when
    given. Its threads default to the in-process default (the cores it may run on); the tests give it one,
    as a test worker has one core to itself. Stopped idle
    at the end (SIGTERM), it exits 0 within seconds. With `ready=False` the block starts at once, while the
    server loads (the block calls `wait_until_served` before its first request)."""
    command = [sys.executable, "-m", "pddlworlds.cli", "serve", "--port", str(port)]
    with contextlib.ExitStack() as stack:
        err = stack.enter_context(log.open("w")) if log is not None else subprocess.PIPE
        proc = subprocess.Popen([*command, "--name", NAME, *extra], env=source_env(), stdout=subprocess.DEVNULL,
                                stderr=err, text=True)
        try:
            if ready:
                wait_until_served(proc, port, extra)
            yield proc
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    assert proc.wait(timeout=20) == 0, "an idle server stopped by SIGTERM should exit 0"
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    raise


def wait_until_served(proc: subprocess.Popen[str], port: int, extra: tuple[str, ...]) -> None:
    headers = {"Authorization": f"Bearer {extra[extra.index('--api-key') + 1]}"} if "--api-key" in extra else {}
    deadline = time.monotonic() + 180
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"pddlworlds serve exited with {proc.returncode}: {proc.stderr and proc.stderr.read()}")
        try:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/models", headers=headers)
            with urllib.request.urlopen(request, timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        assert time.monotonic() < deadline, "pddlworlds serve did not answer within 180 s"
        time.sleep(0.2)


def eval_cli(out: Path, llm: list[str], *extra: str, one_core: bool = False) -> subprocess.CompletedProcess[str]:
    """`pddlworlds eval` of a short STANDARD episode; `one_core` runs it on one core, so an in-process model
    takes one llama.cpp thread (`host.default_threads`), as a server started with `--threads 1` does."""
    argv = ["eval", "--agents", "standard", "--domains", "blocksworld", "--max-steps", "3", "--workers", "1"]
    argv += ["--out", str(out), "--no-progress", "--no-report", *llm, *extra]
    pin = functools.partial(os.sched_setaffinity, 0, {max(os.sched_getaffinity(0))}) if one_core else None
    return subprocess.run(
        [sys.executable, "-m", "pddlworlds.cli", *argv], env=source_env(), capture_output=True, text=True,
        timeout=600, check=False, preexec_fn=pin,
    )


def stored(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]


def differences(a: list[str], b: list[str], what: str) -> list[str]:
    """Every position where two lists differ, in words (the assertion shows them all)."""
    out = [f"{what} {i}: in-process {x!r} / served {y!r}" for i, (x, y) in enumerate(zip(a, b)) if x != y]
    return out + ([f"{what}: {len(a)} in-process, {len(b)} served"] if len(a) != len(b) else [])


PROMPTS = [
    [Message("user", "Blocks b1 and b2 are on the table. The goal is to put b1 on b2.\nAction:")],
    [
        Message("system", "You play Blocksworld. Answer with one action."),
        Message("user", "b2 is on b1. b1 is on the table. The goal: b1 is on b2.\nAction:"),
    ],
    [Message("user", "Goal: ball1 is at roomb. Robby is at rooma. ball1 is at rooma.\nAction:")],
]


def test_same_greedy_replies_and_token_counts() -> None:
    """The same prompts, in the same order from an empty cache, give the same replies and token counts in
    process and through the server; every difference is listed."""
    port = free_port()
    local = EmbeddedLLM(n_threads=THREADS)
    local.reset()
    with served(port, "--threads", str(THREADS)):
        remote = OpenAICompatibleLLM(NAME, base_url=f"http://127.0.0.1:{port}/v1")
        assert remote.in_context_example is local.in_context_example is False  # the shipped adapter
        assert remote.describe()["served"]["model_sha256"] == local.model_sha256
        assert "/pddlworlds/tokenize/count" in remote.token_counting
        pairs = []
        for messages in PROMPTS:
            for stop in ((), ("\n",)):
                pairs.append((local.chat(messages, max_tokens=24, stop=stop), remote.chat(messages, max_tokens=24, stop=stop)))
        texts = ("Action: stack b1 on b2", "b2 is on b1.", "", "quotes <end_of_turn> and <eos> as text")
        counts = [(local.count_tokens(t), remote.count_tokens(t)) for t in texts]
    found = differences([a.text for a, _ in pairs], [b.text for _, b in pairs], "reply")
    found += differences([a.prompt_tokens for a, _ in pairs], [b.prompt_tokens for _, b in pairs], "prompt tokens")
    found += differences(
        [a.completion_tokens for a, _ in pairs], [b.completion_tokens for _, b in pairs], "completion tokens"
    )
    found += differences([a for a, _ in counts], [b for _, b in counts], "count_tokens")
    assert not found, "\n".join(found)
    assert any(a.text for a, _ in pairs) and not any("\n" in b.text for _, b in pairs[1::2])  # stop applied


def test_eval_through_the_server_matches_in_process(tmp_path: Path) -> None:
    """The same episode in process and through `pddlworlds serve`, in the free setting (a served model writes
    its actions; the embedded model plays state-choice-diffs unless told)."""
    port = free_port()
    # one llama.cpp thread on each side: two threads beside the other test worker's work stall each other
    with served(port, "--threads", str(THREADS), ready=False) as server:  # it loads while the embedded eval plays
        local = eval_cli(tmp_path / "local", ["--llm", "embedded", "--setting", "free"], one_core=True)
        assert local.returncode == 0, local.stderr
        wait_until_served(server, port, ("--threads", str(THREADS)))
        remote = eval_cli(tmp_path / "served", ["--llm", f"openai:{NAME}", "--base-url", f"http://127.0.0.1:{port}/v1"])
    assert remote.returncode == 0, remote.stderr
    (a,), (b,) = stored(tmp_path / "local"), stored(tmp_path / "served")
    found = differences([s["action"] for s in a["trajectory"]], [s["action"] for s in b["trajectory"]], "action")
    found += differences(
        [s["prompt_tokens"] for s in a["trajectory"]], [s["prompt_tokens"] for s in b["trajectory"]], "prompt tokens"
    )
    found += differences(
        [s["context_tokens"] for s in a["trajectory"]], [s["context_tokens"] for s in b["trajectory"]], "context tokens"
    )
    assert not found, "\n".join(found)
    assert all(s["prompt_tokens"] > 0 and s["completion_tokens"] > 0 for s in b["trajectory"])
    config = json.loads((tmp_path / "served" / "config.json").read_text())
    assert config["llm"]["served"]["model_id"] == a["model"] and config["agents"]["standard"] == json.loads(
        (tmp_path / "local" / "config.json").read_text()
    )["agents"]["standard"]


def test_a_prompt_over_the_context_is_a_fault_stored_and_rerun_on_resume(tmp_path: Path) -> None:
    """A prompt over the server's context is a fault of the episode (stored, re-run on resume)."""
    port = free_port()
    url = ["--llm", f"openai:{NAME}", "--base-url", f"http://127.0.0.1:{port}/v1"]
    out = tmp_path / "small-context"
    with served(port, "--n-ctx", "128"):
        info = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/pddlworlds/model", timeout=30))
        assert info["n_ctx"] == 128 and info["name"] == NAME
        first = eval_cli(out, url)
        assert first.returncode == 1, first.stderr
        (line,) = stored(out)
        assert line["error"]["kind"] == "context_length" and not line["trajectory"], line["error"]
        assert "maximum context length is 128 tokens" in line["error"]["message"]
        again = eval_cli(out, url)  # re-run on resume, and a fault again: the context is still 128 tokens
        assert again.returncode == 1 and "1 of them re-run after a fault" in again.stderr, again.stderr


def test_a_server_killed_mid_run_stops_it_with_finished_episodes_kept_and_the_rest_played_on_resume(
    tmp_path: Path,
) -> None:
    """A server killed mid-run stops the run with every finished episode kept, and the same command, once
    the server is back, plays the rest."""
    port = free_port()
    url = ["--llm", f"openai:{NAME}", "--base-url", f"http://127.0.0.1:{port}/v1"]
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "pddlworlds.cli", "eval", "--agents", "standard", "--domains", "blocksworld",
               "--max-steps", "4", "--workers", "1", "--out", str(out), "--no-progress", "--no-report", *url]
    with served(port, "--threads", str(THREADS)) as server:
        proc = subprocess.Popen(
            [*command, "--seeds", "0-2"], env=source_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 300
        while not ((out / "episodes.jsonl").exists() and stored(out)):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else ""
            time.sleep(0.05)
        server.kill()
        server.wait()
        _, err = proc.communicate(timeout=300)
    kept = stored(out)
    assert proc.returncode == 1 and "went away" in err and 1 <= len(kept) < 3, err
    assert not any(x.get("error") for x in kept)  # the episode cut short is not stored as played
    with served(port, "--threads", str(THREADS)):
        resumed = subprocess.run(
            [*command, "--seeds", "0-2"], env=source_env(), capture_output=True, text=True, timeout=600, check=False
        )
    assert resumed.returncode == 0, resumed.stderr
    assert f"3/3 episodes stored ({3 - len(kept)} new)" in resumed.stderr
    final = stored(out)
    assert sorted(x["seed"] for x in final) == [0, 1, 2] and final[: len(kept)] == kept


# -- a server people expose: keys, bounds, bad requests, disconnects, signals, startup errors --------------

KEY = "test-key"
#: A reply that runs to the context's end: greedy decoding repeats " a" (2,000 of 2,000 tokens in process),
#: 16,366 tokens for the default context, minutes of work.
LONG = {"messages": [{"role": "user", "content": "a a a a a a a a a a a a a a a a"}]}


def call(port: int, path: str, body: dict | bytes | None = None, *, key: str | None = KEY,
         timeout: float = 120) -> tuple[int, dict]:
    """(HTTP status, JSON reply) of one request; a POST when there is a body."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {key}"} if key else {})
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, json.load(reply)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def no_tracebacks(log: Path) -> None:
    text = log.read_text()
    assert "Traceback" not in text and "Exception" not in text, text[-3000:]


def test_every_route_needs_the_key_and_bad_requests_are_refused_before_any_work(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Behind `--api-key` every route is closed; a 5 MB body is a 413 at once (not tokenised); malformed
    bodies, a control-token role, `max_tokens: -5` and `stream: true` are 400s the `openai` client does not
    retry; a reply cut by the context or by max_tokens ends with "length"; the log has no traceback."""
    import openai

    port, log = free_port(), tmp_path / "serve.log"
    with served(port, "--api-key", KEY, "--n-ctx", "64", "--threads", str(THREADS), log=log):
        routes = [("/v1/models", None), ("/pddlworlds/model", None), ("/pddlworlds/tokenize/count", {"input": "x"}),
                  ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}]}), ("/elsewhere", None)]
        for path, body in routes:
            for key in (None, "wrong"):
                status, reply = call(port, path, body, key=key)
                assert status == 401 and reply["error"]["code"] == "invalid_api_key", (path, key, reply)
        assert call(port, "/pddlworlds/tokenize/count", {"input": "b1 <eos>"})[0] == 200
        start = time.monotonic()
        status, reply = call(port, "/pddlworlds/tokenize/count", json.dumps({"input": "a" * 5_000_000}).encode())
        assert status == 413 and "over 1048576 bytes" in reply["error"]["message"]
        assert time.monotonic() - start < 10  # read and refused, not tokenised (that took 14 s)
        for raw, words in ((b'{"messages": [{"role": "user", "content": "hi"', "not JSON"),
                           (b'{"messages": "hi"}', "messages must be a non-empty list"),
                           (b'{"messages": [{"role": "user", "content": 5}]}', "content must be a string"),
                           (b'{"messages": [{"role": "user", "content": "hi"}], "max_tokens": "9"}', "max_tokens")):
            status, reply = call(port, "/v1/chat/completions", raw)
            assert status == 400 and words in reply["error"]["message"], (raw, reply)
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, max_retries=4)
        caplog.set_level(logging.DEBUG, logger="openai")
        user = {"role": "user", "content": "hi"}
        for request, words in (({"messages": [{"role": "<start_of_turn>", "content": "hi"}]}, "role must be one of"),
                               ({"messages": [{"role": "tool", "content": "hi", "tool_call_id": "1"}]}, "not \"tool\""),
                               ({"messages": [user], "max_tokens": -5}, "max_tokens must be a whole number"),
                               ({"messages": [user], "stream": True}, "streaming is not supported")):
            caplog.clear()
            with pytest.raises(openai.BadRequestError, match=words):
                client.chat.completions.create(model=NAME, **request)
            assert sum(r.getMessage().startswith("Sending HTTP Request") for r in caplog.records) == 1
        whole = client.chat.completions.create(model=NAME, **LONG)  # no max_tokens: up to the context's end
        assert whole.choices[0].finish_reason == "length" and whole.usage.total_tokens == 64
        short = client.chat.completions.create(model=NAME, max_tokens=3, **LONG)
        assert short.choices[0].finish_reason == "length" and short.usage.completion_tokens == 3
    no_tracebacks(log)


def send_and_leave_open(port: int, body: dict) -> socket.socket:
    """A chat request sent on a raw connection, its reply not read (the caller closes it: a client gone)."""
    data = json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (len(data), data))
    return sock


def test_a_client_gone_frees_the_model_and_sigterm_stops_a_generation(tmp_path: Path) -> None:
    """A client that disconnects mid-generation frees the model: the next request is answered long before
    the abandoned reply (thousands of tokens) could have ended. SIGTERM mid-generation stops the server
    within seconds, measured from the signal, with exit 143 (work was cut) and no traceback."""
    port, log = free_port(), tmp_path / "serve.log"
    with served(port, "--threads", str(THREADS), log=log) as server:
        abandoned = send_and_leave_open(port, LONG)
        time.sleep(2)  # generating by now
        abandoned.close()
        gone = time.monotonic()
        status, reply = call(port, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}],
                                                            "max_tokens": 2}, key=None)
        assert status == 200 and reply["usage"]["completion_tokens"] >= 1
        assert time.monotonic() - gone < 60
        cut = send_and_leave_open(port, LONG)
        time.sleep(2)
        server.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        server.wait(timeout=60)
        stopped = time.monotonic() - signalled
        answer = cut.recv(4096)
        cut.close()
    assert stopped < 10 and server.returncode == 128 + signal.SIGTERM, (stopped, server.returncode)
    assert answer.startswith(b"HTTP/1.1 503") and b"stopping" in answer
    assert "1 request(s) were cut short" in log.read_text()
    no_tracebacks(log)


def test_sigint_twice_mid_generation_ends_at_once_without_tracebacks(tmp_path: Path) -> None:
    port, log = free_port(), tmp_path / "serve.log"
    with served(port, "--threads", str(THREADS), log=log) as server:
        cut = send_and_leave_open(port, LONG)
        time.sleep(2)
        server.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        time.sleep(0.05)
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
        stopped = time.monotonic() - signalled
        cut.close()
    assert stopped < 10 and server.returncode == 128 + signal.SIGINT, (stopped, server.returncode)
    no_tracebacks(log)


def serve_cli(*argv: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """`pddlworlds serve ARGV` run to its end, and the most memory it held (MiB)."""
    measure = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
               "sys.stderr.write(r.stderr); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024); "
               "sys.exit(r.returncode)")
    done = subprocess.run([sys.executable, "-c", measure, sys.executable, "-m", "pddlworlds.cli", "serve", *argv],
                          env=source_env(), capture_output=True, text=True, timeout=300, check=False)
    return done, int(done.stdout.split()[-1])


def test_startup_errors_are_one_line_before_anything_is_allocated_or_announced() -> None:
    """A port in use: one line, exit 2, and no "listening" before it (the port is bound before the model
    loads). A context beyond the model's training context (32,768 tokens for Gemma 3 270M) or fewer than
    one thread: one line, exit 2, before llama.cpp allocates anything (a 10^8-token context allocated 5.4 GB
    before failing)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done, _ = serve_cli("--port", str(taken.getsockname()[1]))
    assert done.returncode == 2 and "listening" not in done.stderr, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "the port is in use" in done.stderr, done.stderr
    for argv, words in ((["--n-ctx", "100000000"], "trained for (gemma3.context_length in its header); use at most 32768"),
                        (["--threads", "-5"], "--threads must be at least 1, not -5")):
        done, peak_mib = serve_cli("--port", str(free_port()), *argv)
        assert done.returncode == 2 and done.stderr.strip().count("\n") == 0 and words in done.stderr, done.stderr
        assert peak_mib < 400, peak_mib
