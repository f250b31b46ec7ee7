"""`pddlworlds env-server`'s bounds and doors, each on a real server process on 127.0.0.1: a session the
idle reaper ended never plays beside a new one under `--max-sessions`; unsolvable problems score through the
server as `pddlworlds eval` scores them; a large HTTP body is refused unread; frames OpenEnv cannot read,
bad names and ids get one line; client closes leave no traceback in the log; a port in use is one line;
the API key guards every route and the WebSocket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pddlworlds.testing.servers import free_port, pddlworlds_command, started

pytest.importorskip("openenv.core", reason="the OpenEnv server needs the openenv extra (scripts/setup.sh installs it)")

from pddlworlds.frameworks.episodes import EpisodeOptions
from pddlworlds.frameworks.openenv_client import PDDLWorldsClient, RemoteEpisode

KEY = "s3cret-key"
#: The documented bound on an HTTP body (4 MiB, as a WebSocket message).
BODY_BOUND = 4 * 1024 * 1024


@dataclass
class Served:
    url: str
    proc: subprocess.Popen[str]
    log: Path

    def log_text(self) -> str:
        return self.log.read_text()


@contextlib.contextmanager
def serving(*args: str, key: str | None = None) -> Iterator[Served]:
    """`pddlworlds env-server ARGS` on 127.0.0.1 until the block ends, its stderr kept in a file; ready once
    `/health` answers (with the key when there is one)."""
    port = free_port()
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with tempfile.TemporaryDirectory(prefix="pddlworlds-env-server-") as folder:
        log = Path(folder) / "stderr.log"
        command = pddlworlds_command("env-server", "--port", str(port), *args)
        with started(command, f"http://127.0.0.1:{port}/health", 120, headers=headers, log_path=log) as proc:
            yield Served(f"http://127.0.0.1:{port}", proc, log)


def one_line(message: str) -> bool:
    return "\n" not in message.strip() and len(message) < 600 and "Traceback" not in message


@pytest.fixture(scope="module")
def bounded() -> Iterator[Served]:
    """One session at most, reaped after 1 s idle; default domain Gripper, problem prob01, fluents."""
    with serving("--max-sessions", "1", "--session-timeout", "1", "--domain", "gripper", "--problem", "prob01",
                    "--observation-mode", "fluents") as served:
        yield served


def test_a_reaped_session_is_closed_and_never_plays_beside_a_new_one(bounded: Served) -> None:
    """Under --max-sessions 1, once the reaper ends an idle session a new one may start; the old
    connection is then closed with the reason, so its next reset cannot play outside the count."""

    async def scenario() -> tuple[str, str]:
        old = PDDLWorldsClient(base_url=bounded.url)
        await old.connect()
        assert (await old.reset()).observation.problem == "prob01"
        deadline = time.monotonic() + 40  # OpenEnv's reaper looks every 5 s
        while True:
            new = PDDLWorldsClient(base_url=bounded.url)
            try:
                await new.reset(domain="gripper")
                break
            except RuntimeError as refused:
                await new.close()
                assert "CAPACITY_REACHED" in str(refused), refused
                assert time.monotonic() < deadline, "the idle session was never reaped"
                await asyncio.sleep(0.5)
        with pytest.raises(RuntimeError) as stale:
            await old.reset(domain="gripper")
        third = PDDLWorldsClient(base_url=bounded.url)
        with pytest.raises(RuntimeError) as full:
            await third.reset(domain="gripper")
        await third.close()
        assert (await new.step("look around")).observation.step == 1  # the counted session plays on
        await new.close()
        await old.close()
        return str(stale.value), str(full.value)

    stale, full = asyncio.run(scenario())
    assert "--session-timeout" in stale and "idle" in stale and one_line(stale), stale
    assert "CAPACITY_REACHED" in full and "1/1 sessions" in full, full


def test_server_options_apply_as_documented(bounded: Served) -> None:
    """`--observation-mode fluents` is accepted; a default `--problem` applies to its own domain only; the
    schema shows the state's documented fields."""
    with urllib.request.urlopen(f"{bounded.url}/schema", timeout=10) as reply:
        state = json.loads(reply.read())["state"]["properties"]
    assert {"episode_id", "step_count", "domain", "split", "problem", "profile", "reward_mode", "max_steps",
            "allow_impossible", "progress", "success", "done"} <= set(state), sorted(state)

    async def scenario() -> tuple[str, str, str]:
        await asyncio.sleep(1.5)  # the previous test's sessions have ended
        async with PDDLWorldsClient(base_url=bounded.url) as client:
            same = (await client.reset(seed=3)).observation.problem
            other = (await client.reset(domain="blocksworld", seed=3)).observation
            return same, other.domain, other.problem

    same, domain, problem = asyncio.run(scenario())
    assert same == "prob01" and domain == "blocksworld" and problem.startswith("problem"), (same, domain, problem)


def http_exchange(url: str, head: str, body_chunks: Iterator[bytes] | None = None) -> tuple[int, str]:
    """Send `head` (and `body_chunks` from a thread, stopping at the first error) on one connection; the
    status and body of the reply, read while the body is still being sent."""
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head.encode())

        def sending() -> None:
            with contextlib.suppress(OSError):
                for chunk in body_chunks or ():
                    sock.sendall(chunk)

        sender = threading.Thread(target=sending, daemon=True)
        sender.start()
        reply = b""
        while b"\r\n\r\n" not in reply or len(reply.split(b"\r\n\r\n", 1)[1]) < content_length(reply):
            data = sock.recv(65536)
            if not data:
                break
            reply += data
        sock.shutdown(socket.SHUT_RDWR)
    sender.join(timeout=30)
    status = int(reply.split(b" ", 2)[1])
    return status, reply.split(b"\r\n\r\n", 1)[1].decode()


def content_length(reply: bytes) -> int:
    for line in reply.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 1 << 30


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/PID/status")


def test_http_bodies_over_the_bound_are_refused_before_they_are_read(bounded: Served) -> None:
    """A Content-Length over the bound is a 413 at once (nothing sent after the headers); a chunked body
    is a 413 once it passes the bound, 64 MiB sent without the server's memory growing by half that."""
    head = "POST /step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    status, body = http_exchange(bounded.url, head + "Content-Length: 200000000\r\n\r\n")
    assert status == 413 and "200,000,000 bytes" in json.loads(body)["detail"] and one_line(body), body

    before = peak_rss_kib(bounded.proc.pid)
    chunk, prefix = b"x" * (1 << 20), b'{"action": {"text": "'
    chunks = iter([b"100000\r\n" + prefix + chunk[len(prefix):] + b"\r\n"]
                  + [b"100000\r\n" + chunk + b"\r\n"] * 63 + [b"0\r\n\r\n"])
    status, body = http_exchange(bounded.url, head + "Transfer-Encoding: chunked\r\n\r\n", chunks)
    detail = json.loads(body)["detail"]
    assert status == 413 and f"at most {BODY_BOUND:,} bytes" in detail and one_line(detail), body
    growth_mib = (peak_rss_kib(bounded.proc.pid) - before) / 1024
    assert growth_mib < 32, f"the server's peak memory grew by {growth_mib:.0f} MiB for a refused body"


def test_a_port_in_use_is_one_line_and_nothing_is_announced(cli) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        code, _, err = cli(["env-server", "--port", str(taken.getsockname()[1])])
    assert code == 2 and "serving" not in err, err
    assert err.count("\n") == 1 and "cannot listen on 127.0.0.1:" in err and "the port is in use" in err, err


def test_a_public_address_without_a_key_is_warned_of(cli, monkeypatch) -> None:
    """Listening beyond loopback without a key prints one warning, before the bind (here the port is
    taken, so nothing listens); with a key, none."""
    monkeypatch.delenv("PDDLWORLDS_API_KEY", raising=False)
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))  # bound, never listening: nothing reaches it
        argv = ["env-server", "--host", "0.0.0.0", "--port", str(taken.getsockname()[1])]
        code, _, err = cli(argv)
        keyed_code, _, keyed = cli([*argv, "--api-key", KEY])
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert code == 2 and len(warnings) == 1 and "0.0.0.0" in warnings[0], err
    assert "without an API key" in warnings[0] and "--api-key" in warnings[0], err
    assert keyed_code == 2 and "warning" not in keyed and "the port is in use" in keyed, keyed


def test_the_api_key_guards_every_route_and_the_websocket_and_closes_leave_no_traceback() -> None:
    """With --api-key: every HTTP route (401) and every WebSocket session (an error, then a close with the
    reason) refuse a missing or wrong key in one line; the client with the key plays. After many sessions closed by our client, the refused ones
    and a reset or two, the server's log holds no traceback."""
    import websockets

    with serving("--api-key", KEY, key=KEY) as served:
        for path, data in [("/health", None), ("/schema", None), ("/reset", b"{}"), ("/step", b"{}")]:
            for given in (None, "wrong"):
                headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {given}"} if given else {})
                request = urllib.request.Request(served.url + path, data=data, headers=headers)
                with pytest.raises(urllib.error.HTTPError) as caught:
                    urllib.request.urlopen(request, timeout=10)
                detail = json.loads(caught.value.read())["detail"]
                assert caught.value.code == 401 and "API key" in detail and one_line(detail), (path, detail)

        async def scenario() -> list[str]:
            refusals = []
            for given in (None, "wrong"):
                client = PDDLWorldsClient(base_url=served.url, api_key=given or "")
                with pytest.raises(RuntimeError) as caught:
                    await client.reset(domain="gripper")
                await client.close()
                refusals.append(str(caught.value))
            async with websockets.connect(served.url.replace("http", "ws", 1) + "/ws") as raw:  # any client
                refusals.append(json.loads(await raw.recv())["data"]["message"])
                with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
                    await raw.recv()
                refusals.append(closed.value.rcvd.reason)
            for seed in range(4):
                async with PDDLWorldsClient(base_url=served.url, api_key=KEY) as client:
                    await client.reset(domain="gripper", seed=seed)
                    await client.step("look around")
            return refusals

        refusals = asyncio.run(scenario())
        for seed in range(4):  # the synchronous client (a loop in its own thread), as the TRL environment has it
            with PDDLWorldsClient(base_url=served.url, api_key=KEY).sync() as client:
                client.reset(domain="gripper", seed=seed)
                client.step("look around")
        for seed in range(4):
            episode = RemoteEpisode(served.url, api_key=KEY)
            episode.reset(EpisodeOptions(domain="gripper", seed=seed))
            episode.step("look around")
            episode.close()
        time.sleep(1.0)  # the server has finished with the last session
        log = served.log_text()
    assert len(refusals) == 4
    for refusal in refusals:
        assert "needs its API key" in refusal and one_line(refusal), refusal
    assert "Traceback" not in log and "Exception in ASGI" not in log, log[-3000:]
    assert log.count("\n") == 1 and "API key required (from --api-key)" in log, log


def test_frames_and_options_openenv_cannot_read_get_one_line(env_server: str) -> None:
    """A JSON array, a number or a binary frame is answered in one line and the connection goes on; an
    over-long split name, an empty problem and an episode_id that is no text are refused in one line,
    nothing internal (no path) in it, and the session's state stays readable."""
    import websockets

    async def scenario() -> tuple[list[str], list[str], dict]:
        framed = []
        async with websockets.connect(env_server.replace("http", "ws", 1) + "/ws") as raw:
            for frame in ("[1, 2]", "5", b"\x00\x01"):
                await raw.send(frame)
                reply = json.loads(await raw.recv())
                assert reply["type"] == "error", reply
                framed.append(reply["data"]["message"])
            await raw.send(json.dumps({"type": "reset", "data": {"domain": "gripper"}}))
            assert json.loads(await raw.recv())["type"] == "observation"
        refused = []
        async with PDDLWorldsClient(base_url=env_server) as client:
            await client.reset(domain="gripper", problem="prob02", episode_id="mine")
            for options in ({"split": "s" * 300}, {"problem": ""}, {"episode_id": 5}, {"episode_id": ["x"]}):
                with pytest.raises(RuntimeError) as caught:
                    await client.reset(domain="gripper", **options)
                refused.append(str(caught.value))
            state = (await client.state()).model_dump()
        return framed, refused, state

    framed, refused, state = asyncio.run(scenario())
    assert "not an array" in framed[0] and "not a number" in framed[1] and "binary frame" in framed[2], framed
    assert "has no split 'ssssss" in refused[0] and "(300 characters)" in refused[0], refused[0]
    assert "problem must name a problem of the split, not an empty text" in refused[1], refused[1]
    assert "episode_id must be a text" in refused[2] and "not int" in refused[2], refused[2]
    assert "not list" in refused[3], refused[3]
    for message in framed + refused:
        assert one_line(message) and "/" not in message, message
    assert state["episode_id"] == "mine" and state["problem"] == "prob02", state


def expert_records(cli, out: Path, split: str, problems: str | None = None) -> list[dict]:
    """`pddlworlds eval --agents expert` on Gripper's `split`: its stored episodes."""
    argv = ["eval", "--agents", "expert", "--domains", "gripper", "--split", split, "--workers", "1",
            "--out", str(out), "--no-progress", "--no-report"] + (["--problems", problems] if problems else [])
    code, _, err = cli(argv)
    assert code == 0, err
    return [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]


def test_unsolvable_problems_score_through_the_server_as_in_pddlworlds_eval(env_server: str, cli, tmp_path) -> None:
    """The expert's own actions, as `pddlworlds eval` stored them, replayed through the env-server on the
    impossible split and a mixed one (an unsolvable problem beside a solvable one), a reset naming no
    `allow_impossible`: the same success, progress, steps and claims; `allow_impossible=false` takes the
    claim away again."""
    records = expert_records(cli, tmp_path / "impossible", "impossible", "easy-02-nowhere-ball1,prob05-nowhere-ball1")
    records += expert_records(cli, tmp_path / "mixed", "agentboard-mixed", "prob01,prob01-nowhere-ball2")
    assert [r["solvable"] for r in records] == [False, False, True, False], records

    async def replay(record: dict, **options: object) -> dict:
        async with PDDLWorldsClient(base_url=env_server) as client:
            result = await client.reset(domain="gripper", split=record["split"], problem=record["problem"],
                                        seed=record["seed"], **options)
            for step in record["trajectory"]:
                result = await client.step(step["action"])
            seen = result.observation
            return {"success": seen.success, "progress": seen.progress, "steps": seen.step,
                    "claimed_impossible": bool(seen.claimed_impossible)}

    for record in records:
        expected = {k: record[k] for k in ("success", "progress", "steps", "claimed_impossible")}
        assert asyncio.run(replay(record)) == expected, record["problem"]
    unsolvable = next(r for r in records if not r["solvable"])
    assert unsolvable["success"] and unsolvable["claimed_impossible"], unsolvable
    without = asyncio.run(replay(unsolvable, allow_impossible=False))
    assert not without["success"] and not without["claimed_impossible"], without
