#!/usr/bin/env python3
"""Print an agent's working memory from a run: what its prompt held at one step of one episode.

    python scripts/show_memory.py runs/x --agent hiagent --domain gripper --problem prob06 [--step N]

Without --step: the last step. Also lists the episode's subgoals with their summaries (HiAgent's
`memory` entries), so one can see the finished subgoals folded into a line each.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pddlworlds.artefacts.runs import EPISODES_FILE, read_episodes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help=f"run folder (with its {EPISODES_FILE})")
    parser.add_argument("--agent", required=True)
    parser.add_argument("--domain", required=True)
    parser.add_argument("--problem", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--step", type=int, default=None, help="1-based step (default: the last)")
    args = parser.parse_args(argv)
    path = args.run / EPISODES_FILE
    for episode in read_episodes(path).episodes:
        record = episode.record
        if (record.agent, record.domain, record.problem, record.seed) != (
            args.agent, args.domain, args.problem, args.seed
        ):
            continue
        if not record.trajectory:
            print(f"{path}:{episode.number}: the episode has no steps", file=sys.stderr)
            return 1
        index = (args.step or len(record.trajectory)) - 1
        if not 0 <= index < len(record.trajectory):
            print(f"--step {args.step}: the episode has {len(record.trajectory)} steps", file=sys.stderr)
            return 2
        step = record.trajectory[index]
        print(f"# {record.agent} on {record.domain} {record.problem}: success={record.success}, "
              f"steps={record.steps}, progress={record.progress:.2f}")
        for entry in record.memory:
            print(f"- subgoal {entry.get('index')}: {entry.get('subgoal')!r} -> {entry.get('summary')!r}")
        print(f"\n# memory sent with the action of step {step.index} ({step.context_tokens} in-trial context tokens)")
        print(step.memory_view or "")
        if step.raw_output is not None:
            print(f"\n# reply\n{step.raw_output}")
        return 0
    print(f"{path}: no episode {args.agent} / {args.domain} / {args.problem} / seed {args.seed}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
