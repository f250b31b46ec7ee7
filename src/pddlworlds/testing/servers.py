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
from collections.abc import Iterator, Mapping, Sequence
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
def started(
    command: Sequence[str],
    ready_url: str,
    timeout_s: float = 180.0,
    *,
    headers: Mapping[str, str] | None = None,
    log_path: str | os.PathLike[str] | None = None,
) -> Iterator[subprocess.Popen[str]]:
    """`command` running until the block ends, once `ready_url` answers 200 (asked with `headers`, an API
    key say); its stderr goes to a file (a pipe nobody reads could fill and stall it), `log_path` when the
    caller reads it too, quoted should the command exit first. Terminated (then killed) at the end."""
    with contextlib.ExitStack() as stack:
        if log_path is None:
            log = stack.enter_context(tempfile.TemporaryFile(mode="w+", prefix="pddlworlds-server-"))
        else:
            log = stack.enter_context(open(log_path, "w+"))  # closed by the stack
        proc = subprocess.Popen(list(command), env=source_env(), stdout=subprocess.DEVNULL, stderr=log, text=True)
        try:
            _wait_until_ready(proc, log, command, ready_url, timeout_s, dict(headers or {}))
            yield proc
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def _wait_until_ready(
    proc: subprocess.Popen[str], log: Any, command: Sequence[str], url: str, timeout_s: float, headers: dict[str, str]
) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"{' '.join(command[2:])} exited with {proc.returncode}: {log.read()[-2000:]}")
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not answer within {timeout_s:g} s")
        time.sleep(0.2)
