"""What the `eval` options mean: the `RunPlan` they ask for, checked before anything loads or runs, and the
cross-trial memory behind `--insights`, loaded only when a run asks for it (`TRIAL_MEMORIES`). Imports only
the standard library and light names at import time, like the CLI that builds the parser."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..arguments import integer_list
from ..registry import Registry
from ..worlds.ladder import DEFAULT_MAX_EPISODE_STEPS, LADDER_SPLITS
from ..worlds.profiles import DEFAULT_PROFILE

if TYPE_CHECKING:
    from ..agents.insights import TrialMemory

__all__ = [
    "DEFAULT_AGENTS",
    "DEFAULT_LIMIT",
    "EMBEDDED_SETTING",
    "MAX_EPISODES",
    "TRIAL_MEMORIES",
    "build_plan",
    "embedded_default",
    "names_list",
    "parse_seeds",
    "resolve_setting",
    "select_problems",
    "smallest_problems",
    "trial_memory",
]


DEFAULT_AGENTS = "hiagent,standard"

#: The setting the embedded model plays with its shipped adapter when `--setting` is not given: of the pairs
#: measured on the 60 public problems, state-choice-subgoals with the adapter trained in it (cs1h) reaches the
#: most of the goals (against cs1 and df1 in it, df1 in state-choice-diffs, sc1 in state-choice and v1 in free
#: decoding: docs/results.md). Any other model or adapter plays `free` by default.
EMBEDDED_SETTING = "state-choice-subgoals"

#: The most episodes one run may plan: each is an object in memory before any plays.
MAX_EPISODES = 1_000_000


#: Problems per domain when neither --limit nor --problems is given (the quick default run): the
#: DEFAULT_LIMIT problems with the shortest optimal plan.
DEFAULT_LIMIT = 1


def names_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def parse_seeds(text: str) -> list[int]:
    """`0`, `0,1,2` or `0-4` (non-negative integers, at most `arguments.MAX_LIST_VALUES` of them)."""
    return integer_list(text, "--seeds")


def select_problems(
    domain_names: list[str], split: str, problems: list[str] | None, limit: int | None,
    domains_root: str | None = None,
) -> dict[str, list[str]]:
    """Domain -> problems to play. `problems` items are names (`p01`, applied to every domain that has
    one of that name) or `domain:name`; `limit` keeps the first N of each domain (in natural order)."""
    from ..worlds.catalogue import get_domain

    available = {d: get_domain(d, domains_root).problems(split) for d in domain_names}
    if problems is None:
        chosen = {d: list(names) for d, names in available.items()}
    else:
        chosen = {d: [] for d in domain_names}
        for item in problems:
            if ":" in item:
                domain, _, name = item.partition(":")
                domain = {d.lower(): d for d in domain_names}.get(domain.strip().lower(), domain.strip())
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


def smallest_problems(
    domain_names: list[str], split: str, n: int = DEFAULT_LIMIT, domains_root: str | None = None
) -> dict[str, list[str]]:
    """The `n` problems of each domain with the shortest stored optimal plan (natural order on ties; problems
    without a stored length come last, and a `domains_root`'s domains have none): the quick default run."""
    from ..artefacts.plans import optimal_lengths
    from ..worlds.catalogue import get_domain

    chosen = {}
    for d in domain_names:
        names = get_domain(d, domains_root).problems(split)
        lengths = optimal_lengths(d, split) if domains_root is None else {}
        ranked = sorted(
            range(len(names)), key=lambda i: (names[i] not in lengths, lengths.get(names[i], 0), i)
        )
        chosen[d] = [names[i] for i in ranked[:n]]
    return chosen


def _has_problems(domain: str, split: str, root: str | None) -> bool:
    """Whether the domain has the split and a problem in it."""
    from ..worlds.catalogue import get_domain

    found = get_domain(domain, root)
    return split in found.splits() and bool(found.problems(split))


def build_plan(args: argparse.Namespace) -> Any:
    """A `RunPlan` from the parsed options; every name is checked here, before anything loads or runs."""
    from ..agents.settings import get_setting
    from ..llm import CHOICE_VOCAB, SHIPPED_ADAPTER, names_default_model, parse_llm, resolve_adapter
    from ..worlds.catalogue import domains as all_domains
    from ..worlds.catalogue import get_domain, known_names
    from .spec import RunPlan, agent_names, resolve_agent

    agents = names_list(args.agents)
    if agents == ["all"]:
        agents = agent_names()
    if not agents:
        raise ValueError("--agents is empty")
    backend = parse_llm(
        args.llm,
        args.base_url,
        args.api_key,
        request_timeout=getattr(args, "request_timeout", None),
        call_deadline=getattr(args, "call_deadline", None),
    )
    takes_lora = backend.backend is not None and backend.backend.takes_lora
    lora_option = getattr(args, "lora", None) or SHIPPED_ADAPTER
    shipped_pair = takes_lora and backend.backend.scores_candidates and names_default_model(backend.model)
    default = embedded_default(args, agents) if shipped_pair and lora_option == SHIPPED_ADAPTER else None
    setting, choice_score, observation_mode = resolve_setting(args, default)
    score_all = bool(getattr(args, "score_all_candidates", False))
    if score_all and not get_setting(setting).chooses:
        raise ValueError(f"--score-all-candidates scores candidates; setting {setting!r} does not choose among them")
    uses_model = [
        resolve_agent(agent, getattr(args, "prompt_file", None), setting, choice_score, score_all)[1] for agent in agents
    ]
    if setting != "free" and not any(uses_model):
        raise ValueError(
            f"--setting {setting} says how a model plays, and --agents {args.agents} uses no model"
        )
    agents = list(dict.fromkeys(agents))
    seeds = parse_seeds(args.seeds)  # a range is counted before it is made
    from ..worlds.profiles import get_profile

    profile = get_profile(getattr(args, "profile", None) or DEFAULT_PROFILE).name  # unknown names fail here
    if observation_mode is not None:  # a mode the profile lacks would fail every episode: refused before any
        from ..env import observation_mode_problem

        if problem := observation_mode_problem(observation_mode, profile):
            given = getattr(args, "observation_mode", None)
            source = f"--observation-mode {given}" if given else f"--setting {setting} (observation mode {observation_mode})"
            raise ValueError(f"{source} cannot run under --profile {profile}: {problem}")
    prompt_file = getattr(args, "prompt_file", None)
    if prompt_file is not None:
        from ..agents.agentboard import load_prompt_file

        load_prompt_file(prompt_file)  # a missing or malformed file fails here, naming what is wrong
        prompt_file = str(Path(prompt_file).resolve())

    root = getattr(args, "domains_root", None)
    root = None if root is None else str(Path(root).resolve())  # recorded whole: a resume elsewhere finds it
    known = list(all_domains(root))  # a root that is not a folder is refused here, in one line
    if root is not None and not known:
        raise ValueError(f"--domains-root {root} holds no domain folder (a folder with a domain.pddl)")
    by_key = {k.lower(): k for k in known}
    wanted = [by_key.get(d.lower(), d) for d in names_list(args.domains)]
    if not wanted:
        raise ValueError(f"--domains is empty; give domain names ({', '.join(known)}) or all")
    if wanted == ["catalogue"] and root is None and "catalogue" not in known:  # the worlds with a card
        catalogue = [d for d in known if get_domain(d).card is not None]
        wanted = [d for d in catalogue if _has_problems(d, args.split, root)]
        if not wanted:
            raise ValueError(f"--domains catalogue: no catalogue world has a problem in split {args.split!r}; "
                             "the catalogue plays --split ladder (or ladder-heldout)")
    if wanted == ["all"]:  # every domain that has problems in the split (a catalogue world of other splits, a
        wanted = [d for d in known if _has_problems(d, args.split, root)]  # folder of one's own without any)
        skipped = [d for d in known if d not in wanted]
        if skipped and root is not None:  # the user's folders: said; the catalogue's worlds of other splits: not
            print(f"note: --domains all: {', '.join(skipped)} {'has' if len(skipped) == 1 else 'have'} no problem "
                  f"in split {args.split!r}; leaving {'it' if len(skipped) == 1 else 'them'} out", file=sys.stderr)
        if not wanted:
            if not known:
                raise ValueError("--domains all: no domain folder")
            splits = sorted({s for d in known for s in get_domain(d, root).splits()})
            if args.split not in splits:
                raise ValueError(f"--domains all: each of the {len(known)} domains has no split {args.split!r}; "
                                 f"splits: {', '.join(splits)}")
            raise ValueError(f"--domains all: no domain has a problem in split {args.split!r}")
    unknown = [d for d in wanted if d not in known]
    if unknown:
        raise ValueError(f"unknown domain(s) {', '.join(map(repr, unknown))}; "
                         f"{known_names(known, unknown[0])}; or all, or catalogue")
    wanted = list(dict.fromkeys(wanted))

    if getattr(args, "lora", None) and not takes_lora:
        raise ValueError(f"--lora needs a model backend that takes an adapter, not --llm {args.llm}")
    if takes_lora and any(resolve_agent(agent, prompt_file)[1] for agent in agents):
        try:  # the one place the option becomes a file (None: no adapter)
            adapter = resolve_adapter(lora_option, backend.model, setting)
        except FileNotFoundError as exc:
            raise ValueError(f"--lora: {exc}") from None
        backend = dataclasses.replace(backend, lora=None if adapter is None else str(adapter))
    if backend.kind == "embedded" and backend.model is None and root is None and get_setting(setting).chooses:
        # the shipped worlds in a setting that chooses: the default model with its vocabulary cut to their tokens
        # (the same tokens for every text, checked on each; a third less time): docs/agents.md, "The cut vocabulary"
        backend = dataclasses.replace(backend, model=CHOICE_VOCAB)
    if get_setting(setting).chooses and (backend.backend is None or not backend.backend.scores_candidates):
        raise ValueError(
            f"setting {setting!r} picks among candidates by their log-probability and needs a backend that scores "
            f"given texts (embedded), not --llm {args.llm}: use --setting free"
        )
    problems = names_list(args.problems) if args.problems else None
    from ..artefacts.proofs import split_unsolvable

    # stored proofs are the shipped domains' (a root's domain of the same name is another domain)
    unsolvable = {d: split_unsolvable(d, args.split) if root is None else [] for d in wanted}
    if problems is None and args.limit is None and any(unsolvable.values()):
        selected = select_problems(wanted, args.split, None, None)  # a share of unsolvable ones needs them all
        print(f"note: split {args.split!r} has unsolvable problems; playing all of them", file=sys.stderr)
    elif problems is None and args.limit is None:
        selected = smallest_problems(wanted, args.split, domains_root=root)
    else:
        selected = select_problems(wanted, args.split, problems, args.limit, root)
    if problems is not None:
        left_out = [d for d in wanted if d not in selected]
        if left_out:
            print(
                f"note: no problem named in --problems exists in {', '.join(left_out)}; leaving them out",
                file=sys.stderr,
            )
    if args.max_steps is not None and args.max_steps < 1:
        raise ValueError("--max-steps must be at least 1")
    episodes = len(agents) * sum(len(names) for names in selected.values()) * len(seeds)
    if episodes > MAX_EPISODES:
        raise ValueError(f"the run would play {episodes:,} episodes; at most {MAX_EPISODES:,} a run (fewer --seeds?)")
    return RunPlan(
        agents=agents,
        problems=selected,
        split=args.split,
        seeds=seeds,
        # per problem (None) only on a ladder, whose bands have budgets of their own; 30 everywhere else
        max_steps=args.max_steps or (None if args.split in LADDER_SPLITS else DEFAULT_MAX_EPISODE_STEPS),
        backend=backend,
        allow_impossible=bool(getattr(args, "allow_impossible", False) or any(unsolvable.values())),
        profile=profile,
        prompt_file=prompt_file,
        setting=setting,
        choice_score=choice_score,
        observation_mode=observation_mode,
        domains_root=root,
        score_all=score_all,
    )


def embedded_default(args: argparse.Namespace, agents: list[str]) -> str | None:
    """`EMBEDDED_SETTING` for a run of the embedded model with its shipped adapter that names no setting,
    where everything else it asks for plays it: the default profile, no `--prompt-file` or
    `--observation-mode`, and an agent that uses the model and takes the setting. None (free) otherwise, so
    the AgentBoard profile, its prompt file and agents of your own keep playing as published."""
    from .spec import resolve_agent

    given = ("setting", "decoding", "prompt_file", "observation_mode")
    if any(getattr(args, name, None) for name in given):
        return None
    if (getattr(args, "profile", None) or DEFAULT_PROFILE) != DEFAULT_PROFILE:
        return None
    try:
        uses_model = [resolve_agent(agent, None, EMBEDDED_SETTING)[1] for agent in agents]
    except ValueError:  # an agent that cannot play it (one of your own): the run stays free
        return None
    return EMBEDDED_SETTING if any(uses_model) else None


def resolve_setting(args: argparse.Namespace, default: str | None = None) -> tuple[str, str | None, str | None]:
    """(setting, ranking rule other than the setting's, observation mode) from `--setting`, the older
    `--decoding`, `--choice-score` and `--observation-mode`, else `default` (None: `DEFAULT_SETTING`);
    contradictions are refused here."""
    from ..agents.admissible import CHOICE_SCORES
    from ..agents.settings import DEFAULT_SETTING, get_setting

    setting_name = getattr(args, "setting", None)
    decoding = getattr(args, "decoding", None)
    if setting_name is not None and decoding is not None and decoding != setting_name:
        raise ValueError(f"--decoding {decoding} contradicts --setting {setting_name}; give only --setting")
    setting = get_setting(setting_name or decoding or default or DEFAULT_SETTING)
    choice_score = getattr(args, "choice_score", None)
    if choice_score is not None:
        CHOICE_SCORES[choice_score]  # an unknown rule fails here, listing the rules
        if not setting.chooses:
            raise ValueError(f"--choice-score ranks candidates; setting {setting.name!r} does not choose among them")
        if choice_score == setting.choice_score:
            choice_score = None
    mode = getattr(args, "observation_mode", None)
    if mode is not None and setting.observation_modes and mode not in setting.observation_modes:
        raise ValueError(
            f"setting {setting.name!r} shows observation mode {' or '.join(setting.observation_modes)}, "
            f"not --observation-mode {mode}"
        )
    return setting.name, choice_score, mode or setting.observation_mode


#: The cross-trial memories by kind, loaded only when a run asks for one (`--insights PATH`: "insights").
TRIAL_MEMORIES: Registry[Callable[..., TrialMemory]] = Registry(
    "trial memory", {"insights": "pddlworlds.insights.memory:InsightMemory"}, plural="trial memories"
)


def trial_memory(args: argparse.Namespace) -> TrialMemory | None:
    """The memory the insight options ask for (None without --insights), built from `TRIAL_MEMORIES`."""
    if args.insights is None:
        return None
    options = {"mode": args.insight_mode, "limit": args.insight_limit, "embedding": args.insight_embedding}
    if args.insight_cap is not None:
        options["cap"] = args.insight_cap
    return TRIAL_MEMORIES["insights"](args.insights, **options)
