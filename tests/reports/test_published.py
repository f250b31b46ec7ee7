"""The published AgentBoard results: the index-to-problem mapping checked on all 60 problems, the pooled
means against AgentBoard's leaderboard, and the report and viewer showing them beside a run."""

from __future__ import annotations

import json
import math
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from pddlworlds.artefacts.plans import optimal_lengths
from pddlworlds.evaluation import RunPlan, run_evaluation
from pddlworlds.published import (
    MODELS,
    PublishedError,
    load_model,
    parse_results,
    pooled,
    problem_order,
    published_results,
)
from pddlworlds.reports.report import write_report
from pddlworlds.viewer import build_html, page_data, read_run
from pddlworlds.worlds.catalogue import domains

FIXTURE_RUN = Path(__file__).parents[1] / "fixtures" / "eval_run"

#: The means of the published files' README (AgentBoard's leaderboard table to the rounding): SR %, PR %.
README_MEANS = {
    "gpt-4": (61.7, 81.2),
    "claude2": (40.0, 61.4),
    "text-davinci-003": (11.7, 31.7),
    "gpt-35-turbo": (5.0, 25.0),
    "gpt-35-turbo-16k": (3.3, 22.6),
    "deepseek-67b": (6.7, 22.0),
    "codellama-34b": (3.3, 18.5),
    "lemur-70b": (3.3, 9.7),
    "codellama-13b": (1.7, 9.3),
    "llama2-70b": (1.7, 8.1),
    "vicuna-13b-16k": (1.7, 7.2),
    "llama2-13b": (0.0, 4.1),
}


@pytest.fixture(scope="module")
def facts() -> dict[tuple[str, str], tuple[int, int]]:
    """(domain, problem) -> (number of goal conditions, proven optimal plan length), from our own files
    (the problems parse once per test session: the session's task cache keeps them)."""
    out = {}
    for name, domain in domains().items():
        if "agentboard" not in domain.splits():  # the catalogue's other worlds have no published problems
            continue
        lengths = optimal_lengths(name, "agentboard")
        for problem in domain.problems("agentboard"):
            out[(name, problem)] = (len(domain.load(problem, "agentboard").goal), lengths[problem])
    return out


def conflicts(
    order: list[tuple[str, str]], known: dict[tuple[str, str], tuple[int, int]]
) -> dict[int, list[str]]:
    """Line -> what contradicts placing line i of every published file on problem `order[i]`:
    - a progress rate is (conditions met) / (goal conditions), so every value times the goal size is whole;
    - no episode reaches full progress in fewer steps than the optimal plan has actions."""
    raw = {model: load_model(model) for model in MODELS}
    found: dict[int, list[str]] = {}
    for i, key in enumerate(order):
        goal_size, optimal = known[key]
        for model, episodes in raw.items():
            e = episodes[i]
            values = [e.progress] + [p for _, p in e.rises or ()]
            if any(abs(v * goal_size - round(v * goal_size)) > 1e-6 for v in values):
                found.setdefault(i, []).append(
                    f"{key}: {model} progress {values} not in steps of 1/{goal_size}"
                )
            step = e.full_progress_step
            if step is not None and step < optimal:
                found.setdefault(i, []).append(
                    f"{key}: {model} reached the goal at step {step} < optimal {optimal}"
                )
    return found


def least_denominator(values: list[float]) -> int:
    return math.lcm(*(Fraction(v).limit_denominator(100).denominator for v in values))


def test_the_mapping_holds_problem_by_problem_on_all_60(facts: dict) -> None:
    known = facts
    order = problem_order()
    assert len(order) == 60 and sorted(order) == sorted(known), (
        "the mapping must name each public problem once"
    )
    assert conflicts(order, known) == {}
    # The increments pin the goal size itself, not a multiple of it, wherever some model made partial progress.
    raw = published_results()
    for i, key in enumerate(order):
        values = [v for eps in raw.values() for v in [eps[i].progress, *(p for _, p in eps[i].rises or ())]]
        if any(0 < v < 1 for v in values):
            assert least_denominator(values) == known[key][0], key
    # And the steps are tight: on these problems some model reached the goal in exactly the optimal length.
    tight = {
        key
        for i, key in enumerate(order)
        if any(eps[i].full_progress_step == known[key][1] for eps in raw.values())
    }
    assert tight == {
        ("gripper", "prob02"),
        ("gripper", "prob03"),
        ("gripper", "prob04"),
        ("gripper", "prob18"),
        ("barman", "p14"),
        ("barman", "p15"),
        ("barman", "p17"),
        ("barman", "p19"),
        ("tyreworld", "p06"),
        ("tyreworld", "p09"),
    }


def test_other_orders_fail_the_same_check(facts: dict) -> None:
    """The check tells orders apart: the domain order guessed from the increments alone (Barman before
    Blocksworld) and Blocksworld in natural order (pddlgym sorts file names as text) both contradict it."""
    known = facts
    right = problem_order()
    by_domain = {
        d: [k for k in right if k[0] == d] for d in ("gripper", "blocksworld", "barman", "tyreworld")
    }
    guessed = by_domain["gripper"] + by_domain["barman"] + by_domain["blocksworld"] + by_domain["tyreworld"]
    natural = sorted(by_domain["blocksworld"], key=lambda k: int(k[1].removeprefix("problem")))
    renumbered = by_domain["gripper"] + natural + by_domain["barman"] + by_domain["tyreworld"]
    assert len(conflicts(guessed, known)) == 17
    wrong = conflicts(renumbered, known)
    assert len(wrong) == 6
    too_fast = {i for i, found in wrong.items() if any("< optimal" in c for c in found)}
    assert [renumbered[i] for i in sorted(too_fast)] == [
        ("blocksworld", "problem4"),
        ("blocksworld", "problem6"),
    ]


def test_pooled_means_are_the_leaderboards() -> None:
    results = published_results()
    assert list(results) == list(README_MEANS)
    for model, (sr, pr) in README_MEANS.items():
        scores = pooled(results[model])
        assert scores.episodes == 60
        assert (round(100 * scores.success_rate, 1), round(100 * scores.progress_rate, 1)) == (sr, pr), model
    # One domain's problems (docs/agentboard.md's per-domain columns): GPT-4 on Blocksworld and Barman.
    for domain, expected in (("blocksworld", (50.0, 75.0)), ("barman", (75.0, 82.5))):
        scores = pooled(results["gpt-4"], [k for k in problem_order() if k[0] == domain])
        assert (
            scores.episodes,
            round(100 * scores.success_rate, 1),
            round(100 * scores.progress_rate, 1),
        ) == (
            10 if domain == "blocksworld" else 20,
            *expected,
        )


def test_steps_are_ours_and_missing_ones_are_marked() -> None:
    gpt4 = load_model("gpt-4")[0]
    assert (gpt4.domain, gpt4.problem) == ("gripper", "prob01")
    assert gpt4.rises == (
        (3, 0.25),
        (7, 0.5),
        (11, 0.75),
        (15, 1.0),
    )  # logged 0-based as (2, .25) ... (14, 1.0)
    assert gpt4.progress_at(6) == 0.25 and gpt4.progress_at(15) == 1.0 and gpt4.full_progress_step == 15
    deepseek = load_model("deepseek-67b")
    assert all(e.rises is None and e.progress_at(30) is None for e in deepseek)
    assert pooled(deepseek, [("gripper", "prob01")]).episodes == 1


def test_a_bad_file_is_named_with_its_line() -> None:
    order = problem_order()[:2]
    good = "[EXP] 0: [sr]: 1, [score]: 1.0, [grounding_acc]: 1.0, [score_state]: [(0, 1.0)] \n"
    with pytest.raises(PublishedError, match=r"x\.txt, line 2: not an \[EXP\] line"):
        parse_results(good + "[EXP] 1: garbage\n", "m", order, source="x.txt")
    with pytest.raises(PublishedError, match=r"x\.txt: 1 episodes, expected 2"):
        parse_results(good, "m", order, source="x.txt")
    with pytest.raises(PublishedError, match=r"x\.txt, line 1: episode 1, expected 0"):
        parse_results(good.replace("[EXP] 0", "[EXP] 1"), "m", order, source="x.txt")
    with pytest.raises(ValueError, match="no published results for model 'gpt-5'"):
        load_model("gpt-5")


# ---- the report and the viewer ------------------------------------------------------------------------

PROBLEMS = {"blocksworld": ["problem1", "problem2"], "gripper": ["prob01"], "barman": ["p14"]}


@pytest.fixture(scope="module")
def agentboard_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("published") / "run"
    plan = RunPlan(
        agents=["expert", "random"], problems=PROBLEMS, seeds=[0], max_steps=30, profile="agentboard"
    )
    run_evaluation(plan, out, progress=False)
    return out


def test_report_sets_an_agentboard_run_beside_the_published_models(agentboard_run: Path) -> None:
    text = write_report(agentboard_run).read_text()
    section = text[text.index("## Beside the models AgentBoard published") :]
    assert "the 4 problems of the 60 that this run played" in section
    gpt4 = pooled(load_model("gpt-4"), [(d, p) for d, ps in PROBLEMS.items() for p in ps])
    row = next(x for x in section.splitlines() if x.startswith("| GPT-4 | published | 4 |"))
    assert f"| {100 * gpt4.success_rate:.1f} | {100 * gpt4.progress_rate:.1f} |" in row
    assert next(
        x for x in section.splitlines() if x.startswith("| expert (planner) | this run | 4 | 100.0 | 100.0 |")
    )
    # GPT-4 failed blocksworld problem1 (index 20) and solved the other three; the planner solved all four.
    assert "solved 1 problem(s) that GPT-4 did not: blocksworld problem1;" in section
    assert (agentboard_run / "published_progress.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    problem_row = next(x for x in section.splitlines() if x.startswith("| barman | p14 | 2 |"))
    assert "yes (step 2)" in problem_row


def test_report_warns_of_another_step_budget(agentboard_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(agentboard_run, out)
    config = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**config, "max_steps": 20}))
    text = write_report(out, plots=False).read_text()
    assert "**This run's step budget is 20, theirs was 30**" in text and "| PR@20 % |" in text
    assert "step budget is 30" not in write_report(agentboard_run, plots=False).read_text()


def test_report_of_another_profile_keeps_them_apart(tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(FIXTURE_RUN, out)
    text = write_report(out, plots=False).read_text()
    assert "## The models AgentBoard published (not comparable with this run)" in text
    section = text[text.index("(not comparable with this run)") :]
    assert "| GPT-4 | published | 8 |" in section
    assert not [x for x in section.splitlines() if x.startswith(("| expert", "| random"))]
    assert "Beside the models AgentBoard published" not in text


def test_viewer_shows_the_published_models_beside_an_episode(agentboard_run: Path) -> None:
    data, _ = page_data([read_run(agentboard_run)], replay=False)
    rows = data["published"]["problems"]["barman|p14"]
    assert [r["model"] for r in rows][:2] == ["GPT-4", "Claude 2"] and len(rows) == 12
    gpt4 = load_model("gpt-4")[43]
    assert (gpt4.domain, gpt4.problem) == ("barman", "p14")
    assert rows[0] == {
        "model": "GPT-4",
        "success": gpt4.success,
        "progress": gpt4.progress,
        "rises": [list(r) for r in gpt4.rises],
    }
    assert set(data["published"]["problems"]) == {f"{d}|{p}" for d, ps in PROBLEMS.items() for p in ps}
    page = build_html([read_run(agentboard_run)])
    assert "publishedPanel" in page and json.dumps("barman|p14") in page


def test_viewer_panel_in_chromium(agentboard_run: Path, tmp_path: Path) -> None:
    from pddlworlds.testing.browser import launch, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"browser test skipped: {reason}")
    from playwright.sync_api import sync_playwright

    page_file = tmp_path / "view.html"
    page_file.write_text(build_html([read_run(agentboard_run)]))
    data, _ = page_data([read_run(agentboard_run)], replay=False)
    ident = next(e["id"] for e in data["episodes"] if (e["domain"], e["problem"]) == ("barman", "p14"))
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{page_file.as_uri()}#ep/{ident}")
        page.wait_for_selector("#published-table")
        rows = page.locator("#published-table tr").all_inner_texts()
        browser.close()
    assert errors == []
    assert len(rows) == 13 and rows[1].split("\t") == ["GPT-4", "yes", "1.00", "2: 1.00"]
    deepseek = next(r for r in rows if r.startswith("DeepSeek-67B"))
    assert deepseek.endswith("\tnot recorded")
