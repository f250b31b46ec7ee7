"""`pddlworlds eval` over the catalogue: `--domains catalogue`, and each ladder problem at its band's budget."""

from __future__ import annotations

import argparse
import json

from pddlworlds.evaluation.cli import add_eval_parsers
from pddlworlds.evaluation.cli import main as eval_main
from pddlworlds.evaluation.options import build_plan
from pddlworlds.worlds.catalogue import domains
from pddlworlds.worlds.ladder import LADDER_SPLIT


def plan_for(argv: list[str]):
    parser = argparse.ArgumentParser()
    add_eval_parsers(parser.add_subparsers(dest="command"))
    return build_plan(parser.parse_args(["eval", *argv]))


def test_catalogue_names_every_world_with_a_card_and_budgets_follow_the_bands():
    plan = plan_for(["--agents", "expert", "--domains", "catalogue", "--split", LADDER_SPLIT,
                     "--problems", "ladder-easy-01,ladder-hard-01"])
    with_cards = sorted(name for name, d in domains().items() if d.card is not None and LADDER_SPLIT in d.splits())
    assert sorted(plan.problems) == with_cards and "logistics" in with_cards
    assert plan.max_steps is None
    budgets = {(e.domain, e.problem): e.max_steps for e in plan.episodes()}
    assert budgets[("logistics", "ladder-easy-01")] == 30 and budgets[("logistics", "ladder-hard-01")] == 80
    # a budget given is every episode's; the public split keeps 30
    assert {e.max_steps for e in plan_for(["--agents", "expert", "--domains", "logistics", "--split", LADDER_SPLIT,
                                           "--max-steps", "12"]).episodes()} == {12}
    assert plan_for(["--agents", "expert", "--domains", "gripper"]).max_steps == 30


def test_expert_plays_a_hard_ladder_problem_within_its_band_budget(tmp_path):
    out = tmp_path / "run"
    code = eval_main(["eval", "--agents", "expert,random", "--domains", "logistics", "--split", LADDER_SPLIT,
                      "--problems", "ladder-hard-01", "--out", str(out), "--no-progress", "--no-report"])
    assert code == 0
    lines = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    by_agent = {line["agent"]: line for line in lines}
    assert by_agent["expert"]["success"] and by_agent["expert"]["steps"] == by_agent["expert"]["optimal_length"] > 20
    assert by_agent["random"]["meta"]["max_steps"] == 80
    assert by_agent["random"]["steps"] <= 80
