"""Time the viewer on a 600-episode run: build the page, open it in headless Chromium, time the first render.

    python scripts/bench_viewer.py [--episodes 600] [--seed 0] [--keep DIR]

The run is synthetic but shaped like a real one: HiAgent and STANDARD episodes (alternating) on every public
problem, each played in the real environment for up to 30 steps by a seeded random policy (about one action
in six invalid text, one in twelve a valid-action listing), with the observations the environment gives, one
action call per step (token counts that grow with the history, latencies), and the working memory each agent
would send: STANDARD's full history, HiAgent's subgoals (a new one every 3-7 steps, finished ones folded into a
summary, with the summary call recorded, and now and then a retrieval).

Prints the page's size, the Python build time, and in Chromium (Debian's, via Playwright): the time from
navigation start to the first painted frame of the complete run page (the 600-row table, summary, curves),
measured by the page itself, and the wall time of the same load; the time until the whole file is parsed (the
episodes' data blocks follow the run page's script, so the run page renders before they are read); then the
time to open the longest episode.
The target is a first render under 2 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from pddlworlds.artefacts.runs import CONFIG_FILE, EPISODES_FILE, json_line, read_episodes
from pddlworlds.worlds.catalogue import DEFAULT_MAX_EPISODE_STEPS

AGENTS = ("hiagent", "standard")
JUNK = ("dance wildly", "pick up the sky", "stack everything", "go home", "open the door")


def play(env, agent: str, domain: str, problem: str, seed: int, rng: np.random.Generator) -> dict:
    observation, info = env.reset(seed=seed, options={"problem": problem})
    initial, goal = observation, info["goal"]
    pairs: list[tuple[str, str]] = []
    finished: list[str] = []
    subgoal_index, subgoal_left, current = 1, int(rng.integers(3, 8)), []
    trajectory = []
    started = time.perf_counter()
    for index in range(1, DEFAULT_MAX_EPISODE_STEPS + 1):
        calls = []
        if agent == "hiagent" and subgoal_left == 0:
            calls.append(
                _call(rng, "summary", 700 + 40 * len(current), 20, "Met: yes\nSummary: " + observation[:120])
            )
            finished.append(
                f"Subgoal {subgoal_index}: reach part {subgoal_index} of the goal\n"
                f"Summary (met: yes): {observation[:160]}\n"
            )
            subgoal_index, subgoal_left, current = subgoal_index + 1, int(rng.integers(3, 8)), []
        if agent == "hiagent" and finished and rng.random() < 0.05:
            k = int(rng.integers(1, len(finished) + 1))
            calls.append(_call(rng, "retrieve", 700 + 40 * len(current), 4, f"Action: retrieve({k})"))
            current.append(
                (
                    f"retrieve({k})",
                    f"Retrieved subgoal {k} (reach part {k} of the goal):\n"
                    + "".join(f"  Action: {a}\n  Observation: {o}\n" for a, o in pairs[:3]),
                )
            )
        roll = rng.random()
        valid = env.valid_actions()
        if roll < 1 / 6 or not valid:
            action = JUNK[int(rng.integers(len(JUNK)))]
        elif roll < 1 / 6 + 1 / 12:
            action = "check valid actions"
        else:
            action = valid[int(rng.integers(len(valid)))]
        if agent == "hiagent":
            memory = (
                "".join(finished)
                + f"Subgoal {subgoal_index}: reach part {subgoal_index} of the goal\n"
                + "".join(
                    f"Action: {a}\n" + (o if a.startswith("retrieve") else f"Observation: {o}\n")
                    for a, o in current
                )
            )
        else:
            memory = "".join(f"Action: {a}\nObservation: {o}\n" for a, o in pairs)
        raw = (
            f"Subgoal: reach part {subgoal_index} of the goal\n" if agent == "hiagent" and not current else ""
        )
        raw += f"Action: {action}"
        calls.append(_call(rng, "action", 600 + len(memory) // 4, len(raw.split()), raw))
        observation, _, terminated, _, info = env.step(action)
        pairs.append((action, observation))
        current.append((action, observation))
        subgoal_left -= 1
        trajectory.append(
            {
                "index": index,
                "action": action,
                "observation": observation,
                "valid": info["action_valid"],
                "action_kind": info["action_kind"],
                "progress": info["progress"],
                "prompt_tokens": calls[-1]["prompt_tokens"],
                "completion_tokens": calls[-1]["completion_tokens"],
                "latency_s": calls[-1]["latency_s"],
                "raw_output": raw,
                "subgoal_index": subgoal_index if agent == "hiagent" else None,
                "subgoal": f"reach part {subgoal_index} of the goal" if agent == "hiagent" else None,
                "memory_view": memory,
                "calls": calls,
            }
        )
        if terminated:
            break
    return {
        "agent": agent,
        "domain": domain,
        "split": "agentboard",
        "problem": problem,
        "seed": seed,
        "success": bool(info["success"]),
        "progress": info["progress"],
        "steps": len(trajectory),
        "optimal_length": info["optimal_length"],
        "run_time_s": time.perf_counter() - started,
        "goal": goal,
        "initial_observation": initial,
        "flags": {"agent": agent},
        "model": "synthetic",
        "trajectory": trajectory,
        "memory": [],
        "error": None,
        "meta": {"agent_name": agent, "max_steps": DEFAULT_MAX_EPISODE_STEPS},
    }


def _call(rng: np.random.Generator, purpose: str, prompt: int, completion: int, raw: str) -> dict:
    return {
        "purpose": purpose,
        "prompt_tokens": int(prompt),
        "completion_tokens": int(completion),
        "latency_s": round(float(rng.uniform(0.2, 2.5)), 3),
        "raw_output": raw,
        "error": None,
    }


def make_run(folder: Path, episodes: int, seed: int) -> None:
    import gymnasium as gym

    import pddlworlds  # noqa: F401  (registers the environments)
    from pddlworlds.registration import env_id
    from pddlworlds.worlds.catalogue import domains

    rng = np.random.default_rng(seed)
    problems = [(name, p) for name, d in domains().items() for p in d.problems("agentboard")]
    envs = {name: gym.make(env_id(name)).unwrapped for name in domains()}
    lines = []
    n = 0
    while len(lines) < episodes:
        domain, problem = problems[n % len(problems)]
        agent = AGENTS[(n // len(problems)) % len(AGENTS)]
        run_seed = n // (len(problems) * len(AGENTS))
        lines.append(play(envs[domain], agent, domain, problem, run_seed, rng))
        n += 1
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "format": 1,
        "agents": {a: {} for a in AGENTS},
        "split": "agentboard",
        "max_steps": DEFAULT_MAX_EPISODE_STEPS,
        "seeds": sorted({ln["seed"] for ln in lines}),
        "llm": {"backend": "synthetic", "model": "synthetic"},
        "prompts_version": "synthetic",
    }
    (folder / CONFIG_FILE).write_text(json.dumps(config, indent=2))
    (folder / EPISODES_FILE).write_bytes(b"".join(json_line(line) for line in lines))  # the run folder's own line form


def measure(page: Path, repeats: int) -> tuple[list[float], list[float], list[float], list[float]]:
    from playwright.sync_api import sync_playwright

    from pddlworlds.testing.browser import launch

    in_page, wall, episode, loaded = [], [], [], []
    with sync_playwright() as p:
        browser = launch(p)
        longest = max(
            range(len(json.loads(_run_data(page))["episodes"])),
            key=lambda i: json.loads(_run_data(page))["episodes"][i]["steps"],
        )
        for _ in range(repeats):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            tab = context.new_page()
            start = time.perf_counter()
            tab.goto(page.as_uri(), wait_until="commit")
            tab.wait_for_selector("body[data-rendered]", timeout=60_000)
            wall.append(time.perf_counter() - start)
            in_page.append(float(tab.get_attribute("body", "data-rendered")) / 1000)
            tab.wait_for_selector("body[data-loaded]", timeout=60_000)
            loaded.append(float(tab.get_attribute("body", "data-loaded")) / 1000)
            rows = tab.eval_on_selector_all("#episodes tbody tr", "rows => rows.length")
            if rows != len(json.loads(_run_data(page))["episodes"]):
                raise SystemExit(f"the run page shows {rows} rows")
            t0 = tab.evaluate("performance.now()")
            tab.evaluate(f"location.hash = '#ep/{longest}'")
            tab.wait_for_selector("body[data-page='ep']")
            t1 = tab.evaluate(
                "new Promise(r => requestAnimationFrame(() => setTimeout(() => r(performance.now()), 0)))"
            )
            episode.append((t1 - t0) / 1000)
            context.close()
        browser.close()
    return in_page, wall, episode, loaded


def _run_data(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    start = text.index('id="run-data">') + len('id="run-data">')
    return text[start : text.index("</script>", start)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=5, help="page loads to time (default: 5)")
    parser.add_argument("--keep", type=Path, default=None, help="make the run and page in this folder")
    args = parser.parse_args(argv)

    from pddlworlds.testing.browser import unavailable_reason
    from pddlworlds.viewer import write_page

    reason = unavailable_reason()
    if reason:
        print(f"cannot measure: {reason}", file=sys.stderr)
        return 1
    warnings.simplefilter("ignore")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="pddlworlds-bench-viewer-")) / "run"
    t = time.perf_counter()
    make_run(folder, args.episodes, args.seed)
    made = time.perf_counter() - t
    t = time.perf_counter()
    page = write_page([folder], folder / "view.html")
    built = time.perf_counter() - t
    jsonl_mb = (folder / EPISODES_FILE).stat().st_size / 1e6
    page_mb = page.stat().st_size / 1e6
    steps = sum(line["steps"] for line in read_episodes(folder / EPISODES_FILE).lines)
    print(
        f"run: {args.episodes} episodes, {steps} steps, {EPISODES_FILE} {jsonl_mb:.1f} MB (made in {made:.1f} s)"
    )
    print(f"page: {page} {page_mb:.1f} MB, built in {built:.1f} s (replay included)")
    in_page, wall, episode, loaded = measure(page, args.repeats)
    print(
        f"first full render of the run page in Chromium (navigation start -> first painted frame), "
        f"{args.repeats} loads: median {statistics.median(in_page):.2f} s, max {max(in_page):.2f} s "
        f"(target < 2 s)"
    )
    print(f"wall time of the same loads (goto -> rendered): median {statistics.median(wall):.2f} s")
    print(f"whole file parsed (every episode can open): median {statistics.median(loaded):.2f} s")
    print(f"opening the longest episode: median {statistics.median(episode):.2f} s")
    return 0 if max(in_page) < 2.0 else 3


if __name__ == "__main__":
    sys.exit(main())
