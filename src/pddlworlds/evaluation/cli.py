"""`pddlworlds eval` and `pddlworlds report`.

    pddlworlds eval --out runs/quick
        HiAgent and STANDARD on the embedded model, the default small subset of every domain
    pddlworlds eval --agents hiagent,standard --domains all --split agentboard \\
        --llm openai:gpt-4o-mini --base-url http://127.0.0.1:8000/v1 --limit 5 --workers 4 --out runs/gpt
    pddlworlds report runs/gpt

Running `eval` again with the same options and `--out` resumes a stopped run. This module imports only
the standard library at import time: the main CLI builds its parser for every command.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_AGENTS",
    "DEFAULT_LIMIT",
    "add_eval_parsers",
    "add_parsers",
    "build_plan",
    "cmd_eval",
    "cmd_report",
    "main",
    "parse_seeds",
    "select_problems",
    "smallest_problems",
]

DEFAULT_AGENTS = "hiagent,standard"
#: Problems per domain when neither --limit nor --problems is given (the quick default run): the
#: DEFAULT_LIMIT problems with the shortest optimal plan.
DEFAULT_LIMIT = 1


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def parse_seeds(text: str) -> list[int]:
    """`0`, `0,1,2` or `0-4` (non-negative integers)."""
    seeds: list[int] = []
    try:
        for part in _csv(text):
            lo, dash, hi = part.partition("-")
            seeds.extend(range(int(lo), int(hi) + 1) if dash else [int(part)])
    except ValueError:
        raise ValueError(f"--seeds takes integers like 0, 0,1,2 or 0-4, not {text!r}") from None
    if not seeds:
        raise ValueError(f"--seeds gives no seed: {text!r}")
    return list(dict.fromkeys(seeds))


def select_problems(
    domain_names: list[str], split: str, problems: list[str] | None, limit: int | None
) -> dict[str, list[str]]:
    """Domain -> problems to play. `problems` items are names (`p01`, applied to every domain that has
    one of that name) or `domain:name`; `limit` keeps the first N of each domain (in natural order)."""
    from ..worlds.catalogue import get_domain

    available = {d: get_domain(d).problems(split) for d in domain_names}
    if problems is None:
        chosen = {d: list(names) for d, names in available.items()}
    else:
        chosen = {d: [] for d in domain_names}
        for item in problems:
            if ":" in item:
                domain, _, name = item.partition(":")
                domain = domain.strip().lower()
                if domain not in available:
                    raise ValueError(
                        f"--problems {item!r}: domain {domain!r} is not among --domains ({', '.join(domain_names)})"
                    )
                if name not in available[domain]:
                    raise ValueError(
                        f"unknown problem {name!r} in {domain}/{split}; problems: {', '.join(available[domain])}"
                    )
                pairs = [(domain, name)]
            else:
                pairs = [(d, item) for d in domain_names if item in available[d]]
                if not pairs:
                    listing = "; ".join(f"{d}: {', '.join(available[d])}" for d in domain_names)
                    raise ValueError(f"unknown problem {item!r} in split {split!r}; problems: {listing}")
            for d, name in pairs:
                if name not in chosen[d]:
                    chosen[d].append(name)
        chosen = {d: names for d, names in chosen.items() if names}
    if limit is not None:
        if limit < 1:
            raise ValueError("--limit must be at least 1")
        chosen = {d: names[:limit] for d, names in chosen.items()}
    return chosen


def smallest_problems(domain_names: list[str], split: str, n: int = DEFAULT_LIMIT) -> dict[str, list[str]]:
    """The `n` problems of each domain with the shortest stored optimal plan (natural order on ties; problems
    without a stored length come last): the quick default run."""
    from ..worlds.catalogue import get_domain
    from ..artefacts.plans import optimal_lengths

    chosen = {}
    for d in domain_names:
        names = get_domain(d).problems(split)
        lengths = optimal_lengths(d, split)
        ranked = sorted(
            range(len(names)), key=lambda i: (names[i] not in lengths, lengths.get(names[i], 0), i)
        )
        chosen[d] = [names[i] for i in ranked[:n]]
    return chosen


def build_plan(args: argparse.Namespace) -> Any:
    """A `RunPlan` from the parsed options; every name is checked here, before anything loads or runs."""
    from ..worlds.catalogue import domains as all_domains
    from ..llm import NO_ADAPTER
    from .spec import RunPlan, agent_names, parse_llm, resolve_agent

    agents = _csv(args.agents)
    if agents == ["all"]:
        agents = agent_names()
    if not agents:
        raise ValueError("--agents is empty")
    decoding = getattr(args, "decoding", None) or "free"
    for agent in agents:
        resolve_agent(agent, getattr(args, "prompt_file", None), decoding)
    agents = list(dict.fromkeys(agents))
    from ..worlds.profiles import get_profile

    profile = get_profile(getattr(args, "profile", None) or "pddlworlds").name  # unknown names fail here
    prompt_file = getattr(args, "prompt_file", None)
    if prompt_file is not None:
        from ..agents.agentboard import load_prompt_file

        load_prompt_file(prompt_file)  # a missing or malformed file fails here, naming what is wrong
        prompt_file = str(Path(prompt_file).resolve())

    known = list(all_domains())
    wanted = _csv(args.domains.lower())
    if wanted == ["all"]:
        wanted = known
    unknown = [d for d in wanted if d not in known]
    if unknown:
        raise ValueError(
            f"unknown domain(s) {', '.join(map(repr, unknown))}; domains: {', '.join(known)}, or all"
        )
    wanted = list(dict.fromkeys(wanted))

    backend = parse_llm(
        args.llm,
        args.base_url,
        args.api_key,
        request_timeout=getattr(args, "request_timeout", None),
        call_deadline=getattr(args, "call_deadline", None),
    )
    if getattr(args, "lora", None):
        if backend.backend is None or not backend.backend.takes_lora:
            raise ValueError(f"--lora needs a model backend that takes an adapter, not --llm {args.llm}")
        if args.lora == NO_ADAPTER:
            backend = dataclasses.replace(backend, lora=NO_ADAPTER)
        elif not Path(args.lora).is_file():
            raise ValueError(f"--lora: adapter file not found: {args.lora}")
        else:
            backend = dataclasses.replace(backend, lora=str(Path(args.lora).resolve()))
    if decoding != "free" and (backend.backend is None or not backend.backend.scores_candidates):
        raise ValueError(f"--decoding {decoding} needs a backend that scores given texts (embedded), not --llm {args.llm}")
    problems = _csv(args.problems) if args.problems else None
    from ..artefacts.proofs import split_unsolvable

    unsolvable = {d: split_unsolvable(d, args.split) for d in wanted}
    if problems is None and args.limit is None and any(unsolvable.values()):
        selected = select_problems(wanted, args.split, None, None)  # a share of unsolvable ones needs them all
        print(f"note: split {args.split!r} has unsolvable problems; playing all of them", file=sys.stderr)
    elif problems is None and args.limit is None:
        selected = smallest_problems(wanted, args.split)
    else:
        selected = select_problems(wanted, args.split, problems, args.limit)
    if problems is not None:
        left_out = [d for d in wanted if d not in selected]
        if left_out:
            print(
                f"note: no problem named in --problems exists in {', '.join(left_out)}; leaving them out",
                file=sys.stderr,
            )
    if args.max_steps < 1:
        raise ValueError("--max-steps must be at least 1")
    return RunPlan(
        agents=agents,
        problems=selected,
        split=args.split,
        seeds=parse_seeds(args.seeds),
        max_steps=args.max_steps,
        backend=backend,
        allow_impossible=bool(getattr(args, "allow_impossible", False) or any(unsolvable.values())),
        profile=profile,
        prompt_file=prompt_file,
        decoding=decoding,
    )


def cmd_eval(args: argparse.Namespace) -> int:
    """Run (or resume) an evaluation, then write the report and print the main table."""
    from .errors import RunStopped
    from .report import load_analysis, print_main_table, write_report
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
        make_memory = getattr(args, "trial_memory", None)  # issue 13: set by the insight options
        memory = make_memory(args) if make_memory is not None else None
        if args.trials != 1 or memory is not None:
            from .trials import cmd_trials

            return cmd_trials(args, plan, memory)
        result = run_evaluation(
            plan, args.out, workers=args.workers, executor=args.executor, progress=not args.no_progress
        )
    except RunStopped as exc:  # stopped mid-run: what finished is stored
        print(f"pddlworlds eval: error: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # EvaluationError included: refused before anything ran
        print(f"pddlworlds eval: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the output folder: read-only, full, a file in the way
        print(f"pddlworlds eval: error: {path_problem(exc, Path(args.out))}", file=sys.stderr)
        return 1
    if result.skipped:
        print(f"note: {result.out}/episodes.jsonl had {result.skipped}; they were skipped", file=sys.stderr)
    if result.lines and not args.no_report:
        try:
            analysis = load_analysis(result.out)
            path = write_report(result.out, analysis=analysis)
        except OSError as exc:
            print(f"pddlworlds eval: error: {path_problem(exc, Path(args.out))}", file=sys.stderr)
            return 1
        print_main_table(result.out, analysis=analysis)
        print(f"report: {path}")
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
            f"{len(result.failures)} episode(s) failed (see {result.out}/errors.jsonl); {status}. "
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
        lines.append(f"  {line['agent']} {line['domain']}/{line['problem']} seed {line.get('seed')}: {what}")
    if len(errored) > shown:
        lines.append(f"  ... and {len(errored) - shown} more (see {out}/report.md)")
    lines.append(
        "Fix the endpoint (or raise --request-timeout / --call-deadline), then run the same command again: "
        "it re-runs these episodes, and only these."
    )
    return "\n".join(lines)


def cmd_report(args: argparse.Namespace) -> int:
    from .report import load_analysis, print_main_table, write_report
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
    data = analysis[2]
    if data and data.get("skipped"):
        print(f"note: {args.out}/episodes.jsonl had {data['skipped']}; they were skipped", file=sys.stderr)
    print_main_table(args.out, analysis=analysis)
    print(f"report: {path}")
    return 0


class _DeprecatedExecutor(argparse.Action):
    """`--backend local|ray`: the old spelling of `--executor`; still works, with a note."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option: Any = None) -> None:
        print("note: --backend is now --executor (--llm names the model backend)", file=sys.stderr)
        setattr(namespace, self.dest, values)


def _llm_help() -> str:
    from ..llm import BACKENDS

    return "; ".join(f"{b.usage}: {b.help}" for b in BACKENDS.values())


def add_parsers(subparsers: Any) -> None:
    """Add `eval` and `report` to the main CLI's subparsers."""
    add_eval_parsers(subparsers)


def add_eval_parsers(subparsers: Any) -> None:
    """Add `eval` and `report` to the main CLI's subparsers."""
    p = subparsers.add_parser(
        "eval",
        help="evaluate agents over domains and problems (resumable)",
        description="Play every (agent, problem, seed) episode and store one JSON line per episode in "
        "OUT/episodes.jsonl. The same command with the same --out resumes a stopped run. Without --limit "
        f"or --problems, each domain contributes its {DEFAULT_LIMIT} problem(s) with the shortest optimal plan: "
        "the quick default run.",
    )
    p.add_argument(
        "--agents",
        default=DEFAULT_AGENTS,
        help=f"comma-separated agent names, 'all', or package.module:factory (default: {DEFAULT_AGENTS})",
    )
    p.add_argument("--domains", default="all", help="comma-separated domain names, or 'all' (default)")
    p.add_argument("--split", default="agentboard", help="problem split (default: agentboard)")
    p.add_argument(
        "--llm", default="embedded", help=f"the model, NAME or NAME:ARG (default: embedded): {_llm_help()}"
    )
    p.add_argument(
        "--lora", default=None, metavar="ADAPTER.gguf|none",
        help="a llama.cpp LoRA adapter for the embedded model (made by `pddlworlds train`); default: the "
        "adapter shipped in models/ on the default model; 'none': the plain base model",
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
    p.add_argument("--max-steps", type=int, default=30, help="step budget per episode (default: 30)")
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
        default="pddlworlds",
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
        "--decoding", default="free", choices=["free", "admissible"],
        help="free (default): the model writes its actions; admissible: it picks the most probable valid action "
        "(embedded model only; a setting of its own, not comparable with published numbers)",
    )
    p.add_argument("--trials", type=int, default=1, help="play the problem set N times (default: 1)")
    p.set_defaults(func=cmd_eval)

    p = subparsers.add_parser(
        "report",
        help="write OUT/report.md and plots for a run folder",
        description="Tables (paper's Table 1 layout, with the paper's numbers on the agentboard split), "
        "plots of progress and executability per step, and Wilcoxon tests between agents.",
    )
    p.add_argument("out", help="run folder written by `pddlworlds eval`")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.set_defaults(func=cmd_report)


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (`python -m pddlworlds.evaluation.cli eval ...`)."""
    import warnings

    parser = argparse.ArgumentParser(prog="pddlworlds")
    sub = parser.add_subparsers(dest="command", required=True)
    add_eval_parsers(sub)
    args = parser.parse_args(argv)
    from ..worlds.pddl import PDDLNormalisationWarning

    warnings.simplefilter("ignore", PDDLNormalisationWarning)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
