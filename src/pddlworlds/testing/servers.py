"""Servers started as processes for tests and benchmarks: a free port, and a process that is ours until
the block ends (ended with it, however the block ends)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["free_port", "pddlworlds_command", "source_env", "started"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def source_env(**extra: str) -> dict[str, str]:
    """This process's environment with the package's own source folder first on PYTHONPATH, so that a
    child process imports the same pddlworlds (a worktree's, say) as this one."""
    src = str(Path(__file__).resolve().parents[2])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]), **extra}


def pddlworlds_command(*args: str) -> list[str]:
    """`pddlworlds ARGS...` run by this interpreter."""
    return [sys.executable, "-m", "pddlworlds.cli", *args]


@contextlib.contextmanager
def started(command: Sequence[str], ready_url: str, timeout_s: float = 180.0) -> Iterator[subprocess.Popen[str]]:
    """`command` running until the block ends, once `ready_url` answers 200; its stderr goes to a file
    (a pipe nobody reads could fill and stall it), quoted should it exit first. Terminated (then killed)
    at the end."""
    with tempfile.TemporaryFile(mode="w+", prefix="pddlworlds-server-") as log:
        proc = subprocess.Popen(list(command), env=source_env(), stdout=subprocess.DEVNULL, stderr=log, text=True)
        try:
            _wait_until_ready(proc, log, command, ready_url, timeout_s)
            yield proc
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def _wait_until_ready(proc: subprocess.Popen[str], log: Any, command: Sequence[str], url: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"{' '.join(command[2:])} exited with {proc.returncode}: {log.read()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not answer within {timeout_s:g} s")
        time.sleep(0.2)
