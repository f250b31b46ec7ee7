"""Processes we start end with ours.

`timeout`, schedulers and service managers stop a program with SIGTERM, which by default ends the process
at once: its `finally` blocks never run, and the worker processes it started go on computing with no parent.
So a command that starts workers (a pool of processes, Ray actors) holds `signals_interrupt()` while it
runs, which turns SIGTERM into the KeyboardInterrupt Ctrl-C raises, so one path stops the run: work under way
is dropped or stored whole, workers are ended (`end_processes`), and the command exits. Each worker calls
`tie_to_parent()` when it starts, so that even a parent killed outright (SIGKILL, out of memory) takes its
workers with it, and a Ctrl-C at the terminal (which reaches every process of the group) is left to the
parent to act on.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["end_processes", "pool_processes", "signals_interrupt", "tie_to_parent"]

#: Linux's prctl option that sends the calling process a signal when its parent ends.
_PR_SET_PDEATHSIG = 1


@contextlib.contextmanager
def signals_interrupt(what: str) -> Iterator[None]:
    """While held (in the main thread), SIGTERM and SIGINT raise KeyboardInterrupt there, once: a second
    signal while the command stops is noted on stderr and otherwise ignored, so that the stop (a few
    seconds: workers ended, files closed) is not cut short, leaving workers behind. `what` names the command
    in the note. Elsewhere than the main thread, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopping = False

    def handler(signum: int, frame: Any) -> None:
        nonlocal stopping
        if stopping:
            print(f"{what}: {signal.Signals(signum).name} again: already stopping", file=sys.stderr, flush=True)
            return
        stopping = True
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def tie_to_parent() -> None:
    """In a worker process we started: ignore SIGINT (the parent stops the run and ends its workers), end
    at SIGTERM (how the parent ends it; a forked worker would otherwise keep the parent's handler), and
    end (SIGKILL) when the parent ends, however that happens (Linux; elsewhere only the former). A parent
    already gone by the time this runs ends the worker at once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    parent = multiprocessing.parent_process()
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent is not None and os.getppid() != parent.pid:  # the parent ended before the line above
        os._exit(1)


def pool_processes(pool: Any) -> list[Any]:
    """The worker processes of a `concurrent.futures.ProcessPoolExecutor` (the standard library keeps them
    in `_processes`; Python 3.14's `terminate_workers` does what `end_processes` does with them)."""
    return list((getattr(pool, "_processes", None) or {}).values())


def end_processes(processes: Iterable[Any], grace_s: float = 3.0) -> None:
    """SIGTERM to each `multiprocessing.Process` still running, then SIGKILL to any still there after
    `grace_s`; returns once every one has ended."""
    processes = [p for p in processes if p.is_alive()]
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.terminate()
    deadline = time.monotonic() + grace_s
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            with contextlib.suppress(OSError, ValueError):
                process.kill()
            process.join()
