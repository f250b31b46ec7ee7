"""GRPO with TRL on pddlworlds, on the CPU: the embedded Gemma 3 270M, a LoRA adapter, our environment.

    python scripts/trl_grpo_example.py --steps 2 [--problems problem1,problem5] [--out /tmp/grpo]

Each problem is one prompt with `--generations` rollouts; a rollout is an episode played through the
`act` and `check_valid_actions` tools of `PDDLWorldsToolEnv`, rewarded by its `get_reward()` (the
episode's progress). Prints the seconds each optimisation step took and the reward TRL logged beside the
environments' own. Needs the trl and train extras (scripts/setup.sh installs both).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is marked experimental


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2, help="optimisation steps (default: 2)")
    parser.add_argument("--problems", default="problem1,problem5", help="Blocksworld problems, one prompt each")
    parser.add_argument("--generations", type=int, default=2, help="rollouts per prompt (default: 2)")
    parser.add_argument("--max-completion-length", type=int, default=32, help="tokens per completion (default: 32)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--out", default=None, help="TRL's output folder (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.generations < 2:
        parser.error("--steps must be at least 1 and --generations at least 2 (GRPO compares rollouts)")
    from pddlworlds.training.trl_grpo import grpo_example

    with tempfile.TemporaryDirectory(prefix="pddlworlds-grpo-") as tmp:
        report = grpo_example(
            args.out or tmp, steps=args.steps, problems=tuple(args.problems.split(",")),
            generations=args.generations, max_completion_length=args.max_completion_length, threads=args.threads,
        )
    for i, (seconds, reward) in enumerate(zip(report.seconds_per_step, report.logged_rewards, strict=False), 1):
        print(f"step {i}: {seconds:.1f} s, reward logged by TRL {reward:.4f}")
    mean = sum(report.last_env_rewards) / len(report.last_env_rewards)
    print(f"last step's rollouts: get_reward() {report.last_env_rewards} (mean {mean:.4f}) on {report.problems}")
    print(f"seconds per GRPO step: {sum(report.seconds_per_step) / len(report.seconds_per_step):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
