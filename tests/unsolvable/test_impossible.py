"""Unsolvable variants and their proofs, the mixed splits, the `impossible` action, and its scores."""

from __future__ import annotations

import re
import warnings

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401  (registers the environments)
from pddlworlds.artefacts.plans import plan_file, read_index
from pddlworlds.artefacts.proofs import is_unsolvable, read_proofs, split_unsolvable
from pddlworlds.generators.unsolvable import (
    DEFAULT_STATE_CAP,
    candidates,
    derive,
    problem_text,
    trivial_reason,
)
from pddlworlds.records import EpisodeRecord, StepRecord
from pddlworlds.registration import env_id
from pddlworlds.unsolvable.claim import IMPOSSIBLE_ACTION, is_claim
from pddlworlds.worlds.catalogue import domains
from pddlworlds.worlds.grounding import ground
from pddlworlds.worlds.pddl import PDDLNormalisationWarning, domain_constants
from pddlworlds.worlds.search import breadth_first_search

warnings.simplefilter("ignore", PDDLNormalisationWarning)

BASES = ("agentboard", "generated")
PROOFS = read_proofs()
#: The worlds with unsolvable variants: the four public ones (the catalogue's other worlds have none).
PUBLIC = {name: domain for name, domain in domains().items() if "agentboard" in domain.splits()}
#: Above this many states a re-proof takes seconds on the shared machine: those run in the slow subset.
QUICK_STATES = 50_000


def _proof_params():
    out = []
    for p in PROOFS:
        slow = p.method != "exhaustive-bfs" or p.states > QUICK_STATES
        out.append(pytest.param(p, id=f"{p.domain}/{p.problem}", marks=[pytest.mark.slow] if slow else []))
    return out


# --------------------------------------------------------------------------------------------------
# The shipped variants and their proofs.


def test_every_unsolvable_problem_has_a_proof_and_every_proof_a_problem():
    assert PROOFS, "planners/unsolvable.csv holds no proof"
    assert {p.domain for p in PROOFS} <= set(PUBLIC) and len(PUBLIC) == 4
    for name, domain in PUBLIC.items():
        shipped = set(domain.problems("impossible"))
        proven = {p.problem for p in PROOFS if p.domain == name}
        assert shipped == proven, name
        assert shipped, f"{name} has no unsolvable variant"
        for base in BASES:
            for problem in split_unsolvable(name, f"{base}-mixed"):
                assert problem in proven


@pytest.mark.parametrize("proof", _proof_params())
def test_the_search_confirms_each_stored_proof(proof):
    domain = domains()[proof.domain]
    task = domain.load(proof.problem, "impossible")
    if proof.method == "exhaustive-bfs":
        result = breadth_first_search(ground(task), cap=proof.states + 1)
        assert result.status == "unsolvable"
        assert result.states == proof.states
    else:
        assert proof.method.startswith("fast-downward:")
        from pddlworlds.planning import solve

        plan = solve(proof.domain, proof.problem, planner=proof.method.split(":", 1)[1], timeout=120, split="impossible")
        assert plan.status.value == "unsolvable", plan.message


def test_each_variant_is_its_parent_with_the_recorded_removal():
    """The shipped file is what the removal makes of the parent (the generator reproduces it)."""
    for proof in PROOFS:
        domain = domains()[proof.domain]
        parent = domain.load(proof.parent, proof.parent_split)
        made = {v.name: v for v in candidates(proof.domain, parent, proof.parent)}
        assert proof.problem in made, proof
        variant = made[proof.problem]
        assert variant.removal == proof.removal and variant.description == proof.description
        constants = set(domain_constants(domain.domain_file.read_text(), domain.domain_file))
        shipped = domain.problem_file(proof.problem, "impossible").read_text()
        body = "\n".join(line for line in shipped.splitlines() if not line.startswith(";")) + "\n"
        assert body == problem_text(variant.task, constants, [])
        assert f"Parent: {proof.domain} {proof.parent_split}/{proof.parent}" in shipped
        assert bool(trivial_reason(variant.task)) == proof.trivial


def test_every_solvable_parent_keeps_its_stored_optimal_plan():
    rows = {(r["domain"], r["split"], r["problem"]): r for r in read_index()}
    for proof in PROOFS:
        row = rows[(proof.domain, proof.parent_split, proof.parent)]
        assert row["optimal"] == "true" and row["length"].isdigit()
        assert plan_file(proof.domain, proof.parent).is_file()


def test_mixed_splits_hold_the_base_split_and_about_one_in_five_unsolvable():
    rows = {(r["domain"], r["split"], r["problem"]): r for r in read_index()}
    for name, domain in PUBLIC.items():
        for base in BASES:
            mixed = f"{base}-mixed"
            problems = domain.problems(mixed)
            unsolvable = split_unsolvable(name, mixed)
            solvable = [p for p in problems if p not in unsolvable]
            assert solvable == domain.problems(base)
            for problem in solvable:
                assert domain.problem_file(problem, mixed).read_bytes() == domain.problem_file(problem, base).read_bytes()
                assert rows[(name, mixed, problem)]["length"] == rows[(name, base, problem)]["length"]
            assert {p.parent_split for p in PROOFS if p.problem in unsolvable} == {base}
            assert 0.15 <= len(unsolvable) / len(problems) <= 0.25, (name, mixed, len(unsolvable), len(problems))


def test_trivial_variants_are_reported_apart():
    trivial = [p for p in PROOFS if p.trivial]
    assert trivial and all(p.removal == "missing-block" and "never mentions" in p.trivial_reason for p in trivial)
    assert all(not p.trivial_reason for p in PROOFS if not p.trivial)


def test_derive_is_seeded_and_a_capped_search_is_no_proof():
    domain = domains()["blocksworld"]
    parents = {p: domain.load(p, "agentboard") for p in domain.problems("agentboard")[:4]}
    first = [v.name for v in derive("blocksworld", parents, 3, seed=5)]
    assert first == [v.name for v in derive("blocksworld", parents, 3, seed=5)]
    assert len(first) == 3 and len({v.split("-")[0] for v in first}) == 3  # distinct parents
    big = domains()["gripper"].load("prob05", "agentboard")
    assert breadth_first_search(ground(big), cap=100).status == "capped"
    assert breadth_first_search(ground(domain.load("problem1", "agentboard")), DEFAULT_STATE_CAP).status == "solvable"


def test_trivial_reason_cases():
    task = domains()["blocksworld"].load("problem1", "agentboard")
    assert trivial_reason(task) == ""
    from dataclasses import replace

    ghost = replace(task, goal=(*task.goal, ("on", ("b1", "b9"), True)))
    assert "does not exist" in trivial_reason(ghost)
    gripper = domains()["gripper"].load("prob01", "agentboard")
    static = replace(gripper, goal=(("room", ("ball1",), True),))  # ball1 is no room, and never becomes one
    assert "static fact" in trivial_reason(static)


# --------------------------------------------------------------------------------------------------
# The action in the environment.


def _env(domain: str, split: str, **kwargs) -> gym.Env:
    return gym.make(env_id(domain), split=split, **kwargs)


@pytest.mark.parametrize("text", ["impossible", "Impossible.", "This task is impossible.", "The goal cannot be reached",
                                  "Action: impossible", "the goal is unreachable", "No plan exists."])
def test_claim_phrasings(text):
    assert is_claim(text)


@pytest.mark.parametrize("text", ["it is not impossible", "pickup b1", "impossible pickup b1", "check valid actions", ""])
def test_not_claims(text):
    assert not is_claim(text)


def test_claim_solves_an_unsolvable_problem_only_when_offered():
    problem = next(p.problem for p in PROOFS if p.domain == "gripper")
    env = _env("gripper", "impossible", allow_impossible=True)
    _, info = env.reset(options={"problem": problem})
    assert info["solvable"] is False and info["claimed_impossible"] is False
    observation, reward, terminated, truncated, info = env.step("check valid actions")
    assert info["valid_actions"][-1] == IMPOSSIBLE_ACTION and observation.endswith(", impossible.")
    assert env.unwrapped.valid_actions()[-1] == IMPOSSIBLE_ACTION
    observation, reward, terminated, truncated, info = env.step("This task is impossible.")
    assert terminated and not truncated and info["success"] and info["claimed_impossible"]
    assert info["action_kind"] == "impossible" and info["step"] == 2 and reward == 1.0

    plain = _env("gripper", "impossible")
    _, info = plain.reset(options={"problem": problem})
    assert "claimed_impossible" not in info
    observation, _, terminated, _, info = plain.step("impossible")
    assert not terminated and not info["action_valid"] and "Unknown action" in observation
    _, _, _, _, info = plain.step("check valid actions")
    assert IMPOSSIBLE_ACTION not in info["valid_actions"]


def test_claim_on_a_solvable_problem_ends_it_unsolved():
    env = _env("blocksworld", "agentboard-mixed", allow_impossible=True)
    _, info = env.reset(options={"problem": "problem1"})
    assert info["solvable"] is True
    _, reward, terminated, _, info = env.step("the goal cannot be reached")
    assert terminated and not info["success"] and info["claimed_impossible"] and reward == 0.0


def test_check_env_with_the_action_offered():
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check_env(_env("blocksworld", "impossible", allow_impossible=True).unwrapped)


# --------------------------------------------------------------------------------------------------
# Agents.


def _run(agent_name: str, domain: str, split: str, problem: str, *, allow: bool, max_steps: int = 40, seed: int = 0):
    from pddlworlds.agents import make_agent

    env = _env(domain, split, max_episode_steps=max_steps, **({"allow_impossible": True} if allow else {}))
    return make_agent(agent_name).run(env, seed=seed, options={"problem": problem})


def test_expert_claims_exactly_on_proven_problems():
    unsolvable = next(p.problem for p in PROOFS if p.domain == "blocksworld" and p.parent_split == "agentboard")
    record = _run("expert", "blocksworld", "agentboard-mixed", unsolvable, allow=True)
    assert record.claimed_impossible and record.success and record.steps == 1 and record.solvable is False
    record = _run("expert", "blocksworld", "agentboard-mixed", "problem1", allow=True)
    assert not record.claimed_impossible and record.success and record.steps == record.optimal_length
    record = _run("expert", "blocksworld", "agentboard-mixed", unsolvable, allow=False, max_steps=5)
    assert not record.claimed_impossible and not record.success and record.steps == 5
    assert {s.action for s in record.trajectory} == {"look around"}  # no planner call on a proven problem


def test_random_claims_with_its_fixed_probability(monkeypatch):
    from pddlworlds.agents import scripted

    first = _run("random", "gripper", "agentboard-mixed", "prob01", allow=True, seed=3)
    again = _run("random", "gripper", "agentboard-mixed", "prob01", allow=True, seed=3)
    assert [s.action for s in first.trajectory] == [s.action for s in again.trajectory]
    assert all(s.action != IMPOSSIBLE_ACTION for s in _run("random", "gripper", "agentboard-mixed", "prob01",
                                                           allow=False, seed=3).trajectory)
    monkeypatch.setattr(scripted, "CLAIM_PROBABILITY", 1.0)
    assert _run("random", "gripper", "agentboard-mixed", "prob01", allow=True).steps == 1
    monkeypatch.setattr(scripted, "CLAIM_PROBABILITY", 0.0)
    record = _run("random", "gripper", "agentboard-mixed", "prob01", allow=True, max_steps=10)
    assert not record.claimed_impossible and record.steps == 10


def test_llm_agents_are_told_of_the_action_only_when_offered():
    pytest.importorskip("openai")
    from pddlworlds.agents import make_agent
    from pddlworlds.agents.unsolvable_rule import IMPOSSIBLE_RULE
    from pddlworlds.llm import OpenAICompatibleLLM
    from pddlworlds.testing.fake_openai import FakeOpenAIServer

    for name in ("standard", "hiagent"):
        for allow in (True, False):
            with FakeOpenAIServer("Subgoal: stop\nAction: impossible") as server:
                llm = OpenAICompatibleLLM("fake-model", base_url=server.base_url, api_key="t", max_retries=0)
                env = _env("blocksworld", "agentboard-mixed", max_episode_steps=2,
                           **({"allow_impossible": True} if allow else {}))
                record = make_agent(name, llm, example=False).run(env, options={"problem": "problem1"})
                system = server.chat_requests[0]["messages"][0]["content"]
            assert (IMPOSSIBLE_RULE in system) is allow, (name, allow)
            assert record.claimed_impossible is allow


# --------------------------------------------------------------------------------------------------
# Scores.


def _record(domain: str, solvable: bool, claimed: bool, success: bool, steps: int = 3, tokens: int = 0) -> EpisodeRecord:
    trajectory = [StepRecord(i, "a", "o", True, "action", 0.0, prompt_tokens=tokens, completion_tokens=1)
                  for i in range(1, steps + 1)]
    return EpisodeRecord("agent", domain, "mixed", "p", 0, success, 0.0, steps, None, 0.0, "g", "o",
                         trajectory=trajectory, solvable=solvable, claimed_impossible=claimed)


def test_f1_on_a_hand_checked_fixture():
    from pddlworlds.reports.impossible import impossible_rows
    from pddlworlds.scoring.unsolvable import OVERALL, claim_scores

    records = [
        # blocksworld: 2 unsolvable (1 claimed), 3 solvable (1 claimed, 1 solved)
        _record("blocksworld", False, True, True, steps=1, tokens=10),
        _record("blocksworld", False, False, False, steps=30, tokens=10),
        _record("blocksworld", True, True, False),
        _record("blocksworld", True, False, True),
        _record("blocksworld", True, False, False),
        # gripper: 1 unsolvable (claimed), 1 solvable (solved)
        _record("gripper", False, True, True, steps=5, tokens=100),
        _record("gripper", True, False, True),
    ]
    scores = claim_scores(records)
    bw = scores[("agent", "blocksworld")]
    assert (bw.true_positives, bw.false_positives, bw.false_negatives, bw.true_negatives) == (1, 1, 1, 2)
    assert bw.precision == pytest.approx(0.5) and bw.recall == pytest.approx(0.5) and bw.f1 == pytest.approx(0.5)
    assert bw.solvable_success_rate == pytest.approx(1 / 3)
    assert bw.unsolvable_steps == pytest.approx(15.5)  # (1 + 30) / 2
    assert bw.unsolvable_tokens == pytest.approx((1 * 11 + 30 * 11) / 2)
    overall = scores[("agent", OVERALL)]
    # TP 2, FP 1, FN 1: precision 2/3, recall 2/3, F1 = 4 / (4 + 1 + 1) = 2/3
    assert overall.precision == pytest.approx(2 / 3) and overall.recall == pytest.approx(2 / 3)
    assert overall.f1 == pytest.approx(2 / 3) and overall.solvable_success_rate == pytest.approx(0.5)
    none = claim_scores([_record("gripper", True, False, True)])[("agent", "gripper")]
    assert none.precision is None and none.recall is None and none.f1 is None
    rows = impossible_rows(scores)
    assert rows[-1][:8] == ["Overall", "agent", "3", "4", "2/1/1", "66.7", "66.7", "66.7"]


def test_eval_on_a_mixed_split_expert_f1_one_and_report_section(tmp_path):
    from argparse import Namespace

    from pddlworlds.evaluation.options import build_plan
    from pddlworlds.evaluation.runner import run_evaluation
    from pddlworlds.reports.report import write_report
    from pddlworlds.scoring.unsolvable import OVERALL, claim_scores, records_from_lines

    args = Namespace(agents="expert,random", domains="blocksworld", split="generated-mixed", llm="embedded",
                     base_url=None, api_key=None, problems=None, limit=None, seeds="0", max_steps=40)
    plan = build_plan(args)
    assert plan.allow_impossible and len(plan.problems["blocksworld"]) == 19
    result = run_evaluation(plan, tmp_path / "run", progress=False)
    assert result.config["allow_impossible"] is True
    scores = claim_scores(records_from_lines(result.lines))
    expert, random_ = scores[("expert", OVERALL)], scores[("random", OVERALL)]
    assert expert.f1 == 1.0 and expert.solvable_success_rate == 1.0 and expert.unsolvable == 4
    assert random_.f1 is None or random_.f1 < 0.5
    report = write_report(tmp_path / "run").read_text()
    assert "## Unsolvable problems and the `impossible` action" in report
    assert re.search(r"\| Overall \| expert \| 4 \| 15 \| 4/0/0 \| 100.0 \| 100.0 \| 100.0 \| 100.0 \|", report)
    assert (tmp_path / "run" / "impossible.png").is_file()


def test_runs_without_unsolvable_problems_keep_their_configuration(tmp_path):
    from pddlworlds.evaluation.runner import RunPlan, build_config

    config = build_config(RunPlan(agents=["expert"], problems={"blocksworld": ["problem1"]}))
    assert "allow_impossible" not in config
    assert not is_unsolvable("blocksworld", "problem1")


def test_llm_examples_come_from_solvable_problems_outside_every_split():
    """The in-context example is a solved episode of a problem of its own: it must have a plan
    (it reaches its goal), and be none of the problems of any split, the unsolvable and mixed ones included,
    but one: the `heldout` split ships a pinned set drawn without regard to the examples, and one of its
    problems is Gripper's example (docs/training.md, "Shipped as the `heldout` split")."""
    from pddlworlds.agents.examples import load_example, problem_body

    equal = set()
    for name, domain in domains().items():
        example = load_example(domain.folder, "full")
        assert example is not None, name
        body = problem_body((domain.folder / "example.pddl").read_text())
        for split in domain.splits():
            for problem in domain.problems(split):
                if problem_body(domain.problem_file(problem, split).read_text()) == body:
                    equal.add((name, split, problem))
    assert equal == {("gripper", "heldout", "pl9338-medium-01")}
