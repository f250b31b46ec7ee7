"""Evaluation under faults: endpoint faults are recorded as faults (not scores), resumes re-run only them,
Ctrl-C stops at once, raw replies are capped, bad episode files and output paths get one clear line.

Every endpoint case goes through the stand-in server (`pddlworlds.testing.fake_openai`)."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pddlworlds.evaluation import RunPlan, RunStore, run_evaluation
from pddlworlds.evaluation.cli import main as eval_main
from pddlworlds.testing.fake_openai import FakeOpenAIServer

FIXTURES = Path(__file__).parents[1] / "fixtures"
REPO = Path(__file__).resolve().parents[2]
CHATTER = "pw_eval_agents:chatter"
WALKER = "pw_eval_agents:walker"


@pytest.fixture(autouse=True)
def _fixture_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FIXTURES))


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = eval_main(argv)
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def eval_argv(srv: FakeOpenAIServer, out: Path, *extra: str, seeds: str = "0") -> list[str]:
    return [
        "eval",
        "--agents",
        CHATTER,
        "--domains",
        "blocksworld",
        "--problems",
        "problem1",
        "--seeds",
        seeds,
        "--max-steps",
        "3",
        "--workers",
        "1",
        "--llm",
        "openai:fake-model",
        "--base-url",
        srv.base_url,
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]


def lines_of(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]


@pytest.mark.parametrize(
    ("failures", "kind", "extra"),
    [
        ([429] * 5, "rate_limited", []),  # 429 through the client's 4 retries
        ([502] * 5, "server_error", []),
        ([400], "rejected", []),
        (["malformed"], "invalid_reply", []),
        (["no_choices"], "no_choices", []),
        (
            ["timeout"] * 2,
            "deadline",
            ["--request-timeout", "0.3", "--call-deadline", "1"],
        ),  # a hang: 2 attempts fit
    ],
)
def test_endpoint_fault_is_recorded_left_out_and_rerun(
    tmp_path: Path, failures: list, kind: str, extra: list
) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer("check valid actions", failures=failures, hang_s=3.0) as srv:
        start = time.monotonic()
        code, stdout, err = run_cli(eval_argv(srv, out, *extra, seeds="0,1"))
        assert time.monotonic() - start < 60  # not minutes per call (five attempts of 60 s before)
        assert code == 1, err
        assert "1 episode(s) stopped by a fault of the model endpoint, left out of every score" in err
        assert f"seed 0: {kind}:" in err and "run the same command again" in err
        (line0, line1) = lines_of(out)
        assert line0["seed"] == 0 and line0["error"]["kind"] == kind and line0["error"]["count"] >= 1
        assert line0["error"]["message"] and line0["success"] is False
        assert line1["seed"] == 1 and line1["error"] is None and line1["steps"] == 3
        report = (out / "report.md").read_text()
        assert "## Episodes stopped by a fault outside the agent" in report and f"| {kind} |" in report
        assert "**left out of every score**" in report
        summary = json.loads((out / "summary.json").read_text())
        assert [row["n"] for row in summary["rows"]] == [1, 1]  # the faulted episode is not scored
        assert "left out of these scores" in stdout
        # The endpoint is fixed (its failures are spent): the same command re-runs seed 0, and only it.
        before = len(srv.chat_requests)
        finished_seed1 = line1["meta"]["finished_at"]
        code, _, err = run_cli(eval_argv(srv, out, *extra, seeds="0,1"))
        assert code == 0, err
        assert "2/2 episodes stored (1 new, 1 of them re-run after a fault)" in err
        assert len(srv.chat_requests) - before == 3  # seed 0's three steps
    lines = lines_of(out)
    assert len(lines) == 2 and all(line["error"] is None for line in lines)
    assert {line["seed"]: line["meta"]["finished_at"] for line in lines}[1] == finished_seed1


def test_a_dead_endpoint_stops_the_run_after_five_faults(tmp_path: Path) -> None:
    with FakeOpenAIServer("check valid actions", failures=[503] * 200) as srv:
        code, _, err = run_cli(eval_argv(srv, tmp_path / "run", seeds="0-9"))
    assert code == 1 and "stopping after 5 episodes in a row stopped by the model endpoint" in err
    assert len(lines_of(tmp_path / "run")) == 5


def test_huge_reply_is_stored_once_and_capped(tmp_path: Path) -> None:
    huge = "look around\n" + "x" * 10_000_000
    with FakeOpenAIServer(huge) as srv:
        code, _, err = run_cli(eval_argv(srv, tmp_path / "run", "--max-steps", "2"))
    assert code == 0, err
    size = (tmp_path / "run" / "episodes.jsonl").stat().st_size
    assert size < 100_000
    (line,) = lines_of(tmp_path / "run")
    for step in line["trajectory"]:
        assert step["raw_output"] is None  # kept once, in the action call
        (call,) = step["calls"]
        assert len(call["raw_output"]) == 16 * 1024 and call["raw_output_length"] == len(huge)


#: How long a subprocess may take to reach the event a timing test measures from (not itself measured).
STARTUP_S = 300


def _stored(out: Path) -> bool:
    path = out / "episodes.jsonl"
    return path.is_file() and path.read_bytes().endswith(b"\n")


def test_ctrl_c_stops_within_seconds_and_keeps_finished_episodes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer("check valid actions", failures=["timeout"] * 100, hang_s=60.0) as srv:
        argv = eval_argv(srv, out, "--request-timeout", "30")
        argv[argv.index("--agents") + 1] = f"{WALKER},{CHATTER}"  # the walker's episode finishes first
        argv[argv.index("--workers") + 1] = "2"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(FIXTURES)])}
        proc = subprocess.Popen(
            [sys.executable, "-m", "pddlworlds.cli", *argv],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        # The subject is the time from Ctrl-C to the exit, so the bound counts from the signal; the start-up
        # (imports, a machine under load) only has to end: the events waited for are the chatter's request
        # reaching the server and the walker's episode stored.
        deadline = time.monotonic() + STARTUP_S
        while not (srv.chat_requests and _stored(out)) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert srv.chat_requests and _stored(out), f"no request or no stored episode within {STARTUP_S} s"
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - start
        calls = len(srv.chat_requests)
        time.sleep(2.0)
        assert len(srv.chat_requests) == calls  # nothing goes on calling the server
    assert took < 10, err
    assert proc.returncode == 130, err.decode()
    (line,) = lines_of(out)
    assert line["agent"] == WALKER and line["error"] is None


# ------------------------------------------------------------------------------------------------
# Episode files: bad records, duplicates, a torn line.


def walker_run(out: Path) -> None:
    plan = RunPlan(agents=[WALKER], problems={"blocksworld": ["problem1", "problem2"]}, max_steps=4)
    run_evaluation(plan, out, progress=False)


@pytest.mark.parametrize("bad", ["[]", "{}", "42"])
def test_report_and_resume_name_a_bad_record(tmp_path: Path, bad: str) -> None:
    out = tmp_path / "run"
    walker_run(out)
    path = out / "episodes.jsonl"
    first, second = path.read_text().splitlines()
    path.write_text(f"{first}\n{bad}\n{second}\n")
    code, _, err = run_cli(["report", str(out), "--no-plots"])
    assert code == 2 and f"{path}, line 2: not an episode record" in err and "Traceback" not in err
    plan = RunPlan(agents=[WALKER], problems={"blocksworld": ["problem1", "problem2"]}, max_steps=4)
    with pytest.raises(ValueError, match=r"episodes.jsonl, line 2: not an episode record"):
        run_evaluation(plan, out, progress=False)


def test_duplicates_and_a_torn_line_are_skipped_and_counted(tmp_path: Path) -> None:
    out = tmp_path / "run"
    walker_run(out)
    path = out / "episodes.jsonl"
    first = path.read_text().splitlines()[0]
    with path.open("a") as handle:
        handle.write((first + "\n") * 50 + first[: len(first) // 2])
    code, _, err = run_cli(["report", str(out), "--no-plots"])
    assert code == 0, err
    assert "had 1 torn last line and 50 duplicate line(s) of episodes already read; they were skipped" in err
    report = (out / "report.md").read_text()
    assert "- episodes: 2 of 2 planned; episodes.jsonl had 1 torn last line and 50 duplicate" in report
    assert "| Blocksworld | pw_eval_agents:walker | 2 |" in report
    found = RunStore(out).read_episodes()
    assert (len(found.lines), found.duplicates, found.torn) == (2, 50, 1)


# ------------------------------------------------------------------------------------------------
# Output paths.


def test_out_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "afile"
    target.write_text("x")
    code, _, err = run_cli(["eval", "--agents", WALKER, "--out", str(target), "--no-progress"])
    assert (
        code == 2 and err.strip().count("\n") == 1 and "is a file, not a folder" in err and str(target) in err
    )
    code, _, err = run_cli(["eval", "--agents", WALKER, "--out", str(target / "sub"), "--no-progress"])
    assert code == 2 and "a file stands where a folder should be" in err and "Traceback" not in err


def failing(monkeypatch: pytest.MonkeyPatch, name: str, under: Path, code: int) -> None:
    """`os.<name>` raising OSError(code) for paths under `under` (a read-only or full disk, as root too)."""
    real = getattr(os, name)

    def fake(*args, **kwargs):
        target = args[0]
        text = os.fsdecode(target) if isinstance(target, (str, bytes, os.PathLike)) else ""
        if isinstance(target, int):  # os.write(fd, ...): the descriptor of a file under `under`
            text = os.readlink(f"/proc/self/fd/{target}")
        if text.startswith(str(under)):
            raise OSError(code, os.strerror(code), text)
        return real(*args, **kwargs)

    monkeypatch.setattr(os, name, fake)


def test_read_only_folder_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "ro"
    out.mkdir()
    if os.geteuid() != 0:
        out.chmod(0o555)
    else:
        failing(monkeypatch, "open", out, errno.EACCES)
    code, _, err = run_cli(
        [
            "eval",
            "--agents",
            WALKER,
            "--domains",
            "blocksworld",
            "--limit",
            "1",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    out.chmod(0o755)
    assert (
        code == 2 and f"cannot write {out}" in err and "permission denied" in err and "Traceback" not in err
    )
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_full_disk_is_one_line_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "full"
    failing(monkeypatch, "write", out, errno.ENOSPC)  # the episode appends (one os.write each)
    argv = ["eval", "--agents", WALKER, "--domains", "blocksworld", "--limit", "2", "--max-steps", "4"]
    code, _, err = run_cli([*argv, "--out", str(out), "--no-progress"])
    assert code == 1 and "no space left on the device" in err and "Traceback" not in err
    assert f"cannot write {out / 'episodes.jsonl'}" in err and err.strip().count("\n") == 1
    assert (out / "episodes.jsonl").read_bytes() == b""  # the short write was undone
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_report_on_a_full_disk_is_one_line_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    walker_run(out)
    failing(monkeypatch, "replace", out, errno.ENOSPC)  # atomic_write's last move
    code, _, err = run_cli(["report", str(out), "--no-plots"])
    assert code == 1 and f"cannot write {out}" in err and "no space left on the device" in err
    assert "Traceback" not in err and not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_reasoning_endpoint_rejections_are_dropped_and_recorded(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(
        "check valid actions",
        rejects=["temperature", "stop"],
        wants_max_completion_tokens=True,
        reasoning="(no)",
    ) as srv:
        code, _, err = run_cli(eval_argv(srv, out, seeds="0,1"))
        assert code == 0, err
        bodies = srv.chat_requests
        # Resuming is not refused: run_info is not part of the run's identity.
        code, _, err = run_cli(eval_argv(srv, out, seeds="0,1"))
        assert code == 0 and "2/2 episodes stored (0 new)" in err
    assert len(bodies) == 2 + 6  # max_tokens and temperature rejected once each, then 2 episodes x 3 steps
    assert all("max_completion_tokens" in b and "temperature" not in b for b in bodies[2:])
    config = json.loads((out / "config.json").read_text())
    adjustments = config["run_info"]["llm_adjustments"]
    assert adjustments["token_limit_parameter"] == "max_completion_tokens"
    assert sorted(adjustments["dropped_parameters"]) == ["temperature"]  # the chatter sends no stop
    assert all(line["error"] is None for line in lines_of(out))
    actions = {s["action"] for line in lines_of(out) for s in line["trajectory"]}
    assert actions == {"check valid actions"}  # never the reasoning text "(no)"
    report = (out / "report.md").read_text()
    assert "Tokens counted by an estimate: characters / 4" in report


# ------------------------------------------------------------------------------------------------
# Ray: nothing left behind after the driver is killed.

DRIVER = """
import signal, subprocess, sys, time
from pddlworlds.evaluation.ray_watchdog import RayWatchdog
watchdog = RayWatchdog.start()
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
watchdog.track_in_background(0.2)
print(child.pid, flush=True)
time.sleep(600)
"""


def test_watchdog_kills_what_a_killed_driver_left_behind() -> None:
    from pddlworlds.evaluation.ray_watchdog import descendants

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], env=env, stdout=subprocess.PIPE, text=True)
    child = int(driver.stdout.readline())
    time.sleep(1.0)  # the background tracking has sent the child
    assert child in descendants(driver.pid)
    driver.kill()  # SIGKILL: no cleanup of its own
    driver.wait()
    deadline = time.monotonic() + 20
    while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = Path(f"/proc/{child}").exists() and "Z" not in Path(f"/proc/{child}/stat").read_text().split()[2]
    assert not alive, "the orphan that ignores SIGTERM is still running"


@pytest.mark.slow
def test_ray_run_killed_leaves_no_process_behind(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    from pddlworlds.evaluation.ray_watchdog import descendants

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(FIXTURES)]),
        "PW_EVAL_STEP_SLEEP": "1",
    }
    env.pop("RAY_ADDRESS", None)
    argv = ["eval", "--agents", WALKER, "--domains", "blocksworld", "--limit", "3", "--executor", "ray"]
    driver = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pddlworlds.cli",
            *argv,
            "--workers",
            "1",
            "--out",
            str(tmp_path / "r"),
            "--no-progress",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    names: dict[int, str] = {}
    while time.monotonic() < deadline:
        names = {}
        for pid in descendants(driver.pid):
            with contextlib.suppress(OSError):
                names[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        if any("RuntimeEnvAgent" in n for n in names.values()) and any(
            "RayEpisodeWorker" in n for n in names.values()
        ):
            break
        time.sleep(0.5)
    assert any("DashboardAgent" in n for n in names.values()), names
    time.sleep(2.0)  # a tracking round after the agents appeared
    driver.kill()
    driver.wait()
    deadline = time.monotonic() + 30
    left = set(names)
    while left and time.monotonic() < deadline:
        left = {
            pid
            for pid in left
            if Path(f"/proc/{pid}").exists() and " Z " not in Path(f"/proc/{pid}/stat").read_text()
        }
        time.sleep(0.5)
    assert not left, {pid: names[pid] for pid in left}
