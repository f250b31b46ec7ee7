#!/usr/bin/env python3
"""Episodes per minute with 1, 2 and 4 workers: the in-process embedded model beside `pddlworlds serve`.

Each measurement is one `pddlworlds eval` command (STANDARD on the first N Blocksworld problems, a few
steps each) timed from start to end: in process, every worker process loads its own model and gets
cores / workers threads; against the server (a fresh one per measurement, so that no run replays another's
cached prompts), worker threads share the one model the server loaded before the clock started
(llama-cpp-python serves one request at a time, so workers queue there):

    python scripts/bench_serve.py --problems 4 --max-steps 8 --workers 1,2,4

Prints a table and the machine's load average before and after (figures from a loaded machine are not
comparable with an idle one's).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from pddlworlds.artefacts.runs import EPISODES_FILE, read_episodes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(port: int, threads: int | None) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "pddlworlds.cli", "serve", "--port", str(port), "--name", "bench"]
    if threads is not None:
        command += ["--threads", str(threads)]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"pddlworlds serve exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("pddlworlds serve did not answer within 300 s")


def timed_eval(out: Path, llm: list[str], workers: int, args: argparse.Namespace) -> tuple[float, int]:
    """(seconds, episodes stored) of one eval command."""
    command = [sys.executable, "-m", "pddlworlds.cli", "eval", "--agents", args.agent, "--domains", args.domain,
               "--limit", str(args.problems), "--max-steps", str(args.max_steps), "--workers", str(workers),
               "--out", str(out), "--no-progress", "--no-report", *llm]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"eval failed ({done.returncode}): {done.stderr[-2000:]}")
    lines = read_episodes(out / EPISODES_FILE).lines
    return elapsed, sum(1 for x in lines if not x.get("error"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=4, help="episodes per measurement (default: 4)")
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--agent", default="standard")
    parser.add_argument("--domain", default="blocksworld")
    parser.add_argument("--server-threads", type=int, default=None, help="default: every core, as in-process")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    print(f"load average before: {os.getloadavg()}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        for workers in counts:
            seconds, n = timed_eval(Path(tmp) / f"local-{workers}", ["--llm", "embedded"], workers, args)
            rows.append(("in-process", workers, n, seconds))
            print(f"in-process, {workers} worker(s): {n} episodes in {seconds:.1f} s", flush=True)
        for workers in counts:  # a fresh server each time: its prompt cache would replay the last run's
            port = free_port()
            server = start_server(port, args.server_threads)
            try:
                url = ["--llm", "openai:bench", "--base-url", f"http://127.0.0.1:{port}/v1"]
                seconds, n = timed_eval(Path(tmp) / f"served-{workers}", url, workers, args)
            finally:
                server.terminate()
                server.wait(timeout=30)
            rows.append(("pddlworlds serve", workers, n, seconds))
            print(f"server, {workers} worker(s): {n} episodes in {seconds:.1f} s", flush=True)
    print(f"load average after: {os.getloadavg()}")
    print(f"\n{args.agent} on the first {args.problems} {args.domain} problems, at most {args.max_steps} steps each")
    print("| backend | workers | episodes | wall s | episodes / min |")
    print("|---|---:|---:|---:|---:|")
    for backend, workers, n, seconds in rows:
        print(f"| {backend} | {workers} | {n} | {seconds:.1f} | {60 * n / seconds:.1f} |")


if __name__ == "__main__":
    main()
