"""A process we start ends with ours: SIGTERM (what `timeout`, schedulers and service managers send) and
SIGINT stop `pddlworlds eval` as Ctrl-C does, its worker processes are ended within seconds (also when the
parent is killed outright), the episodes under way are dropped rather than stored half, and the same command
resumes to the full set of episodes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import pddlworlds

SRC = str(Path(pddlworlds.__file__).resolve().parents[1])  # the package these tests import
#: How long a subprocess may take to reach the event a test measures from (start-up is not the subject).
STARTUP_S = 300


def _start_time(pid: int) -> int | None:
    """A live process's start time (clock ticks since boot), None once it is gone (or a zombie)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return None if fields[0] == "Z" else int(fields[19])


def _tree(root: int) -> dict[int, int | None]:
    """`root` and every live descendant: pid -> start time."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(text[text.rindex(")") + 2 :].split()[1]), []).append(int(entry))
    found, stack = {root: _start_time(root)}, [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found[child] = _start_time(child)
            stack.append(child)
    return found


def _left(tree: dict[int, int | None]) -> list[int]:
    return [pid for pid, start in tree.items() if start is not None and _start_time(pid) == start]


def test_sigterm_raises_keyboard_interrupt_once_then_is_noted(capsys) -> None:
    from pddlworlds.processes import signals_interrupt

    before = signal.getsignal(signal.SIGTERM)
    with signals_interrupt("test"):
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        os.kill(os.getpid(), signal.SIGTERM)  # while stopping: noted, not raised
        time.sleep(0.1)
    assert "test: SIGTERM again: already stopping" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_worker_ends_with_its_parent_even_when_the_parent_is_killed(tmp_path: Path) -> None:
    parent = textwrap.dedent("""
        import multiprocessing, os, sys, time
        from concurrent.futures import ProcessPoolExecutor
        from pddlworlds.processes import tie_to_parent

        def pid():
            return os.getpid()

        if __name__ == "__main__":
            pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"), initializer=tie_to_parent)
            print(pool.submit(pid).result(), flush=True)
            pool.submit(time.sleep, 120)
            time.sleep(120)
    """)
    script = tmp_path / "parent.py"
    script.write_text(parent)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": SRC})
    try:
        worker = int(proc.stdout.readline())
        start = _start_time(worker)
        assert start is not None
        proc.kill()  # SIGKILL: no handler, no `finally` runs in the parent
        proc.wait()
        deadline = time.monotonic() + 5
        while _start_time(worker) == start and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _start_time(worker) != start, "the worker outlived its killed parent"
    finally:
        proc.kill()


def _stored(out: Path) -> int:
    path = out / "episodes.jsonl"
    return path.read_bytes().count(b"\n") if path.is_file() else 0


@pytest.mark.embedded
@pytest.mark.xdist_group("model-processes")
def test_sigterm_and_sigint_stop_eval_and_its_workers_and_the_run_resumes(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="the embedded model needs llama-cpp-python")
    from pddlworlds.llm import default_model_path

    default_model_path()  # assembled once into the test cache, before anything is timed
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "pddlworlds.cli", "eval", "--agents", "standard", "--domains", "blocksworld",
            "--limit", "1", "--seeds", "0-4", "--max-steps", "3", "--workers", "2", "--out", str(out),
            "--no-progress", "--no-report"]
    env = {**os.environ, "PYTHONPATH": SRC}
    trees: list[dict[int, int | None]] = []
    try:
        _stop_twice_then_resume(argv, env, out, trees)
    finally:  # a failing run must not leave its workers to the rest of the suite
        for pid in [pid for tree in trees for pid in _left(tree)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _stop_twice_then_resume(argv: list[str], env: dict[str, str], out: Path, trees: list) -> None:
    from pddlworlds.artefacts.runs import read_episodes

    for stop in (signal.SIGTERM, signal.SIGINT):
        stored = _stored(out)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # mid-episode: one more episode stored, so both workers hold a model and are playing the next ones (of
        # five, at most two are stored in each of the two runs: one is always left to play)
        deadline = time.monotonic() + STARTUP_S
        while _stored(out) == stored and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        tree = _tree(proc.pid)
        trees.append(tree)
        assert proc.poll() is None and len(tree) >= 3, "the run ended (or never got going) before the signal"
        proc.send_signal(stop)
        signalled = time.monotonic()
        while _left(tree) and time.monotonic() - signalled < 10:
            proc.poll()
            time.sleep(0.05)
        took = time.monotonic() - signalled
        err = proc.communicate(timeout=30)[1].decode()
        assert not _left(tree), f"{signal.Signals(stop).name}: processes left after {took:.1f} s: {_left(tree)}"
        assert proc.returncode == 130, err
        assert "Traceback" not in err and "run the same command again to resume" in err
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=STARTUP_S, check=False)
    assert done.returncode == 0, done.stderr
    found = read_episodes(out / "episodes.jsonl")
    assert found.skipped == [] and len(found.episodes) == 5  # nothing stored twice or half
    assert sorted(e.line["seed"] for e in found.episodes) == [0, 1, 2, 3, 4]
    assert all(json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines())
    assert "5/5 episodes stored" in done.stderr
