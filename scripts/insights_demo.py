"""Cross-trial insight memory end to end on the stand-in server (no model, no network): a worked example.

    python scripts/insights_demo.py --out runs/insights-demo

Starts `pddlworlds.testing.fake_openai` on 127.0.0.1 with a scripted "model" and runs

    pddlworlds eval --agents standard,expert --domains blocksworld --problems problem1 --max-steps 10 \\
        --llm openai:fake-model --base-url <stand-in> --trials 3 --insights <out>/insights.json --out <out>

The script stands in for a model that learns: as STANDARD it writes a rejected action until its instruction
carries a rule, then plays the plan; asked for insights it replies with (deliberately messy) operations.
The expert gives `pair` mode its successful partner. The figures this prints show the plumbing (rules
written after trial 1 reach trial 2's prompts), not what a real model would learn.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pddlworlds.cli import main as pddlworlds_main
from pddlworlds.testing.fake_openai import FakeOpenAIServer
from pddlworlds.testing.scenarios import BLOCKSWORLD_PROBLEM1_PLAN as PLAN

OPERATIONS = (
    "Here is what I would change:\n"
    "1. ADD general: When an action is rejected, check the valid actions before trying again.\n"
    "- **add domain**: Put the blocks that are in the way on the table before building the tower.\n"
    "AGREE 1"
)


def responder(messages: list[dict]) -> str:
    system, user = messages[0]["content"], messages[-1]["content"]
    if system.startswith("You keep a short list of rules"):
        return OPERATIONS
    if "Insights from earlier episodes" not in system:
        return "Action: build the tower"
    return f"Action: {PLAN[user.count('Observation: ') - 1]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="runs/insights-demo", help="run folder (default: runs/insights-demo)")
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args(argv)
    out = Path(args.out)
    started = time.perf_counter()
    with FakeOpenAIServer(responder) as srv:
        code = pddlworlds_main(
            [
                "eval", "--agents", "standard,expert", "--domains", "blocksworld", "--problems", "problem1",
                "--max-steps", "10", "--llm", "openai:fake-model", "--base-url", srv.base_url, "--api-key", "demo",
                "--workers", "1", "--no-progress", "--trials", str(args.trials),
                "--insights", str(out / "insights.json"), "--out", str(out),
            ]
        )  # fmt: skip
        calls = len(srv.chat_requests)
    print(f"{calls} requests to the stand-in server; {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
