"""A watchdog that cleans up after a local Ray cluster whose driver died, even by SIGKILL.

`ray.init()` without an address starts a cluster whose raylet starts helper agents (the dashboard agent,
the runtime-env agent); when the driver is killed, the raylet dies but those agents stay (about 170 MB) and
ignore SIGTERM. `RayWatchdog.start()` runs this module in its own session with a pipe from the driver; the
driver writes the process ids (with start times) of its descendants as they appear, and when the pipe
closes, whichever way the driver ended, the watchdog SIGKILLs those still running. Only processes this
driver started are ever touched: a process id whose start time changed belongs to someone else.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

__all__ = ["RayWatchdog", "descendants", "main"]


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of a live process, from /proc (None when it is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "
    return int(fields[1]), int(fields[19])


def descendants(root: int) -> dict[int, int]:
    """Every live descendant of `root`: pid -> start time."""
    parents: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None:
                parents.setdefault(stat[0], []).append(int(entry))
                starts[int(entry)] = stat[1]
    found: dict[int, int] = {}
    stack = [root]
    while stack:
        for child in parents.get(stack.pop(), []):
            if child not in found:
                found[child] = starts[child]
                stack.append(child)
    return found


class RayWatchdog:
    """The driver's end: start the watchdog, then `track()` whenever new Ray processes may have appeared."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.sent: set[tuple[int, int]] = set()
        self._lock = threading.Lock()

    @classmethod
    def start(cls) -> RayWatchdog | None:
        if not Path("/proc").is_dir():  # not Linux: nothing to read process trees from
            return None
        process = subprocess.Popen(
            [sys.executable, "-m", "pddlworlds.evaluation.ray_watchdog"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C or a kill of the driver's group does not reach it
        )
        return cls(process)

    def track_in_background(self, every_s: float = 1.0) -> None:
        """`track()` now and every `every_s` seconds from a daemon thread (Ray starts processes late)."""

        def loop() -> None:
            while self.process.poll() is None:
                self.track()
                stop.wait(every_s)

        stop = threading.Event()
        threading.Thread(target=loop, name="ray-watchdog", daemon=True).start()

    def track(self) -> None:
        """Tell the watchdog about this process's descendants not sent yet (the watchdog itself excepted)."""
        with self._lock:
            self._send()

    def _send(self) -> None:
        new = [
            (pid, start)
            for pid, start in descendants(os.getpid()).items()
            if pid != self.process.pid and (pid, start) not in self.sent
        ]
        if not new or self.process.stdin is None:
            return
        try:
            self.process.stdin.write("".join(f"{pid} {start}\n" for pid, start in new).encode())
            self.process.stdin.flush()
        except OSError:
            return
        self.sent.update(new)


def main() -> int:
    """Read "PID START" lines until the driver's pipe closes, then SIGKILL those processes still running."""
    tracked = []
    for line in sys.stdin:
        pid, start = line.split()
        tracked.append((int(pid), int(start)))
    for pid, start in tracked:
        stat = _stat(pid)
        if stat is not None and stat[1] == start:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
