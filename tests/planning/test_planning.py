"""The planner baseline: stored plans, solve() with each planner, timeouts, unsolvable problems, agents, CLI."""

from __future__ import annotations

import argparse
import json
import threading
import time

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401  (registers the environments)
from pddlworlds.agents.scripted import ExpertAgent, RandomAgent
from pddlworlds.artefacts.plans import plan_file, read_index
from pddlworlds.planning import (
    INDEX_COLUMNS,
    PLANNERS,
    ExpertStep,
    PlanStatus,
    expert_trajectory,
    format_plan,
    optimal_length,
    parse_plan,
    solve,
    store,
    stored_plan,
    update_index,
    validate_plan,
)
from pddlworlds.planning.cli import add_plan_parsers
from pddlworlds.planning.worker import tagged_pids
from pddlworlds.worlds.catalogue import domains, get_domain

pytestmark = pytest.mark.filterwarnings("ignore::pddlworlds.worlds.pddl.PDDLNormalisationWarning")

INDEX_ROWS = [r for r in read_index() if r.get("length", "").isdigit()]


def _distinct_tasks(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The first row of each (domain, problem, file content): a mixed split's solvable problems are copies
    of its base split's files (tests/unsolvable/test_impossible.py), and a plan file is shared by problem name, so a
    copy would replay the same plan on the same task again."""
    seen, kept = set(), []
    for row in rows:
        path = get_domain(row["domain"]).problem_file(row["problem"], row["split"])
        key = (row["domain"], row["problem"], path.read_bytes())
        if key not in seen:
            seen.add(key)
            kept.append(row)
    return kept


#: The public four's stored plans are validated on every run; the catalogue's ladders (1,800-odd plans, which
#: tests/worlds/test_catalogue_worlds.py replays on our engine) by unified-planning in the heavy run, the first
#: problem of each band of each split.
PUBLIC_DOMAINS = {name for name, domain in domains().items() if "agentboard" in domain.splits()}
ALL_ROWS = _distinct_tasks(INDEX_ROWS)
PLAYED_ROWS = [row for row in ALL_ROWS if row["domain"] in PUBLIC_DOMAINS]
LADDER_ROWS = [row for row in ALL_ROWS if row["domain"] not in PUBLIC_DOMAINS]

UNSOLVABLE_BLOCKS = """(define (problem cycle) (:domain blocksworld-4ops)
  (:objects a b)
  (:init (arm-empty) (on-table a) (on-table b) (clear a) (clear b))
  (:goal (and (on a b) (on b a))))
"""


def big_gripper(balls: int = 30) -> str:
    """A Gripper problem far beyond optimal planning: every ball from room a to room b, three rooms."""
    names = [f"ball{i}" for i in range(1, balls + 1)]
    init = " ".join(f"(ball {b}) (at {b} rooma)" for b in names)
    goal = " ".join(f"(at {b} roomb)" for b in names)
    return (f"(define (problem big) (:domain gripper-strips) (:objects rooma roomb roomc left right {' '.join(names)})"
            f" (:init (room rooma) (room roomb) (room roomc) (gripper left) (gripper right) (free left) (free right)"
            f" (at-robby rooma) {init}) (:goal (and {goal})))")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_plan_parsers(parser.add_subparsers(dest="command", required=True))
    return parser


# ---- stored plans ------------------------------------------------------------------------------


@pytest.mark.parametrize("row", PLAYED_ROWS, ids=[f"{r['domain']}-{r['split']}-{r['problem']}" for r in PLAYED_ROWS])
def test_stored_plan_is_valid(row):
    path = plan_file(row["domain"], row["problem"])
    if not path.is_file():
        pytest.skip(f"{path} not written yet")
    actions = parse_plan(path.read_text())
    assert len(actions) == int(row["length"])
    check = validate_plan(row["domain"], row["problem"], actions, split=row["split"])
    assert check.env_valid and check.goal_reached, check.message
    assert check.up_valid, check.message


@pytest.mark.heavy
@pytest.mark.parametrize("world", sorted({row["domain"] for row in LADDER_ROWS}))
def test_every_ladder_plan_is_valid(world):
    """The first plan of each band replays on our engine and, where unified-planning reads the files and has a
    validator for the problem's features, its validator accepts it (data-network's undefined values it
    cannot take)."""
    for row in (r for r in LADDER_ROWS if r["domain"] == world and r["problem"].endswith("-01")):
        actions = parse_plan(plan_file(row["domain"], row["problem"]).read_text())
        assert len(actions) == int(row["length"]), row["problem"]
        check = validate_plan(row["domain"], row["problem"], actions, split=row["split"])
        assert check.env_valid and check.goal_reached, (row["problem"], check.message)
        assert check.up_valid is not False, (row["problem"], check.message)


def test_optimal_length_reads_the_index(monkeypatch):
    rows = [
        {"domain": "gripper", "split": "agentboard", "problem": "prob01", "length": "11", "optimal": "true"},
        {"domain": "gripper", "split": "agentboard", "problem": "prob02", "length": "17", "optimal": "false"},
        {"domain": "gripper", "split": "agentboard", "problem": "prob03", "length": "", "optimal": "false"},
    ]
    monkeypatch.setattr(store, "read_index", lambda: rows)
    assert optimal_length("gripper", "prob01") == 11
    assert optimal_length("gripper", "prob01", split="generated") is None
    assert optimal_length("gripper", "prob02") is None
    assert optimal_length("gripper", "prob02", proven=False) == 17
    assert optimal_length("gripper", "prob03", proven=False) is None
    assert optimal_length("gripper", "prob99") is None


def test_plan_text_round_trip():
    actions = [("pick", ("ball1", "rooma", "left")), ("move", ("rooma", "roomb"))]
    text = format_plan(actions, ["optimal"])
    assert text.splitlines()[-2] == "; cost = 2 (unit cost)"
    assert parse_plan(text) == actions
    assert parse_plan("0: (PICK Ball1 roomA left) [1]\n") == [("pick", ("ball1", "rooma", "left"))]


def test_validate_plan_rejects_bad_plans():
    bad = validate_plan("blocksworld", "problem1", [("stack", ("b1", "b2"))])
    assert not bad.valid and not bad.env_valid and bad.up_valid is False and bad.steps_valid == 0
    short = validate_plan("blocksworld", "problem1", "(unstack b2 b3)\n(putdown b2)\n")
    assert not short.valid and short.steps_valid == 2 and not short.goal_reached and short.up_valid is False


def test_update_index_merges_rows(tmp_path):
    index = tmp_path / "index.csv"
    row = {"domain": "gripper", "split": "generated", "problem": "g10", "length": "5", "optimal": "true",
               "planner": "x", "method": "m", "solve_time_s": "1.0", "notes": ""}
    update_index([row, dict(row, problem="g2")], index)
    update_index([dict(row, problem="g10", length="4")], index)
    rows = read_index(index)
    assert [r["problem"] for r in rows] == ["g2", "g10"]  # natural order
    assert rows[1]["length"] == "4"
    assert (tmp_path / "index.csv.lock").exists()
    assert list(rows[0]) == INDEX_COLUMNS


def test_replay_on_the_world_and_case_insensitive_lookup():
    from pddlworlds.planning import replay, resolve_target, world_of

    target = resolve_target("blocksworld", "problem1")
    world = world_of(target)
    actions = stored_plan("blocksworld", "problem1") or list(solve("blocksworld", "problem1").actions)
    played = replay(world, actions, world.initial_state)
    assert played.goal and played.reason == "" and len(played.indices) == len(actions) == len(played.states) - 1
    shouted = [(s.upper(), tuple(a.upper() for a in args)) for s, args in actions]
    assert replay(world, shouted, world.initial_state).indices == played.indices
    assert world.action_of("STACK", ("nope", "b1")) is None
    short = replay(world, actions[:-1], world.initial_state)
    assert short.indices is not None and not short.goal
    bad = replay(world, [actions[1], *actions], world.initial_state)
    assert bad.indices is None and not bad.goal and bad.reason.startswith("step 1: (") and "not applicable" in bad.reason
    unknown = replay(world, [("fly", ("b1",))], world.initial_state)
    assert unknown.reason == "step 1: (fly b1) is not an action of this problem"


def test_planning_does_not_import_the_environment():
    """The planner sits above env.py: importing its whole front (and CLI) must not load the environment."""
    import subprocess
    import sys

    code = ("import sys, pddlworlds.planning, pddlworlds.planning.cli, pddlworlds.planning.worker; "
            "print(sorted(m for m in sys.modules if m == 'pddlworlds.env'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_worker_entry_point_rejects_wrong_arguments():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "pddlworlds.planning.worker", "only-one"], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 2 and "usage: python -m pddlworlds.planning.worker" in out.stderr


def test_run_killable_kills_the_whole_group(tmp_path):
    import sys

    from pddlworlds.planning.worker import run_killable

    script = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"
    with open(tmp_path / "log", "wb") as log:
        start = time.monotonic()
        run = run_killable([sys.executable, "-c", script], 1.5, cwd=tmp_path, stdout=log)
    assert run.timed_out and run.returncode is None and time.monotonic() - start < 10
    assert tagged_pids(run.token) == []
    with open(tmp_path / "log", "wb") as log:
        done = run_killable([sys.executable, "-c", "raise SystemExit(3)"], 30, cwd=tmp_path, stdout=log)
    assert not done.timed_out and done.returncode == 3


# ---- solve() -----------------------------------------------------------------------------------


@pytest.mark.parametrize("planner", sorted(PLANNERS))
def test_solve_small_problem(planner):
    plan = solve("blocksworld", "problem1", planner=planner, timeout=120)
    assert plan.solved, plan.message
    assert plan.optimal == PLANNERS[planner].admissible
    assert plan.status == (PlanStatus.SOLVED_OPTIMALLY if plan.optimal else PlanStatus.SOLVED_SATISFICING)
    assert plan.length == len(plan.actions) == len(plan.text)
    if plan.optimal:
        assert plan.length == 8
    assert validate_plan("blocksworld", "problem1", plan.actions).valid
    env = gym.make("pddlworlds/Blocksworld-v0", problem="problem1")
    env.reset()
    for text in plan.text:  # the texts are the environment's own
        assert text in env.unwrapped.valid_actions()
        *_, terminated, _, info = env.step(text)
    assert terminated and info["success"]
    assert tagged_pids(plan.details["worker_token"]) == []


@pytest.mark.parametrize("planner", ["fd-opt", "pyperplan-sat"])
def test_unsolvable_problem_from_files(tmp_path, planner):
    problem = tmp_path / "cycle.pddl"
    problem.write_text(UNSOLVABLE_BLOCKS)
    plan = solve(get_domain("blocksworld").domain_file, problem, planner=planner, timeout=120)
    assert plan.status == PlanStatus.UNSOLVABLE, plan.message
    assert plan.actions == () and plan.length is None and not plan.solved
    assert plan.problem == "cycle"


@pytest.mark.parametrize(("planner", "marker"), [("fd-opt", "fast-downward.py"), ("fd-opt-up", "pddlworlds.planning")])
def test_timeout_kills_every_planner_process(tmp_path, planner, marker):
    """Fast Downward's driver (fd-opt) and the unified-planning worker (fd-opt-up) alike: at the deadline
    the whole process group goes, the `downward` search binary included."""
    problem = tmp_path / "big.pddl"
    problem.write_text(big_gripper())
    seen: dict[int, str] = {}
    started: list[tuple[int, str]] = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            if started:
                for pid in tagged_pids(started[0][1]):
                    try:
                        with open(f"/proc/{pid}/cmdline", "rb") as handle:
                            seen[pid] = handle.read().replace(b"\0", b" ").decode(errors="replace")
                    except OSError:
                        pass
            time.sleep(0.1)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    timeout = 6.0
    plan = solve(get_domain("gripper").domain_file, problem, planner=planner, timeout=timeout,
                 _on_start=lambda pid, token: started.append((pid, token)))
    stop.set()
    watcher.join()
    assert plan.status == PlanStatus.TIMEOUT, plan.message
    assert timeout <= plan.time_s < timeout + 5
    assert any(marker in cmd for cmd in seen.values())  # the watcher saw the worker or the driver
    if planner == "fd-opt":  # the driver translates in about a second, then the search binary runs
        assert any(cmd.split(" ", 1)[0].endswith("/downward") for cmd in seen.values())
    time.sleep(0.2)
    assert tagged_pids(started[0][1]) == [], "a planner process outlived its timeout"
    for pid in seen:  # and nothing of it, e.g. `downward`, is left in any state
        try:
            with open(f"/proc/{pid}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        assert state in ("Z", "X"), f"process {pid} ({seen[pid][:80]}) is still alive"


# ---- agents ------------------------------------------------------------------------------------


def test_expert_replans_after_a_deviation():
    env = gym.make("pddlworlds/Blocksworld-v0", problem="problem3", step_budget=100)
    observation, info = env.reset()
    agent = ExpertAgent(replanners=(("fd-opt", 60.0), ("fd-sat", 60.0)))
    agent.reset(observation, info, env)
    first = agent._texts[0] if agent._texts else None
    deviation = next(a for a in env.unwrapped.valid_actions() if a != first)
    observation, _, terminated, _, info = env.step(deviation)
    for _ in range(60):
        if terminated:
            break
        action = agent.act(observation, info)
        observation, _, terminated, _, info = env.step(action)
        assert info["action_valid"], (action, observation)
    assert terminated and info["success"]
    assert agent.replans == 1


def test_expert_follows_the_stored_plan():
    rows = [r for r in INDEX_ROWS if r["domain"] == "blocksworld" and r["optimal"] == "true"
            and plan_file(r["domain"], r["problem"]).is_file()]
    if not rows:
        pytest.skip("no stored blocksworld plan yet")
    row = rows[0]
    env = gym.make("pddlworlds/Blocksworld-v0", split=row["split"], problem=row["problem"], step_budget=200)
    record = ExpertAgent().run(env)
    assert record.success and record.steps == int(row["length"])
    assert all(s.valid for s in record.trajectory)
    assert [e["event"] for e in record.memory] == ["stored plan"]


def test_random_agent_is_reproducible():
    env = gym.make("pddlworlds/Gripper-v0", problem="prob02", max_episode_steps=25)
    runs = [RandomAgent(seed=7).run(env, seed=s) for s in (0, 0, 1)]
    other = RandomAgent(seed=8).run(env, seed=0)
    actions = [[step.action for step in r.trajectory] for r in (*runs, other)]
    assert actions[0] == actions[1]  # same agent seed, episode seed and problem
    assert actions[0] != actions[2]  # another episode seed: another random episode
    assert actions[0] != actions[3]  # another agent seed
    assert all(step.valid for r in runs for step in r.trajectory)
    assert runs[0].agent == "random" and runs[0].flags == {"seed": 7}


# ---- expert trajectories and the CLI -----------------------------------------------------------


def test_expert_trajectory_and_jsonl(tmp_path):
    out = tmp_path / "expert.jsonl"
    args = _parser().parse_args(["expert", "--domain", "blocksworld", "--problems", "problem1", "--out", str(out)])
    assert args.func(args) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 1
    episode = json.loads(lines[0])
    assert set(episode) == {"domain", "problem", "split", "optimal_length", "steps"}
    assert (episode["domain"], episode["problem"], episode["split"]) == ("blocksworld", "problem1", "agentboard")
    assert episode["optimal_length"] in (None, 8)
    steps = episode["steps"]
    assert steps and all(set(s) == {"observation", "action", "next_observation", "progress"} for s in steps)
    env = gym.make("pddlworlds/Blocksworld-v0", problem="problem1")
    observation, _ = env.reset()
    for step in steps:
        assert step["observation"] == observation
        observation, _, terminated, _, info = env.step(step["action"])
        assert info["action_valid"] and observation == step["next_observation"]
        assert step["progress"] == pytest.approx(info["progress"])
    assert terminated and steps[-1]["progress"] == 1.0
    stored = stored_plan("blocksworld", "problem1")
    if stored is not None:  # then the trajectory is the stored plan, and costs no planning
        assert len(steps) == len(stored)
        again = expert_trajectory("blocksworld", "problem1")
        assert all(isinstance(s, ExpertStep) for s in again)
        assert [s.action for s in again] == [s["action"] for s in steps]


def test_cmd_plan_json(capsys):
    args = _parser().parse_args(["plan", "gripper", "prob01", "--planner", "pyperplan-sat", "--format", "json"])
    assert args.func(args) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "solved_satisficing" and result["length"] == len(result["actions"]) > 0
    assert validate_plan("gripper", "prob01", [(s, tuple(a)) for s, a in result["actions"]]).valid


@pytest.mark.parametrize("domain", sorted(PUBLIC_DOMAINS))
def test_expert_solves_every_public_problem_in_the_optimal_number_of_steps(domain):
    import gymnasium as gym

    from pddlworlds.agents.scripted import ExpertAgent
    from pddlworlds.registration import env_id
    from pddlworlds.worlds.catalogue import get_domain

    env = gym.make(env_id(domain), step_budget=40)  # Tyreworld p04 needs 39
    for problem in get_domain(domain).problems("agentboard"):
        record = ExpertAgent().run(env, options={"problem": problem})
        assert record.success, problem
        assert record.steps == optimal_length(domain, problem) == record.optimal_length, problem


def test_the_timeout_covers_reading_and_grounding_too():
    """The budget is the whole call's: work done before the planner starts counts against it,
    and a budget spent there ends in TIMEOUT without starting a planner process."""
    from pddlworlds.planning import resolve_target, solve_target

    started = []
    target = resolve_target("blocksworld", "problem1")
    plan = solve_target(target, "fd-opt", timeout=1e-9, on_start=lambda *a: started.append(a))
    assert plan.status is PlanStatus.TIMEOUT and "reading and grounding" in plan.message
    assert started == []
