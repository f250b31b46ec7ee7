"""One on-policy round's data: the current adapter plays generated training problems, the expert labels.

`rollout_dataset` writes a folder in the layout `pddlworlds train data` writes (so `train fit --data`
takes both, and several folders at once: rounds aggregate with the expert data):
- `calls.jsonl`: the data's call rows plus `label` ("expert" or "dead-end"; a dead end's `reply` is null
  and is not trained on), `model_reply` (what the model wrote; the agent acted on it) and `round`;
- `rollout_episodes.jsonl`: per episode success, progress, steps, calls, dead ends, and how often the model's
  action was the expert's;
- `manifest.json`: the round (adapter path and sha256, generator seeds, problems played, problems
  dropped by the overlap check against shipped and held-out problems, counts, planner use), rewritten after
  every episode with `"complete": false` until the round ends, so an interrupted round resumes.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .. import generators
from ..agents import PROMPTS_VERSION, get_setting
from ..agents.parsing import parse_reply
from ..files import atomic_write, file_sha256
from ..llm import LLM
from ..registration import make_env
from ..worlds.catalogue import domains
from .data import TRAIN_AGENTS
from .expert import StateExpert
from .onpolicy import LabelledCall, play_labelled
from .problems import exclude_shipped, generate_training_problems

__all__ = ["ROLLOUT_EPISODES_FILE", "ROLLOUT_SEEDS", "rollout_dataset"]

#: The round's episode summaries (not a run folder's episode records: these have fields of their own).
ROLLOUT_EPISODES_FILE = "rollout_episodes.jsonl"

#: Default generator seeds of on-policy problems (the expert data's default is 1001-1010).
ROLLOUT_SEEDS: tuple[int, ...] = tuple(range(2001, 2004))


def _row(episode: str, agent: str, domain: str, problem: str, i: int, call: LabelledCall, round_name: str) -> dict:
    return {
        "episode": episode,
        "agent": agent,
        "domain": domain,
        "problem": problem,
        "call": i,
        "purpose": call.purpose,
        "messages": [{"role": m.role, "content": m.content} for m in call.messages],
        "reply": call.reply,
        "stop": list(call.stop),
        "label": call.label,
        "model_reply": call.model_reply,
        "round": round_name,
    }


def _agreement(calls: list[LabelledCall]) -> tuple[int, int]:
    """(action calls with an expert label, those where the model wrote the expert's action)."""
    n = same = 0
    for c in calls:
        if c.purpose != "action" or c.reply is None:
            continue
        n += 1
        same += parse_reply(c.model_reply).action.strip() == parse_reply(c.reply).action.strip()
    return n, same


#: What a resumed round must share with the run it resumes (the manifest's "settings").
_SETTINGS = ("round", "adapter_sha256", "agents", "max_steps", "generator", "setting", "player", "detour")


def _resume(out: Path, settings: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]], float]:
    """The call rows, episode summaries and seconds of an interrupted round in `out` (nothing for a fresh
    folder); ValueError when `out` holds a finished round, or one played with other settings."""
    manifest_path = out / "manifest.json"
    if not manifest_path.is_file():
        if (out / ROLLOUT_EPISODES_FILE).is_file() and (out / ROLLOUT_EPISODES_FILE).stat().st_size:
            raise ValueError(f"{out}: holds played episodes but no manifest.json; use another --out")
        return [], [], 0.0
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if manifest.get("complete", True):
        raise ValueError(f"{out}: holds a finished round ({manifest.get('episodes')} episodes); use another --out")
    saved = manifest.get("settings", {})
    diff = sorted(k for k in _SETTINGS if saved.get(k) != settings.get(k))
    if diff:
        raise ValueError(f"{out}: an interrupted round played with other settings ({', '.join(diff)}); "
                         "resume it with the same command or use another --out")
    rows = [line for line in (out / "calls.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    episodes = [json.loads(line) for line in (out / ROLLOUT_EPISODES_FILE).read_text(encoding="utf-8").splitlines()
                if line.strip()]
    played = {e["episode"] for e in episodes}
    rows = [r for r in rows if json.loads(r)["episode"] in played]  # an episode cut off mid-write is replayed
    return rows, episodes, float(manifest.get("seconds", 0))


def rollout_dataset(
    out: str | Path,
    model: LLM | None,
    *,
    adapter: str | None,
    round_name: str,
    seeds: Iterable[int] = ROLLOUT_SEEDS,
    per_level: int = 1,
    domain_names: Iterable[str] = generators.DOMAINS,
    levels: Iterable[str] = generators.LEVELS,
    agents: Iterable[str] = TRAIN_AGENTS,
    max_steps: int = 30,
    planner_timeout: float = 60,
    max_problems: int = 0,
    progress: bool = True,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    stop: threading.Event | None = None,
    setting: str = "free",
    detour: float = 0.15,
    family: str = generators.DEFAULT_FAMILY,
) -> dict[str, Any]:
    """Play `model` with each agent on fresh training problems, label every call; return the manifest.
    `model` None: the expert plays in the model's place (a choosing `setting` only; with chance `detour` a
    pick is another legal action), which makes expert data labelled exactly as on-policy data is.

    After every episode the calls, the episode summaries and a manifest marked `"complete": false` are
    written, so an interrupted round (a killed process, or `stop` set: the CLI sets it on SIGTERM or
    Ctrl-C, and the episode under way finishes first) is training data as it stands, and the same call
    resumes it, skipping the episodes already played."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    seeds, domain_names, levels, agents = list(seeds), list(domain_names), list(levels), list(agents)
    settings = {
        "round": round_name,
        "adapter_sha256": file_sha256(adapter) if adapter and Path(adapter).is_file() else None,
        "agents": agents,
        "max_steps": max_steps,
        "generator": {"seeds": seeds, "per_level": per_level, "domains": domain_names, "levels": levels,
                      "max_problems": max_problems},
        **({"setting": setting} if setting != "free" else {}),
        **({"player": "expert", "detour": detour} if model is None else {}),
    }
    if family != generators.DEFAULT_FAMILY:  # rounds begun before families existed resume as they were
        settings["generator"]["family"] = family
    rows, episodes, seconds_before = _resume(out, settings)
    played = {e["episode"] for e in episodes}
    start = time.perf_counter() - seconds_before
    drawn = generate_training_problems(
        out / "problems", seeds=seeds, per_level=per_level, domain_names=domain_names, levels=levels, family=family
    )
    problems, dropped = exclude_shipped(drawn)
    if max_problems:
        problems = problems[:max_problems]
    planners: dict[str, int] = {}
    for e in episodes:
        for how, n in e.get("planners", {}).items():
            planners[how] = planners.get(how, 0) + n
    calls_path, episodes_path = out / "calls.jsonl", out / ROLLOUT_EPISODES_FILE

    def manifest(complete: bool) -> dict[str, Any]:
        n_actions = sum(e["action_calls"] for e in episodes)
        return {
            "kind": "on-policy" if model is not None else "expert-play",
            "round": round_name,
            "setting": setting,
            "complete": complete,
            "settings": settings,
            "prompts_version": PROMPTS_VERSION,
            "adapter": {"path": adapter, "sha256": settings["adapter_sha256"]},
            "model_id": model.model_id if model is not None else "expert",
            "agents": agents,
            "max_steps": max_steps,
            "generator": {"family": family, "seeds": seeds, "per_level": per_level, "domains": domain_names,
                          "levels": levels},
            "problems_generated": len(drawn),
            "problems": len(problems),
            "problem_names": [f"{p.domain}/{p.name}" for p in problems],
            "problems_dropped_as_equal_to_shipped_held_out_or_earlier": dropped,
            "episodes": len(episodes),
            "calls": len(rows),
            "dead_end_calls": sum(e["dead_end_calls"] for e in episodes),
            "success": sum(e["success"] for e in episodes),
            "model_wrote_expert_action": round(sum(e["model_wrote_expert_action"] for e in episodes) / n_actions, 4)
            if n_actions else None,
            "planners": planners,
            "seconds": round(time.perf_counter() - start, 1),
        }

    stopped = False
    for problem in tqdm(problems, desc="rollout", disable=not progress):
        d = domains()[problem.domain]
        for name in agents:
            episode = f"{problem.domain}/{problem.name}/{name}"
            if episode in played:
                continue
            if stop is not None and stop.is_set():
                stopped = True
                break
            mode = get_setting(setting).observation_mode
            env = make_env(d.domain_file, problem.path, text_file=d.text_file, max_episode_steps=max_steps,
                           **({"observation_mode": mode} if mode else {}))
            expert = StateExpert(env.unwrapped.world, Path(d.domain_file), problem.path,
                                 Path(d.text_file) if d.text_file else None, timeout=planner_timeout)
            record, calls = play_labelled(env, model, name, expert, setting=setting, detour=detour)
            env.close()
            for how, n in expert.how.items():
                planners[how] = planners.get(how, 0) + n
            rows += [json.dumps(_row(episode, name, problem.domain, problem.name, i, c, round_name))
                     for i, c in enumerate(calls)]
            n_actions, agree = _agreement(calls)
            summary = {
                "episode": episode, "agent": name, "domain": problem.domain, "problem": problem.name,
                "success": record.success, "progress": record.progress, "steps": record.steps,
                "calls": len(calls), "dead_end_calls": sum(c.reply is None for c in calls),
                "action_calls": n_actions, "model_wrote_expert_action": agree,
                "seconds": round(record.run_time_s, 1), "planners": dict(expert.how),
            }
            episodes.append(summary)
            if on_episode:
                on_episode(summary)
            # written as we go: an interrupted round keeps what it played, and resumes from it
            atomic_write(calls_path, "".join(line + "\n" for line in rows))
            atomic_write(episodes_path, "".join(json.dumps(e) + "\n" for e in episodes))
            atomic_write(out / "manifest.json", json.dumps(manifest(False), indent=2) + "\n")
        if stopped:
            break
    if not rows:
        atomic_write(calls_path, "")
        atomic_write(episodes_path, "")
    final = manifest(not stopped)
    atomic_write(out / "manifest.json", json.dumps(final, indent=2) + "\n")
    return final
