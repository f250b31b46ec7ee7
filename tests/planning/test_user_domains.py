"""Domains of one's own and action costs end to end: `plan`/`list` on a `--domains-root` or on files, plan
files that say their cost, the planner's optimal baselines kept per run, and cost beside length in the
report."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from pddlworlds import make_env
from pddlworlds.cli import main as cli_main
from pddlworlds.evaluation.runner import run_evaluation
from pddlworlds.evaluation.spec import RunPlan
from pddlworlds.listing import file_rows, problem_rows
from pddlworlds.planning import baselines as B
from pddlworlds.planning.store import format_plan
from pddlworlds.records import EpisodeRecord
from pddlworlds.reports.report import write_report
from pddlworlds.scoring import metrics as M
from pddlworlds.worlds.pddl import PDDLError

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pddl"
ROADS = FIXTURES / "roads"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A folder of domain folders laid out as pddl_domains/: roads (action costs) with one problem."""
    folder = tmp_path / "mine" / "roads"
    (folder / "problems" / "agentboard").mkdir(parents=True)
    shutil.copy(ROADS / "domain.pddl", folder / "domain.pddl")
    shutil.copy(ROADS / "problem.pddl", folder / "problems" / "agentboard" / "p01.pddl")
    return tmp_path / "mine"


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli_main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---- plan files say what they cost ----------------------------------------------------------------


def test_format_plan_writes_general_cost_for_a_costed_plan() -> None:
    actions = [("drive", ("a", "b")), ("drive", ("b", "c"))]
    assert format_plan(actions).splitlines()[-1] == "; cost = 2 (unit cost)"
    assert format_plan(actions, cost=5).splitlines()[-1] == "; cost = 5 (general cost)"
    assert format_plan(actions, ["note"], cost=0).splitlines()[-2:] == ["; cost = 0 (general cost)", "; note"]


def test_plan_on_a_domains_root_gives_the_cost_optimal_plan(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["plan", "--domains-root", str(root), "roads", "p01", "--timeout", "60"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    # driving a-b-c costs 2 + 3 = 5; flying a-c then b costs 20 and driving a-c costs 7 but misses b
    assert lines[1:] == ["(drive a b)", "(drive b c)", "; cost = 5 (general cost)"]
    assert "cost 5" in lines[0] and "solved_optimally" in lines[0]


def test_plan_domains_root_refuses_a_name_it_does_not_hold(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["plan", "--domains-root", str(root), "blocksworld", "problem1"], capsys)
    assert code == 2 and "unknown domain 'blocksworld'" in err and "domains: roads" in err


# ---- list ---------------------------------------------------------------------------------------


def test_list_a_domains_root_and_files(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = problem_rows(domains_root=root, ground_problems=True)
    assert [(r["domain"], r["split"], r["problem"]) for r in rows] == [("roads", "agentboard", "p01")]
    assert rows[0]["objects"] == 3 and rows[0]["ground_actions"] and rows[0]["optimal"] is None
    assert rows[0]["solvable"] == "?"
    files = file_rows(ROADS / "domain.pddl", [ROADS / "problem.pddl"])
    assert [(r["domain"], r["split"], r["problem"], r["goal"]) for r in files] == [("roads", "custom", "problem", 2)]

    code, out, err = run_cli(["list", "--domains-root", str(root), "--format", "json"], capsys)
    assert code == 0, err
    assert [r["problem"] for r in json.loads(out)] == ["p01"]
    code, out, err = run_cli(["list", "--domain-file", str(ROADS / "domain.pddl"), "--problem-files",
                              str(ROADS / "problem.pddl"), "--format", "csv"], capsys)
    assert code == 0, err
    assert next(iter(csv.DictReader(out.splitlines())))["split"] == "custom"


@pytest.mark.parametrize(("argv", "expected"), [
    (["--problem-files", "p.pddl"], "--problem-files needs --domain-file"),
    (["--domain-file", "d.pddl"], "--domain-file needs --problem-files"),
    (["--domain-file", "d.pddl", "--problem-files", "p.pddl", "--domain", "roads"], "leave out"),
])
def test_list_refuses_half_given_files(argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["list", *argv], capsys)
    assert code == 2 and expected in err


def test_list_refuses_a_root_that_is_not_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["list", "--domains-root", str(tmp_path / "none")], capsys)
    assert code == 2 and "is not a folder" in err


# ---- the reachability bound is a size guard like the others --------------------------------------


def test_max_explored_is_an_environment_size_guard() -> None:
    with pytest.raises(PDDLError, match="MAX_EXPLORED"):
        make_env(ROADS / "domain.pddl", ROADS / "problem.pddl", max_explored=3)
    env = make_env(ROADS / "domain.pddl", ROADS / "problem.pddl", max_explored=10_000)
    assert env.unwrapped.action_costs


# ---- baselines ------------------------------------------------------------------------------------


def test_baselines_are_planned_once_kept_and_filled_in(root: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "run" / B.BASELINES_FILE
    path.parent.mkdir()
    notes: list[str] = []
    found = B.ensure_baselines(path, root, {"roads": ["p01"]}, "agentboard", timeout=60, note=notes.append)
    baseline = found[("roads", "agentboard", "p01")]
    assert (baseline.length, baseline.cost, baseline.proven, baseline.action_costs) == (2, 5, True, True)
    assert "proven optimal" in baseline.message and notes == ["optimal plan of roads/p01: length 2, cost 5"]
    assert B.read_baselines(path) == found

    def no_planning(*args, **kwargs):
        raise AssertionError("a kept baseline was planned again")

    monkeypatch.setattr(B, "solve", no_planning)
    assert B.ensure_baselines(path, root, {"roads": ["p01"]}, "agentboard") == found

    line = {"domain": "roads", "split": "agentboard", "problem": "p01", "optimal_length": None}
    assert B.fill_optimal(dict(line), found) == {**line, "optimal_length": 2, "optimal_cost": 5}
    other = {**line, "problem": "p02"}
    assert B.fill_optimal(dict(other), found) == other


def test_an_unproven_baseline_says_why_and_fills_nothing(root: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from pddlworlds.planning.results import Plan, PlanStatus

    def timed_out(domain, problem, **kwargs):
        return Plan(domain, problem, "fd-opt", PlanStatus.TIMEOUT, message="no plan within 1 s",
                    details={"action_costs": True})

    monkeypatch.setattr(B, "solve", timed_out)
    path = tmp_path / B.BASELINES_FILE
    found = B.ensure_baselines(path, root, {"roads": ["p01"]}, "agentboard", timeout=1)
    baseline = found[("roads", "agentboard", "p01")]
    assert not baseline.proven and baseline.length is None and baseline.message == "not proven: no plan within 1 s"
    row = next(csv.DictReader(path.open()))
    assert row["proven"] == "false" and row["status"] == "timeout" and row["timeout_s"] == "1"
    line = {"domain": "roads", "split": "agentboard", "problem": "p01", "optimal_length": None}
    assert B.fill_optimal(dict(line), found) == line


def test_a_broken_baselines_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / B.BASELINES_FILE
    path.write_text("domain,split,problem,length\nroads,agentboard,p01,two\n")
    with pytest.raises(ValueError, match=f"{B.BASELINES_FILE}, line 2: not a baseline row"):
        B.read_baselines(path)


# ---- cost in episodes and in the report -----------------------------------------------------------


def test_eval_on_a_domains_root_plans_baselines_and_reports_cost(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    plan = RunPlan(agents=["expert"], problems={"roads": ["p01"]}, max_steps=5, domains_root=str(root))
    result = run_evaluation(plan, out, progress=False, baseline_timeout=60)
    assert result.complete
    line = result.lines[0]
    assert (line["optimal_length"], line["optimal_cost"], line["cost"], line["success"]) == (2, 5, 5, True)
    kept = B.read_baselines(out / B.BASELINES_FILE)[("roads", "agentboard", "p01")]
    assert kept.proven and kept.cost == 5
    text = write_report(out, plots=False).read_text()
    assert "| cost (solved) | cost / optimal |" in text
    assert "| Roads | expert (planner) | 1/1 | 1 | 1.00 | 0.0 | 5.0 | 1.00 |" in text


def test_trials_plan_the_baselines_once_and_fill_every_trial(root: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from pddlworlds.evaluation.trials import run_trials, trial_dir

    planned: list[str] = []
    solve = B.solve

    def counted(domain, problem, **kwargs):
        planned.append(str(problem))
        return solve(domain, problem, **kwargs)

    monkeypatch.setattr(B, "solve", counted)
    out = tmp_path / "trials"
    plan = RunPlan(agents=["expert"], problems={"roads": ["p01"]}, max_steps=5, domains_root=str(root))
    result = run_trials(plan, out, 2, progress=False, baseline_timeout=60)
    assert result.complete and planned == ["p01", "p01"]  # the cheapest plan and the shortest: once, not per trial
    for trial in (1, 2):
        [line] = result.results[trial - 1].lines
        assert (line["optimal_length"], line["optimal_cost"]) == (2, 5)
        assert B.read_baselines(trial_dir(out, trial) / B.BASELINES_FILE)[("roads", "agentboard", "p01")].proven


def record(cost: int | None, optimal_cost: int | None, success: bool = True) -> EpisodeRecord:
    return EpisodeRecord("standard", "roads", "agentboard", "p01", 0, success, 1.0 if success else 0.5, 3, 2, 0.1,
                         "goal", "obs", cost=cost, optimal_cost=optimal_cost)


def test_cost_metrics_count_solved_costed_episodes_only() -> None:
    rows = [M.episode_metrics(r, 30) for r in (record(10, 5), record(5, 5), record(7, 5, success=False))]
    agg = M.aggregate([record(10, 5), record(5, 5), record(7, 5, success=False)], 30)
    assert [r["cost_over_optimal"] for r in rows] == [2.0, 1.0, None]
    assert agg["cost"] == 7.5 and agg["cost_over_optimal"] == 1.5
    assert M.episode_metrics(record(None, None), 30)["cost_over_optimal"] is None
    assert M.episode_metrics(record(0, 0), 30)["cost_over_optimal"] == 1.0


def test_report_leaves_cost_columns_out_without_action_costs(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "episodes.jsonl").write_text(json.dumps(record(None, None).to_dict()) + "\n")
    assert "cost / optimal" not in write_report(out, plots=False).read_text()
    (out / "episodes.jsonl").write_text(json.dumps(record(6, 5).to_dict()) + "\n")
    assert "| cost (solved) | cost / optimal |" in write_report(out, plots=False).read_text()


def test_records_without_cost_still_load() -> None:
    data = record(None, None).to_dict()
    del data["cost"], data["optimal_cost"]
    assert EpisodeRecord.from_stored(data).cost is None


def test_a_shipped_unit_cost_episode_records_no_cost() -> None:
    from pddlworlds.agents.scripted import ExpertAgent

    env = make_env(ROADS / "domain.pddl", ROADS / "problem.pddl")
    costed = ExpertAgent(use_stored=False).run(env, seed=0)
    assert costed.success and costed.cost == 5
    from pddlworlds.registration import make_domain_env

    plain = ExpertAgent().run(make_domain_env("blocksworld", None, max_episode_steps=30), seed=0,
                              options={"problem": "problem1"})
    assert plain.success and plain.cost is None and plain.optimal_cost is None


def test_eval_optimal_timeout_zero_plans_no_baselines(root: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code, _, err = run_cli(["eval", "--agents", "random", "--domains-root", str(root), "--domains", "roads",
                            "--max-steps", "2", "--optimal-timeout", "0", "--out", str(out), "--no-progress"], capsys)
    assert code == 0, err
    assert not (out / B.BASELINES_FILE).exists()
    line = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    assert line["optimal_length"] is None and line["optimal_cost"] is None


def test_the_inspect_record_keeps_the_cost_of_a_costed_domain() -> None:
    """The Inspect task's record carries `cost` as `Agent.run`'s does (`record_of` reads the env's costs)."""
    from pddlworlds.frameworks.inspect_task import StepLog, record_of

    env = make_env(ROADS / "domain.pddl", ROADS / "problem.pddl")
    from pddlworlds.agents.scripted import ExpertAgent

    expected = ExpertAgent(use_stored=False).run(env, seed=0)
    log = StepLog(make_env(ROADS / "domain.pddl", ROADS / "problem.pddl"))
    log.reset(seed=0)
    for step in expected.trajectory:
        log.step(step.action)
    logged = record_of(log, "expert", None, 0, 0.0)
    assert logged.success and logged.cost == expected.cost == 5
    from pddlworlds.registration import make_domain_env

    plain = StepLog(make_domain_env("blocksworld", None, max_episode_steps=30))
    plain.reset(seed=0, options={"problem": "problem1"})
    plain.step("look around")
    assert record_of(plain, "expert", None, 0, 0.0).cost is None
