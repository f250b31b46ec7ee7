#!/usr/bin/env python3
"""Per-call cost of the OpenAI-compatible backend against the local stand-in server (no model, no network).

Each call builds its own `openai` client (so that a deadline or Ctrl-C can close it) and runs in a helper
thread; this prints what that costs per call, and how long a faulted call takes to become a fault:

    python scripts/bench_endpoint.py --calls 200
"""

from __future__ import annotations

import argparse
import statistics
import time

from pddlworlds.llm import LLMServiceError, Message, OpenAICompatibleLLM
from pddlworlds.testing.fake_openai import FakeOpenAIServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    messages = [Message("user", "Block a is on the table. What do you do?")]
    with FakeOpenAIServer("(pick-up a)") as srv:
        llm = OpenAICompatibleLLM("fake-model", base_url=srv.base_url, api_key="x")
        llm.chat(messages)  # warm-up (imports, first connection)
        times = []
        for _ in range(args.calls):
            start = time.perf_counter()
            llm.chat(messages)
            times.append(time.perf_counter() - start)
    print(f"ok calls: {args.calls}, median {1000 * statistics.median(times):.2f} ms, mean {1000 * statistics.mean(times):.2f} ms")
    cases = {
        "429 for ever (client retries 4 times)": {"failures": [429] * 5},
        "hang (--request-timeout 0.5, --call-deadline 2)": {"failures": ["timeout"] * 10, "hang_s": 5.0},
    }
    for name, options in cases.items():
        with FakeOpenAIServer("(pick-up a)", **options) as srv:
            llm = OpenAICompatibleLLM("fake-model", base_url=srv.base_url, api_key="x", timeout=0.5, deadline_s=2.0)
            start = time.perf_counter()
            try:
                llm.chat(messages)
                outcome = "answered"
            except LLMServiceError as exc:
                outcome = f"fault {exc.kind} after {exc.attempts} attempt(s)"
            print(f"{name}: {outcome} in {time.perf_counter() - start:.2f} s ({len(srv.chat_requests)} requests)")


if __name__ == "__main__":
    main()
