"""`pddlworlds serve` for real: llama-cpp-python's OpenAI-compatible server on 127.0.0.1, driven by the
OpenAI-compatible backend and by `pddlworlds eval`, beside the in-process embedded backend.

Kept small for CI: short episodes (a few steps of STANDARD on the easiest Blocksworld problem), one server
per test, one llama.cpp thread on both sides.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

import pddlworlds
from pddlworlds.llm import EmbeddedLLM, Message, OpenAICompatibleLLM

pytest.importorskip("fastapi", reason="pddlworlds serve needs the server extra (scripts/setup.sh installs it)")
pytest.importorskip("llama_cpp", reason="the embedded model needs llama-cpp-python")

pytestmark = pytest.mark.embedded

THREADS = 1
NAME = "pddlworlds-test"
SRC = str(Path(pddlworlds.__file__).resolve().parents[1])


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def served(port: int, *extra: str) -> Iterator[subprocess.Popen[str]]:
    """`pddlworlds serve` on `port` until the block ends (or the test kills it). Its threads default to
    the in-process default, as the eval's one worker has them."""
    command = [sys.executable, "-m", "pddlworlds.cli", "serve", "--port", str(port)]
    proc = subprocess.Popen(
        [*command, "--name", NAME, *extra], env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"pddlworlds serve exited with {proc.returncode}: {proc.stderr.read()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "pddlworlds serve did not answer within 180 s"
            time.sleep(0.2)
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def eval_cli(out: Path, llm: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
    argv = ["eval", "--agents", "standard", "--domains", "blocksworld", "--max-steps", "3", "--workers", "1"]
    argv += ["--out", str(out), "--no-progress", "--no-report", *llm, *extra]
    return subprocess.run(
        [sys.executable, "-m", "pddlworlds.cli", *argv], env=_env(), capture_output=True, text=True,
        timeout=600, check=False,
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
    port = free_port()
    local = eval_cli(tmp_path / "local", ["--llm", "embedded"])
    assert local.returncode == 0, local.stderr
    with served(port):
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


def test_faults_are_stored_and_resumed(tmp_path: Path) -> None:
    """A prompt over the server's context is a fault of the episode (stored, re-run on resume); a server
    killed mid-run stops the run with every finished episode kept, and the same command, once the server
    is back, plays the rest."""
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
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "pddlworlds.cli", "eval", "--agents", "standard", "--domains", "blocksworld",
               "--max-steps", "4", "--workers", "1", "--out", str(out), "--no-progress", "--no-report", *url]
    with served(port) as server:
        proc = subprocess.Popen(
            [*command, "--seeds", "0-2"], env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
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
    with served(port):
        resumed = subprocess.run(
            [*command, "--seeds", "0-2"], env=_env(), capture_output=True, text=True, timeout=600, check=False
        )
    assert resumed.returncode == 0, resumed.stderr
    assert f"3/3 episodes stored ({3 - len(kept)} new)" in resumed.stderr
    final = stored(out)
    assert sorted(x["seed"] for x in final) == [0, 1, 2] and final[: len(kept)] == kept
