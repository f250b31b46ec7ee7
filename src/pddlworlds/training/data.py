"""Training conversations: the real agents play the expert's plans of generated problems with a teacher.

`generate_dataset` writes a folder:
- `calls.jsonl`: one line per model call, `{"episode", "agent", "domain", "problem", "call", "purpose",
  "messages": [{"role", "content"}], "reply", "stop"}`: the messages exactly as the agent sent them, the
  reply exactly as the agent parsed it, and the stop sequences of that call (the first one ends the
  trained reply, so a model learns to write what stops its own generation);
- `teacher_episodes.jsonl`: one line per episode (plan length, detours, subgoals, steps, calls);
- `manifest.json`: generator seeds and sizes, the agents with their flags (the prompt profile: no
  in-context example), planner, detour rates, counts, and the overlap check against shipped problems.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .. import generators
from ..agents import PROMPTS_VERSION, make_agent
from ..agents.hiagent import same_subgoal
from ..agents.segments import segment_plan
from ..files import atomic_write
from ..llm import Message
from ..registration import make_env
from ..worlds.catalogue import domains
from ..worlds.search import shortest_plan
from .packing import REPLY_END
from .problems import (
    TRAIN_SEEDS,
    TrainingProblem,
    exclude_shipped,
    generate_training_problems,
)
from .teacher import (
    MAX_SUBGOAL_STEPS,
    Detours,
    RecordedCall,
    TeacherLLM,
    expert_moves,
    hiagent_replies,
    standard_replies,
)

__all__ = [
    "MAX_CALL_LINE_BYTES",
    "TRAIN_AGENTS",
    "EpisodeData",
    "TrainingDataError",
    "call_from_json",
    "expert_plan",
    "generate_dataset",
    "load_calls",
    "record_episode",
]

#: The agents whose conversations are recorded; the prompt profile is the one without the example.
TRAIN_AGENTS: tuple[str, ...] = ("standard", "hiagent")
BFS_MAX_NODES = 100_000
#: One line per played episode (not a run folder's episode file: another format).
TEACHER_EPISODES_FILE = "teacher_episodes.jsonl"

#: The teacher's default detours (a frozen value, shared safely as a default argument).
DEFAULT_DETOURS = Detours()


@dataclass
class EpisodeData:
    episode: str
    agent: str
    domain: str
    problem: str
    plan_length: int
    steps: int
    detours: dict[str, int]
    subgoals: int
    calls: list[RecordedCall]
    flags: dict[str, Any]


def expert_plan(problem: TrainingProblem, timeout: float = 60) -> tuple[list[str], str]:
    """(action texts, how): breadth-first search when small, else Fast Downward (optimal, then satisficing)."""
    d = domains()[problem.domain]
    env = make_env(d.domain_file, problem.path, text_file=d.text_file)
    world = env.unwrapped.world
    plan = shortest_plan(world.task, max_states=BFS_MAX_NODES)
    if plan is not None:
        return [world.action_text(i) for i in plan], "bfs"
    from ..planning import solve

    for planner in ("fd-opt", "fd-sat"):
        result = solve(d.domain_file, problem.path, planner=planner, timeout=timeout, text_file=d.text_file)
        if result.solved:
            return list(result.text), planner
    raise RuntimeError(f"no plan for {problem.path}: {result.status.value}: {result.message}")


def record_episode(
    problem: TrainingProblem, plan: Sequence[str], agent_name: str, seed: int, detours: Detours = DEFAULT_DETOURS
) -> EpisodeData:
    """Play `plan` with the real agent `agent_name` over a teacher; raise if the episode does not end
    with every scripted reply used and the goal reached."""
    d = domains()[problem.domain]
    env = make_env(d.domain_file, problem.path, text_file=d.text_file, max_episode_steps=None)
    world = env.unwrapped.world
    rng = random.Random(f"{seed}/{agent_name}/{problem.domain}/{problem.name}")
    moves = expert_moves(world, plan, rng, detours)
    segments = segment_plan(world, plan, MAX_SUBGOAL_STEPS, same=same_subgoal) if agent_name != "standard" else []
    if agent_name == "standard":
        script = standard_replies(moves)
    else:
        script = hiagent_replies(moves, segments, plan, rng, detours)
    teacher = TeacherLLM(script)
    agent = make_agent(agent_name, teacher, example=False)
    record = agent.run(env, seed=0)
    env.close()
    if not record.success or not teacher.finished:
        raise RuntimeError(
            f"{agent_name} on {problem.path}: success={record.success}, replies left={not teacher.finished}"
        )
    kinds = [m.kind for m in moves]
    return EpisodeData(
        episode=f"{problem.domain}/{problem.name}/{agent_name}",
        agent=agent_name,
        domain=problem.domain,
        problem=problem.name,
        plan_length=len(plan),
        steps=record.steps,
        detours={
            "invalid": kinds.count("invalid"),
            "check": kinds.count("check"),
            "retrieve": sum("retrieve(" in r for r in script.actions),
        },
        subgoals=len(segments),
        calls=teacher.calls,
        flags=agent.flags(),
    )


def _call_json(ep: EpisodeData, i: int, call: RecordedCall) -> dict[str, Any]:
    return {
        "episode": ep.episode,
        "agent": ep.agent,
        "domain": ep.domain,
        "problem": ep.problem,
        "call": i,
        "purpose": call.purpose,
        "messages": [{"role": m.role, "content": m.content} for m in call.messages],
        "reply": call.reply,
        "stop": list(call.stop),
    }


def call_from_json(row: dict[str, Any]) -> tuple[tuple[Message, ...], str, str]:
    """(messages, reply, what ends the reply): the call's first stop sequence (older data: a blank line)."""
    stop = row.get("stop")
    end = stop[0] if stop else REPLY_END
    return tuple(Message(m["role"], m["content"]) for m in row["messages"]), row["reply"], end


class TrainingDataError(ValueError):
    """A dataset folder that cannot be trained on; the message names the file and line."""


def _row_problem(row: Any) -> str | None:
    """What makes `row` not a call of `calls.jsonl` (None when it is one)."""
    if not isinstance(row, dict):
        return f"expected a JSON object, found {type(row).__name__}"
    missing = [k for k in ("agent", "domain", "messages", "reply") if k not in row]
    if missing:
        return f"no {', '.join(missing)}"
    for key in ("agent", "domain", "reply"):
        if key == "reply" and row[key] is None and row.get("label") == "dead-end":
            continue  # a state with no plan: kept in the data, never trained on
        if not isinstance(row[key], str):
            return f"{key} is a {type(row[key]).__name__}, not a string"
    messages = row["messages"]
    if not isinstance(messages, list) or not messages:
        return "messages is not a non-empty list"
    for i, m in enumerate(messages):
        if not (isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)):
            return f"messages[{i}] is not an object with string role and content"
    stop = row.get("stop")
    if stop is not None and not (isinstance(stop, list) and all(isinstance(x, str) and x for x in stop)):
        return "stop is not a list of non-empty strings"
    return None


#: The longest line `calls.jsonl` may hold: a call's prompt fits the model's context (16,384 tokens, some
#: 100 kB of text), so a longer line is refused as it is read, before it is held whole, decoded or tokenised.
MAX_CALL_LINE_BYTES = 4 << 20


def load_calls(folder: str | Path) -> list[dict[str, Any]]:
    """The rows of `calls.jsonl` that have a reply to learn, in file order, each checked to be a call
    (`TrainingDataError` naming the file and line otherwise, for a line longer than `MAX_CALL_LINE_BYTES`,
    and for a missing folder, a missing file or a file without calls). Dead-end rows (label "dead-end",
    reply null: no plan from that state) are left out."""
    folder = Path(folder)
    path = folder / "calls.jsonl"
    if not folder.is_dir():
        raise TrainingDataError(f"{folder}: no such dataset folder (make one with `pddlworlds train data`)")
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise TrainingDataError(f"{path}: no such file (a dataset folder has calls.jsonl)") from None
    except OSError as exc:
        raise TrainingDataError(f"{path}: cannot read ({exc.strerror or exc})") from None
    rows = []
    with handle:
        for line_no, raw in enumerate(iter(lambda: handle.readline(MAX_CALL_LINE_BYTES + 1), b""), start=1):
            if len(raw) > MAX_CALL_LINE_BYTES:
                raise TrainingDataError(
                    f"{path}, line {line_no}: longer than {MAX_CALL_LINE_BYTES >> 20} MiB; no recorded call is that "
                    "long (a call's prompt fits the model's context), so the line is refused unread"
                )
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise TrainingDataError(f"{path}, line {line_no}: not UTF-8 text ({exc.reason})") from None
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (ValueError, RecursionError) as exc:
                raise TrainingDataError(f"{path}, line {line_no}: not a JSON line ({exc})") from None
            problem = _row_problem(row)
            if problem:
                raise TrainingDataError(f"{path}, line {line_no}: not a recorded call: {problem}")
            if row["reply"] is not None:  # dead ends (no plan from the state) have no reply to learn
                rows.append(row)
    if not rows:
        raise TrainingDataError(f"{path}: no calls in the file")
    return rows


def generate_dataset(
    out: str | Path,
    *,
    seeds: Iterable[int] = TRAIN_SEEDS,
    per_level: int = 3,
    domain_names: Iterable[str] = generators.DOMAINS,
    levels: Iterable[str] = generators.LEVELS,
    agents: Iterable[str] = TRAIN_AGENTS,
    detours: Detours = DEFAULT_DETOURS,
    seed: int = 0,
    planner_timeout: float = 60,
    progress: bool = True,
    family: str = generators.DEFAULT_FAMILY,
) -> dict[str, Any]:
    """Generate problems (from the generator family `family`), prove none is a shipped or held-out one,
    plan, record every agent's episode; return the manifest."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    seeds, domain_names, levels, agents = list(seeds), list(domain_names), list(levels), list(agents)
    start = time.perf_counter()
    problems = generate_training_problems(
        out / "problems", seeds=seeds, per_level=per_level, domain_names=domain_names, levels=levels, family=family
    )
    generated = len(problems)
    problems, dropped = exclude_shipped(problems)
    episodes: list[EpisodeData] = []
    failures: list[str] = []
    planners: dict[str, int] = {}
    for problem in tqdm(problems, desc="episodes", disable=not progress):
        try:
            plan, how = expert_plan(problem, planner_timeout)
        except RuntimeError as exc:
            failures.append(str(exc))
            continue
        planners[how] = planners.get(how, 0) + 1
        for name in agents:
            episodes.append(record_episode(problem, plan, name, seed, detours))
    lines = [json.dumps(_call_json(ep, i, c)) for ep in episodes for i, c in enumerate(ep.calls)]
    atomic_write(out / "calls.jsonl", "".join(line + "\n" for line in lines))
    ep_lines = [
        json.dumps({k: v for k, v in asdict(ep).items() if k != "calls"} | {"calls": len(ep.calls)})
        for ep in episodes
    ]
    atomic_write(out / TEACHER_EPISODES_FILE, "".join(line + "\n" for line in ep_lines))
    manifest = {
        "prompts_version": PROMPTS_VERSION,
        "prompt_profile": {"example": False},
        "agents": {ep.agent: ep.flags for ep in episodes},
        "generator": {
            "family": family,
            "seeds": seeds,
            "per_level": per_level,
            "domains": domain_names,
            "levels": levels,
            "sizes": {d: generators.FAMILIES[family][d].sizes for d in domain_names},
        },
        "problems_generated": generated,
        "problems": len(problems),
        "problems_dropped_as_equal_to_shipped_or_earlier": dropped,
        "episodes": len(episodes),
        "calls": len(lines),
        "planners": planners,
        "failures": failures,
        "detours": asdict(detours),
        "seed": seed,
        "seconds": round(time.perf_counter() - start, 1),
    }
    atomic_write(out / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return manifest
