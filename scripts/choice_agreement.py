#!/usr/bin/env python3
"""How often each ranking rule picks an optimal action, at the very states an agent reached.

A run of a setting that chooses (`scripts/validate_adapter.py --setting state-choice`) stores, for every
step, each candidate's summed log-probability and tokens. This replays each episode on its held-out
problem, and at every step asks the planner (`training.expert.StateExpert`: breadth-first search, else
Fast Downward, from the state) whether the action each rule would have picked there (`agents.admissible.
CHOICE_SCORES`: sum, token-mean, word-mean) starts an optimal plan from it: its successor's optimal
distance is one less. The played rule's picks are the episode's own actions; the others are what that rule
would have picked at the same states (what it would have done afterwards is not played). One run thus
compares the rules on equal footing; the SR and PR of a rule need a run with it.

    python scripts/choice_agreement.py /work/train/heldout/pl5-v1-token-mean.json   # its .run/ folder
    python scripts/choice_agreement.py runs/heldout-sc      # a run folder of `pddlworlds eval --setting state-choice`
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any


def _distance(expert: Any, state: int) -> int | None:
    plan = expert.plan_from(state)
    return None if plan is None else len(plan)


def _run_rows(folder: Path) -> tuple[list[dict[str, Any]], str | None]:
    """An eval run folder's episodes as validate_adapter's rows: each step's action and the candidates its
    choice scored (from the step's calls), the problem named by its split; and the run's folder of domains
    (None: the shipped ones; validate_adapter's runs lay their held-out problems out in one)."""
    from pddlworlds.artefacts.runs import is_errored, read_run
    from pddlworlds.records import EpisodeRecord
    from pddlworlds.training.validation import scored_candidates

    rows = []
    run = read_run(folder)
    for line in run.lines:
        if is_errored(line):
            continue
        record = EpisodeRecord.from_stored(line, source=folder)
        rows.append({"agent": record.agent, "domain": record.domain, "split": record.split,
                     "problem": record.problem, "actions": [s.action for s in record.trajectory],
                     "candidates": [scored_candidates(s) for s in record.trajectory]})
    return rows, run.config.get("domains_root")


def _text_of(path: Path) -> str:
    """A file's text; ValueError naming it when it cannot be read or is not text (a gzip: give the run
    folder that holds it, which is read whole)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if data[:2] == b"\x1f\x8b":
        raise ValueError(f"{path}: a gzip file; give the run folder that holds it (read gzipped) or unpack it")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); a damaged file?") from None


def _json_of(path: Path, text: str | None = None, line: int | None = None) -> Any:
    """JSON from a file (or one of its lines); ValueError naming the file and line when it is not JSON."""
    try:
        return json.loads(_text_of(path) if text is None else text)
    except json.JSONDecodeError as exc:
        where = f"{path}, line {line}" if line is not None else str(path)
        raise ValueError(f"{where}: not valid JSON ({exc.msg}); a torn or damaged file?") from None


def _unwritable(path: Path) -> str | None:
    """Why `--json PATH` cannot be written, found before minutes of replay (None: no reason known yet)."""
    if path.is_dir():
        return f"cannot write {path}: it is a folder"
    folder = next((p for p in path.parents if p.exists()), Path("."))
    if not folder.is_dir():
        return f"cannot write {path}: {folder} is a file, not a folder"
    if not os.access(folder, os.W_OK):
        return f"cannot write {path}: {folder} is not writable"
    return None


def analyse(figures_path: Path, held_out_set: str | None = None) -> dict[str, dict[str, Any]]:
    """Per `agent/domain` and `agent/all`: steps judged, and per rule the share of optimal picks."""
    from pddlworlds.agents.admissible import CHOICE_SCORES
    from pddlworlds.registration import make_env
    from pddlworlds.training.expert import StateExpert
    from pddlworlds.training.problems import held_out_problems
    from pddlworlds.worlds.catalogue import get_domain

    run = figures_path.with_name(figures_path.name + ".run")  # validate_adapter's run folder beside its figures
    root = None
    if figures_path.is_dir() or run.is_dir():
        source = figures_path if figures_path.is_dir() else run
        rows, root = _run_rows(source)
    else:  # the older validate_adapter's episode file
        figures = _json_of(figures_path) if figures_path.is_file() else {}  # absent until a run ends
        if not isinstance(figures, dict):
            raise ValueError(f"{figures_path}: not the figures validate_adapter.py writes (a JSON object)")
        held_out_set = held_out_set or figures.get("held_out_set", "standard")
        source = figures_path.with_name(figures_path.name + ".episodes.jsonl")
        rows = [_json_of(source, line, number) for number, line in enumerate(_text_of(source).splitlines(), 1)
                if line.strip()]
    rows = [r for r in rows if any(r.get("candidates") or [])]
    if not rows:
        raise ValueError(f"{source}: no episode recorded every candidate's log-probability (a run of a setting "
                         "that chooses, with eval --score-all-candidates)")
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    with tempfile.TemporaryDirectory() as tmp:
        problems = {(p.domain, p.name): p.path for p in held_out_problems(
            tmp, sorted({r["domain"] for r in rows if "split" not in r}), held_out_set or "standard")
        } if any("split" not in r for r in rows) else {}
        for row in rows:
            d = get_domain(row["domain"], root)
            path = d.problem_file(row["problem"], row["split"]) if "split" in row else problems[(row["domain"], row["problem"])]
            env = make_env(d.domain_file, path, text_file=d.text_file, max_episode_steps=None)
            env.reset()
            world = env.unwrapped.world
            expert = StateExpert(world, Path(d.domain_file), path, d.text_file, timeout=60)
            index = {world.action_text(i): i for i in range(len(world.task.actions))}
            for action, candidates in zip(row["actions"], row["candidates"]):
                if not candidates:  # written, or its choice stopped at the pick (bounds): nothing to replay
                    env.step(action)
                    continue
                state = env.unwrapped.state
                here = _distance(expert, state)
                for key in (f"{row['agent']}/{row['domain']}", f"{row['agent']}/all"):
                    counts[key]["steps"] += 1
                for rule, score in CHOICE_SCORES.items():
                    if here is None:
                        continue
                    pick = max(range(len(candidates)),
                               key=lambda i: (score(candidates[i][1], candidates[i][2], f" {candidates[i][0]}\n"), -i))
                    chosen = candidates[pick][0]
                    if chosen not in index:  # a meta-action (retrieve(k)): no step towards the goal
                        continue
                    after = world.task.apply(state, index[chosen])
                    there = _distance(expert, after)
                    optimal = there is not None and there == here - 1
                    for key in (f"{row['agent']}/{row['domain']}", f"{row['agent']}/all"):
                        counts[key][rule] += int(optimal)
                env.step(action)
            env.close()
    rules = list(CHOICE_SCORES)
    return {key: {"steps": c["steps"], **{r: round(100.0 * c[r] / c["steps"], 1) if c["steps"] else None for r in rules}}
            for key, c in sorted(counts.items())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("figures", type=Path, help="OUT.json of validate_adapter.py (episodes in OUT.json.run/, or an "
                        "older OUT.json.episodes.jsonl), "
                        "or a run folder of `pddlworlds eval` in a setting that chooses")
    parser.add_argument("--set", dest="held_out_set", default=None,
                        help="the held-out set the episodes were played on (default: as OUT.json says, else standard)")
    parser.add_argument("--json", type=Path, help="also write the shares here")
    args = parser.parse_args(argv)
    from pddlworlds.worlds.pddl import ignore_normalisation_warnings

    ignore_normalisation_warnings()
    if args.json and (problem := _unwritable(args.json)):
        print(f"choice_agreement: error: --json: {problem}", file=sys.stderr)
        return 2
    try:
        result = analyse(args.figures, args.held_out_set)
    except (OSError, ValueError) as exc:  # RunFolderError names the file (a damaged gzip as such)
        print(f"choice_agreement: error: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:
        print(f"choice_agreement: error: {args.figures}: {exc} not found (an episode's field, or its problem in "
              "the held-out set --set names)", file=sys.stderr)
        return 2
    rules = [k for k in next(iter(result.values())) if k != "steps"]
    print("| agent/domain | steps | " + " | ".join(f"optimal picks % ({r})" for r in rules) + " |")
    print("|---|---:|" + "---:|" * len(rules))
    for key, f in result.items():
        print(f"| {key} | {f['steps']} | " + " | ".join(str(f[r]) for r in rules) + " |")
    if args.json:  # the table is shown first: a path that fails now loses nothing
        from pddlworlds.evaluation.store import path_problem
        from pddlworlds.files import atomic_write

        try:
            atomic_write(args.json, json.dumps(result, indent=2) + "\n")
        except OSError as exc:
            print(f"choice_agreement: error: {path_problem(exc, args.json)}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
