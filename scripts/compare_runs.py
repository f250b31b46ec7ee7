#!/usr/bin/env python3
"""Two evaluation runs side by side, problem by problem: whether a change (a setting, an adapter) is more
than chance on the same problems.

Episodes of `pddlworlds eval --out A` and `--out B` are paired by (agent, domain, problem) (faulted
episodes left out); per agent and domain, per agent over all domains and over everything: each run's SR
and PR, the problems only one of them solves with McNemar's exact p-value, and the Wilcoxon signed-rank
p-value of progress (`training.validation.compare`, the same tests the held-out comparisons use). A run
folder whose episodes file is stored gzipped (as under docs/results/) is read too.

    python scripts/compare_runs.py runs/new docs/results/agentboard-v1 docs/results/agentboard-v1-barman
    python scripts/compare_runs.py runs/new runs/old --json comparison.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path
from typing import Any


def episodes_of(folder: Path) -> list[dict[str, Any]]:
    """The scored episodes of a run folder as rows of (agent, domain, problem, success, progress)."""
    from pddlworlds.artefacts.runs import CONFIG_FILE, EPISODES_FILE, is_errored, read_run

    packed = folder / f"{EPISODES_FILE}.gz"
    if not (folder / EPISODES_FILE).is_file() and packed.is_file():
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / EPISODES_FILE).write_bytes(gzip.decompress(packed.read_bytes()))
            if (folder / CONFIG_FILE).is_file():
                (Path(tmp) / CONFIG_FILE).write_bytes((folder / CONFIG_FILE).read_bytes())
            return episodes_of(Path(tmp))
    run = read_run(folder)
    return [
        {"agent": line["agent"], "domain": line["domain"], "problem": line["problem"],
         "success": bool(line["success"]), "progress": float(line["progress"])}
        for line in run.lines if not is_errored(line)
    ]


def table(comparison: dict[str, dict[str, Any]], names: tuple[str, str]) -> str:
    a, b = names
    lines = [f"| agent/domain | pairs | SR % {a} | SR % {b} | only {a} | only {b} | McNemar p | PR % {a} | PR % {b} | Wilcoxon p |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key, f in comparison.items():
        lines.append(
            f"| {key} | {f['pairs']} | {f['sr_a']} | {f['sr_b']} | {f['solved_only_a']} | {f['solved_only_b']} | "
            f"{_p(f['sr_p'])} | {f['pr_a']} | {f['pr_b']} | {_p(f['pr_p'])} |"
        )
    return "\n".join(lines)


def _p(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="run folder A (`pddlworlds eval --out A`)")
    parser.add_argument("other", type=Path, nargs="+", help="run folder(s) B; several are read as one run")
    parser.add_argument("--json", type=Path, help="also write the comparison here")
    args = parser.parse_args(argv)
    from pddlworlds.artefacts.runs import RunFolderError
    from pddlworlds.training.validation import compare

    try:
        mine = episodes_of(args.run)
        other = [row for folder in args.other for row in episodes_of(folder)]
        comparison = compare(mine, other)
    except (RunFolderError, ValueError, OSError) as exc:
        print(f"compare_runs: error: {exc}", file=sys.stderr)
        return 2
    names = (args.run.name, "+".join(f.name for f in args.other))
    print(table(comparison, names))
    if args.json:
        args.json.write_text(json.dumps({"runs": [str(args.run), [str(f) for f in args.other]],
                                         "figures": comparison}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
