"""The planner's expert episodes as a dataset a trainer reads (`pddlworlds export`): one row per step.

Each problem is played by the expert `pddlworlds eval` plays (`agents.scripted.ExpertAgent`) from the stored
artefacts alone: the stored plan (optimal where the index proves it) or, on a problem a stored proof shows
unsolvable, the claim of `impossible` where the split offers it. Nothing is planned here, so an export is
quick and the same every time; a problem without such an episode is skipped and named (`Export.skipped`).

A row is the step as a chat (`frameworks.chat`, the verifiers environment's words): `prompt` holds the
system message, the problem and every earlier step (the expert's reply, the observation that followed),
`completion` the expert's reply for this step, so TRL's `SFTTrainer` reads the rows as they are
(conversational prompt and completion: the loss falls on the expert's reply). Beside them: the expert's
`action`, the `valid_actions` of the state it was taken in, the problem and its proven optimal length,
`steps_to_go` (the optimal plan's steps still to play, this one included: the rest of an optimal plan is
optimal), the progress before and after the step, and whether the problem is solvable.

Held-out splits (`episodes.held_out`: every split whose name has "heldout" in it) are exported only when named.
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents.scripted import ExpertAgent
from ..artefacts.proofs import is_unsolvable
from ..files import atomic_write
from ..planning.store import optimal_length, stored_plan
from ..worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS, domains, get_domain
from ..worlds.profiles import DEFAULT_PROFILE
from .chat import CHAT_VERSION, first_message, observation_message, reply_message, system_message
from .episodes import EpisodeOptions, held_out, make_env, reset_kwargs

__all__ = [
    "COLUMNS", "FORMATS", "Export", "ExportRequest", "expert_rows", "export", "write_rows",
]

#: The file formats, by the file's suffix.
FORMATS = {".jsonl": "jsonl", ".parquet": "parquet"}
#: Every row's columns, in order.
COLUMNS = ("id", "domain", "split", "problem", "step", "prompt", "completion", "action", "valid_actions",
           "optimal_length", "steps_to_go", "progress_before", "progress_after", "solvable", "chat_version")


@dataclass(frozen=True)
class ExportRequest:
    """What to export: `domains` (None: every domain of the catalogue), `splits` (None: each domain's splits
    that are not held out; a named split is exported even when held out, and a domain without it is left
    out), `problems` (None: all of each split's), the first `limit` problems of each split, and the episodes'
    `profile` and `observation_mode` (`EpisodeOptions`')."""

    domains: Sequence[str] | None = None
    splits: Sequence[str] | None = None
    problems: Sequence[str] | None = None
    limit: int | None = None
    profile: str = DEFAULT_PROFILE
    observation_mode: str | None = None

    def __post_init__(self) -> None:
        if self.limit is not None and (isinstance(self.limit, bool) or self.limit < 1):
            raise ValueError(f"limit must be a whole number of at least 1, not {self.limit!r}")

    def chosen_splits(self) -> list[tuple[str, str]]:
        """(domain, split) of every split to export, in a fixed order: by domain, then split."""
        names = list(self.domains) if self.domains is not None else list(domains())
        chosen = []
        for name in names:
            domain = get_domain(name)
            splits = domain.splits()
            wanted = [s for s in splits if not held_out(s)] if self.splits is None else [s for s in self.splits if s in splits]
            chosen += [(domain.name, split) for split in wanted]
        if self.splits is not None and not chosen:
            raise ValueError(f"no domain of {', '.join(names)} has a split {' or '.join(map(repr, self.splits))}")
        return chosen

    def episodes(self) -> list[EpisodeOptions]:
        """The options of every episode to export, in a fixed order: domain, split, problem (natural)."""
        chosen: list[EpisodeOptions] = []
        for name, split in self.chosen_splits():
            problems = get_domain(name).problems(split)
            if self.problems is not None:
                problems = [p for p in problems if p in self.problems]
            chosen += [EpisodeOptions(domain=name, split=split, problem=problem, profile=self.profile,
                                      observation_mode=self.observation_mode) for problem in problems[: self.limit]]
        if self.problems is not None:
            found = {o.problem for o in chosen}
            if missing := [p for p in self.problems if p not in found]:
                raise ValueError(f"unknown problem {missing[0]!r} in the chosen domains and splits")
        return chosen


@dataclass
class Export:
    """An export's rows and the problems it skipped (`domain/split/problem` -> why)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def episodes(self) -> int:
        return len({(r["domain"], r["split"], r["problem"]) for r in self.rows})


def _budget(options: EpisodeOptions) -> int | None:
    """The step budget that lets the expert finish, or None when it has no episode to play: its stored plan's
    length (at least the usual budget), one step for a claim of `impossible` where it is offered."""
    if is_unsolvable(options.domain, options.problem):
        return DEFAULT_MAX_EPISODE_STEPS if options.offers_impossible else None
    plan = stored_plan(options.domain, options.problem)
    return None if plan is None else max(DEFAULT_MAX_EPISODE_STEPS, len(plan))


def expert_rows(options: EpisodeOptions) -> list[dict[str, Any]] | None:
    """The rows of the expert's episode on `options`' problem, or None when it has none (no stored plan, or an
    unsolvable problem on a split that does not offer `impossible`, or a stored plan that fails)."""
    budget = _budget(options)
    if budget is None:
        return None
    options = dataclasses.replace(options, max_steps=budget)
    env = make_env(options)
    try:
        observation, info = env.reset(**reset_kwargs(options))
        expert = ExpertAgent(replanners=())  # the stored artefacts only: nothing is planned at export time
        expert.reset(observation, info, env)
        proven = optimal_length(options.domain, options.problem, options.split, proven=True)
        history = [{"role": "system", "content": system_message(env)},
                   {"role": "user", "content": first_message(observation, info)}]
        rows: list[dict[str, Any]] = []
        done = False
        while not done:
            valid = list(env.unwrapped.valid_actions())
            action = expert.act(observation, info)
            before = float(info["progress"])
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            reply = {"role": "assistant", "content": reply_message(action)}
            step = int(info["step"])
            rows.append({
                "id": f"{options.domain}/{options.split}/{options.problem}/{step}",
                "domain": options.domain, "split": options.split, "problem": options.problem, "step": step,
                "prompt": list(history), "completion": [reply], "action": action, "valid_actions": valid,
                "optimal_length": proven, "steps_to_go": proven - step + 1 if proven is not None else None,
                "progress_before": before, "progress_after": float(info["progress"]), "solvable": info["solvable"],
                "chat_version": CHAT_VERSION,
            })
            history += [reply, {"role": "user", "content": observation_message(observation)}]
    finally:
        env.close()
    return rows if info["success"] else None


def export(request: ExportRequest) -> Export:
    """Every expert episode `request` chooses, as rows (in its order), and the problems it skipped."""
    result = Export()
    for options in request.episodes():
        rows = expert_rows(options)
        key = f"{options.domain}/{options.split}/{options.problem}"
        if rows is None:
            result.skipped[key] = "no stored plan or proof the expert can play"
        else:
            result.rows.extend(rows)
    return result


def write_rows(rows: Iterable[dict[str, Any]], path: str | Path) -> None:
    """`rows` written to `path` in the format its suffix names (`FORMATS`), the same bytes for the same rows."""
    path = Path(path)
    kind = FORMATS.get(path.suffix)
    if kind is None:
        raise ValueError(f"{path.name}: the file's suffix names its format, one of {', '.join(FORMATS)}")
    rows = list(rows)
    if kind == "jsonl":
        atomic_write(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
        return
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ValueError("writing Parquet needs pyarrow: pip install 'pddlworlds[export]'") from exc
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=_schema(pa)), buffer)
    atomic_write(path, buffer.getvalue())


def _schema(pa: Any) -> Any:
    """The rows' Arrow schema, fixed (not inferred): an export whose columns are all null in some field still
    has the same types, so files of different exports load together."""
    message = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    types = {"id": pa.string(), "domain": pa.string(), "split": pa.string(), "problem": pa.string(),
             "step": pa.int64(), "prompt": message, "completion": message, "action": pa.string(),
             "valid_actions": pa.list_(pa.string()), "optimal_length": pa.int64(), "steps_to_go": pa.int64(),
             "progress_before": pa.float64(), "progress_after": pa.float64(), "solvable": pa.bool_(),
             "chat_version": pa.string()}
    return pa.schema([(name, types[name]) for name in COLUMNS])
