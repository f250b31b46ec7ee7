"""`pddlworlds eval`, `pddlworlds report` and `pddlworlds compare`.

    pddlworlds eval --out runs/quick
        HiAgent and STANDARD on the embedded model, the default small subset of every domain
    pddlworlds eval --agents hiagent,standard --domains all --split agentboard \\
        --llm openai:gpt-4o-mini --base-url http://127.0.0.1:8000/v1 --limit 5 --workers 4 --out runs/gpt
    pddlworlds report runs/gpt
    pddlworlds compare runs/new runs/old --json comparison.json

Running `eval` again with the same options and `--out` resumes a stopped run. This module imports only
the standard library and light names at import time: the main CLI builds its parser for every command.
What the options mean (the plan, the memory) is `options`.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import sys
from pathlib import Path
from typing import Any

from ..artefacts.runs import EPISODES_FILE, ERRORS_FILE, PACKED_EPISODES_FILE, REPORT_FILE
from ..printable import printable
from ..tables import add_format_option
from ..worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS, DEFAULT_SPLIT
from ..worlds.profiles import DEFAULT_PROFILE
from .options import DEFAULT_AGENTS, DEFAULT_LIMIT, build_plan, trial_memory

__all__ = ["add_eval_parsers", "cmd_compare", "cmd_eval", "cmd_report", "main"]


def cmd_eval(args: argparse.Namespace) -> int:
    """Run (or resume) an evaluation, then write the report and print the main table. SIGTERM stops it as
    Ctrl-C does (`processes.signals_interrupt`): finished episodes kept, workers ended, exit 130."""
    from ..processes import signals_interrupt

    with signals_interrupt("pddlworlds eval"):
        try:
            return _eval(args)
        except KeyboardInterrupt:  # before or after the episodes played (those are stopped in `play`)
            print("pddlworlds eval: interrupted; run the same command again to resume", file=sys.stderr)
            return 130


def _eval(args: argparse.Namespace) -> int:
    from ..reports.analysis import RunAnalysis, load_analysis
    from ..reports.report import write_report
    from ..reports.report_tables import print_main_table
    from .errors import RunStopped
    from .runner import run_evaluation
    from .store import path_problem

    try:
        plan = build_plan(args)
        episodes = plan.episodes()
        print(
            f"pddlworlds eval: {len(plan.agents)} agent(s) x {sum(len(p) for p in plan.problems.values())} "
            f"problem(s) x {len(plan.seeds)} seed(s) = {len(episodes)} episodes -> {args.out}",
            file=sys.stderr,
        )
        memory = trial_memory(args)
        if args.trials != 1 or memory is not None:
            from .trials import cmd_trials

            return cmd_trials(args, plan, memory)
        result = run_evaluation(
            plan, args.out, workers=args.workers, executor=args.executor, progress=not args.no_progress,
            baseline_timeout=args.optimal_timeout if args.optimal_timeout > 0 else None,
        )
    except RunStopped as exc:  # stopped mid-run: what finished is stored
        print(f"pddlworlds eval: error: {exc}", file=sys.stderr)
        if args.format != "table":  # a program still gets the rows of what is stored (or the header)
            with contextlib.suppress(ValueError, OSError):
                print_main_table(args.out, analysis=load_analysis(args.out), fmt=args.format)
        return 1
    except ValueError as exc:  # EvaluationError included: refused before anything ran
        print(f"pddlworlds eval: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the output folder: read-only, full, a file in the way
        print(f"pddlworlds eval: error: {path_problem(exc, Path(args.out))}", file=sys.stderr)
        return 1
    if result.skipped:
        print(printable(f"note: {result.out}/{EPISODES_FILE} had {result.skipped}; they were skipped"), file=sys.stderr)
    if result.lines or args.format != "table":  # CSV and JSON are printed even with no episode: a header
        try:
            analysis = load_analysis(result.out) if result.lines else RunAnalysis(result.config, [], None)
            path = write_report(result.out, analysis=analysis) if result.lines and not args.no_report else None
        except OSError as exc:
            print(f"pddlworlds eval: error: {path_problem(exc, Path(args.out))}", file=sys.stderr)
            return 1
        print_main_table(result.out, analysis=analysis, fmt=args.format)
        if path is not None:
            print(f"report: {printable(path)}", file=sys.stdout if args.format == "table" else sys.stderr)
    status = f"{len(result.lines)}/{result.planned} episodes stored ({result.new} new"
    status += f", {result.rerun} of them re-run after a fault)" if result.rerun else ")"
    if result.interrupted:
        print(f"interrupted; {status}. Run the same command again to resume.", file=sys.stderr)
        return 130
    errored = result.errored
    if errored:
        print(_fault_list(errored, result.out), file=sys.stderr)
        print(status, file=sys.stderr)
        return 1
    if result.failures:
        print(
            f"{len(result.failures)} episode(s) failed (see {result.out}/{ERRORS_FILE}); {status}. "
            "Run the same command again to retry them.",
            file=sys.stderr,
        )
        return 1
    print(status, file=sys.stderr)
    return 0


def _fault_list(errored: list[dict[str, Any]], out: Any, shown: int = 20) -> str:
    """The episodes stopped by an endpoint fault, and how to re-run them."""
    lines = [f"{len(errored)} episode(s) stopped by a fault of the model endpoint, left out of every score:"]
    for line in errored[:shown]:
        fault = line.get("error")
        what = f"{fault.get('kind')}: {fault.get('message')}" if isinstance(fault, dict) else str(fault)
        where = f"{line['agent']} {line['domain']}/{line['problem']} seed {line.get('seed')}"
        lines.append(f"  {printable(where)}: {printable(what)}")  # stored text: no escape sequence runs
    if len(errored) > shown:
        lines.append(f"  ... and {len(errored) - shown} more (see {out}/{REPORT_FILE})")
    lines.append(
        "Fix the endpoint (or raise --request-timeout / --call-deadline), then run the same command again: "
        "it re-runs these episodes, and only these."
    )
    return "\n".join(lines)


def cmd_report(args: argparse.Namespace) -> int:
    from ..reports.analysis import load_analysis
    from ..reports.report import write_report
    from ..reports.report_tables import print_main_table
    from .store import path_problem

    try:
        analysis = load_analysis(args.out)
        path = write_report(args.out, plots=not args.no_plots, analysis=analysis)
    except ValueError as exc:
        print(f"pddlworlds report: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"pddlworlds report: error: {path_problem(exc, Path(args.out))}", file=sys.stderr)
        return 1
    data = analysis.data
    if data and data.get("skipped"):
        print(printable(f"note: {args.out}/{EPISODES_FILE} had {data['skipped']}; they were skipped"), file=sys.stderr)
    print_main_table(args.out, analysis=analysis, fmt=args.format)
    print(f"report: {printable(path)}", file=sys.stdout if args.format == "table" else sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """Two runs paired episode by episode: the table on stdout, what was left out on stderr, and the figures
    in `--json` (written after the table is shown, so a path that cannot be written loses nothing)."""
    import json

    from ..files import atomic_write
    from ..reports.comparison import compare_runs, comparison_table
    from .store import path_problem

    try:
        comparison = compare_runs(args.run, args.other, args.across)
    except ValueError as exc:  # RunFolderError and PairingError: one line naming the file or the runs
        print(printable(f"pddlworlds compare: error: {exc}"), file=sys.stderr)
        return 2
    print(comparison_table(comparison))
    for note in comparison.notes():
        print(printable(f"note: {note}"), file=sys.stderr)
    if args.json:
        try:
            atomic_write(args.json, json.dumps(comparison.to_json(), indent=2) + "\n")
        except OSError as exc:
            print(f"pddlworlds compare: error: {path_problem(exc, Path(args.json))}", file=sys.stderr)
            return 1
    return 0


class _DeprecatedExecutor(argparse.Action):
    """`--backend local|ray`: the old spelling of `--executor`; still works, with a note."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option: Any = None) -> None:
        print("note: --backend is now --executor (--llm names the model backend)", file=sys.stderr)
        setattr(namespace, self.dest, values)


def _llm_help() -> str:
    from ..llm import BACKENDS

    return "; ".join(f"{b.usage}: {b.help}" for b in BACKENDS.values())


def _add_insight_options(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("cross-trial insight memory")
    group.add_argument(
        "--insights",
        default=None,
        metavar="PATH",
        help="insight store (JSON): read before the first trial (created if missing), updated after each one",
    )
    group.add_argument(
        "--insight-mode", default="pair", help="experiences to learn from: pair (default) or success"
    )
    group.add_argument("--insight-cap", type=int, default=None, help="rules kept per scale (default: 10)")
    group.add_argument(
        "--insight-limit", type=int, default=None, help="rules shown per episode (default: all that apply)"
    )
    group.add_argument(
        "--insight-embedding",
        default=None,
        metavar="KIND:MODEL",
        help="rank rules by similarity to the goal, e.g. transformers:PATH (needs torch and transformers)",
    )


def add_eval_parsers(subparsers: Any) -> None:
    """Add `eval`, `report` and `compare` to the main CLI's subparsers."""
    p = subparsers.add_parser(
        "eval",
        help="evaluate agents over domains and problems (resumable)",
        description="Play every (agent, problem, seed) episode and store one JSON line per episode in "
        f"OUT/{EPISODES_FILE}. The same command with the same --out resumes a stopped run. Without --limit "
        f"or --problems, each domain contributes its {DEFAULT_LIMIT} problem(s) with the shortest optimal plan: "
        "the quick default run.",
    )
    p.add_argument(
        "--agents",
        default=DEFAULT_AGENTS,
        help=f"comma-separated agent names, 'all', or package.module:factory (default: {DEFAULT_AGENTS})",
    )
    p.add_argument("--domains", default="all", help="comma-separated domain names, or 'all' (default)")
    p.add_argument("--domains-root", default=None, metavar="DIR",
                   help="play the domain folders under DIR (laid out as pddl_domains/: domain.pddl, optional "
                   "text.toml, problems/SPLIT/*.pddl) instead of the shipped ones; recorded in config.json")
    p.add_argument("--optimal-timeout", type=float, default=60.0, metavar="S",
                   help="with --domains-root: seconds fd-opt gets per problem, at the start, for the optimal plan "
                   "the report compares against (kept in OUT/optimal_plans.csv; 0: none; default 60)")
    p.add_argument("--split", default=DEFAULT_SPLIT, help=f"problem split (default: {DEFAULT_SPLIT})")
    p.add_argument(
        "--llm", default="embedded", help=f"the model, NAME or NAME:ARG (default: embedded): {_llm_help()}"
    )
    p.add_argument(
        "--lora", default=None, metavar="ADAPTER.gguf|none",
        help="a llama.cpp LoRA adapter for the embedded model (made by `pddlworlds train`); default: the "
        "adapter shipped in models/ for the setting played, on the default model; 'none': the plain base model",
    )
    p.add_argument("--base-url", default=None, help="OpenAI-compatible server for --llm openai:MODEL")
    p.add_argument("--api-key", default=None, help="API key (default: $OPENAI_API_KEY); never stored")
    p.add_argument(
        "--request-timeout",
        type=float,
        default=None,
        help="seconds a server has to answer one HTTP attempt (default: 60); the client retries after it",
    )
    p.add_argument(
        "--call-deadline",
        type=float,
        default=None,
        help="seconds one model call may take in all, retries included (default: (retries + 1) x timeout + 30)",
    )
    p.add_argument(
        "--max-steps",
        type=int,
        default=None,
        help=f"step budget per episode (default: each problem's own: {DEFAULT_MAX_EPISODE_STEPS}, or on a catalogue "
             "ladder its band's, easy 30, medium 50, hard 80)",
    )
    p.add_argument(
        "--out", default=f"runs/{_dt.date.today().isoformat()}", help="run folder (default: runs/<today>)"
    )
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        help="first N problems per domain (default: the "
        f"{DEFAULT_LIMIT} with the shortest optimal plan, unless --problems is given)",
    )
    p.add_argument("--problems", default=None, help="comma-separated problem names (or domain:name)")
    p.add_argument("--seeds", default="0", help="seeds: 0 (default), 0,1,2 or 0-4")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="episodes played at once (default: a process per "
        "core, at most 8, for the embedded model; 4 threads for a server; 1 without a model)",
    )
    p.add_argument(
        "--executor", default="local", choices=["local", "ray"], help="where episodes run (default: local)"
    )
    p.add_argument(  # the old name, from when "backend" also meant the model; kept working, not shown
        "--backend",
        dest="executor",
        choices=["local", "ray"],
        action=_DeprecatedExecutor,
        help=argparse.SUPPRESS,
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-report", action="store_true", help="do not write report.md at the end")
    p.add_argument("--allow-impossible", action="store_true",
                   help="offer the `impossible` action (on by itself for splits with unsolvable problems)")
    p.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help="whose text and scoring the environments use: pddlworlds (default) or agentboard "
        "(AgentBoard's wording, messages, parsing and progress rule; the report adds its pooled scores)",
    )
    p.add_argument(
        "--prompt-file",
        metavar="PATH",
        help="an AgentBoard PDDL prompt file (JSON: per domain system_msg, instruction, examples): STANDARD "
        "then assembles its prompt as AgentBoard's own agent does (stop newline, 100 new tokens); its "
        "sha256 is kept in the run configuration",
    )
    p.add_argument(
        "--setting", metavar="NAME",
        help="what the LLM agents play in (default: state-choice-subgoals for the embedded model with its shipped "
        "adapter in the default profile, free otherwise): free (the model writes its actions, each domain's default "
        "observations), admissible (it picks the valid action whose reply is most probable), state-choice (the "
        "full state after every action; it picks among the legal actions by a length-normalised score), "
        "state-choice-compact (the same game, each call written as facts: goal, state, candidates and the "
        "history one line a step, for a model trained in that form), state-choice-diffs (the compact form with "
        "the start state once and each step's changes: a call adds one line to the last), state-choice-subgoals "
        "(state-choice-diffs with HiAgent's subgoal picked among the goal conditions not yet true that no other "
        "open one comes before, and folded by "
        "the world; -taught: summarised by the model). admissible and the "
        "state-choice settings "
        "need the embedded model and are not comparable with published numbers",
    )
    p.add_argument(  # the older spelling of --setting free|admissible
        "--decoding", choices=["free", "admissible"], help="the older spelling of --setting free|admissible",
    )
    p.add_argument(
        "--choice-score", metavar="RULE",
        help="how a choosing setting ranks candidates, instead of the setting's own rule: sum (summed "
        "log-probability), token-mean (per token), word-mean (per word); recorded in the configuration",
    )
    p.add_argument(
        "--score-all-candidates", action="store_true",
        help="in a choosing setting, score every candidate whole (the same picks, slower): the record then "
        "holds each candidate's log-probability, so another ranking rule can be replayed on it "
        "(scripts/choice_agreement.py); by default scoring stops once the pick is decided",
    )
    p.add_argument(
        "--observation-mode", choices=["full", "fluents", "changes"],
        help="what the environment shows after an action: every fact, every fact an action can change, or "
        "what changed (default: the setting's, else each domain's: full in Blocksworld and Gripper, changes in "
        "Tyreworld and Barman)",
    )
    p.add_argument("--trials", type=int, default=1, help="play the problem set N times (default: 1)")
    add_format_option(p, "the results table at the end")
    _add_insight_options(p)
    p.set_defaults(func=cmd_eval)

    p = subparsers.add_parser(
        "report",
        help="write OUT/report.md and plots for a run folder",
        description="Tables (paper's Table 1 layout, with the paper's numbers on the agentboard split), "
        "plots of progress and executability per step, and Wilcoxon tests between agents.",
    )
    p.add_argument("out", help="run folder written by `pddlworlds eval`")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    add_format_option(p, "the results table")
    p.set_defaults(func=cmd_report)

    p = subparsers.add_parser(
        "compare",
        help="two runs paired episode by episode, with McNemar's and Wilcoxon's tests",
        description="Pair each episode of RUN_A with the same episode of RUN_B (agent, domain, split, problem, "
        "seed; faulted ones left out) and give per agent and domain each run's SR and PR, the episodes only one "
        "solves with McNemar's exact p-value, and the Wilcoxon signed-rank p-value of progress. Gzipped runs "
        f"({PACKED_EPISODES_FILE}) are read too. Only runs played under the same conditions are paired: step "
        "budget, profile, setting, and domain files by content; otherwise the comparison is refused, saying what "
        "differs.",
    )
    p.add_argument("run", type=Path, help="run folder A (`pddlworlds eval --out A`)")
    p.add_argument("other", type=Path, nargs="+", help="run folder(s) B; several are read as one run")
    p.add_argument("--json", type=Path, help="also write the comparison here")
    p.add_argument("--across", action="append", default=[], choices=["setting"],
                   help="pair runs played in different settings, when that difference is what is compared (the "
                   "step budget, profile and domain files must match whatever is given)")
    p.set_defaults(func=cmd_compare)


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (`python -m pddlworlds.evaluation.cli eval ...`)."""

    parser = argparse.ArgumentParser(prog="pddlworlds")
    sub = parser.add_subparsers(dest="command", required=True)
    add_eval_parsers(sub)
    args = parser.parse_args(argv)
    from ..worlds.pddl import ignore_normalisation_warnings

    ignore_normalisation_warnings()
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
