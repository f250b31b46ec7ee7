"""scripts/choice_agreement.py on an eval run folder: every rule is judged at the states the run reached,
by the planner, from the candidates the step's choice scored."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load_script():
    spec = importlib.util.spec_from_file_location("choice_agreement", REPO / "scripts" / "choice_agreement.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def step(index: int, action: str, scores: list[tuple[str, float, int]]) -> dict:
    return {"index": index, "action": action, "observation": "", "progress": 0.0, "valid": True, "action_kind": "action",
            "calls": [{"purpose": "action", "prompt_tokens": 1, "completion_tokens": 1, "latency_s": 0.1,
                       "raw_output": action, "candidate_scores": [
                {"action": a, "logprob": lp, "tokens": n} for a, lp, n in scores]}]}


def episode(trajectory: list[dict]) -> dict:
    return {"agent": "standard", "domain": "blocksworld", "split": "agentboard", "problem": "problem2", "seed": 0,
            "success": False, "progress": 0.0, "steps": len(trajectory), "optimal_length": 6, "run_time_s": 1.0,
            "goal": "", "initial_observation": "", "trajectory": trajectory}


def test_a_run_folder_is_judged_rule_by_rule(tmp_path) -> None:
    # Blocksworld problem2 (AgentBoard): one legal action at the start; after it, putting b1 down is on an
    # optimal plan and stacking it back is not. The short candidate wins on the sum, the long one per token.
    line = episode([
        step(1, "unstack b1 from b3", [("unstack b1 from b3", -1.0, 5)]),
        step(2, "putdown b1", [("putdown b1", -3.0, 6), ("stack b1 on b3", -2.0, 2)]),
    ])
    run = tmp_path / "run"
    run.mkdir()
    (run / "episodes.jsonl").write_text(json.dumps(line) + "\n")
    result = load_script().analyse(run)
    assert result["standard/all"] == {"steps": 2, "sum": 50.0, "token-mean": 100.0, "word-mean": 50.0}
    assert result["standard/blocksworld"] == result["standard/all"]


def test_a_run_without_candidates_is_refused(tmp_path) -> None:
    line = episode([{"index": 1, "action": "unstack b1 from b3", "observation": "", "progress": 0.0, "valid": True, "action_kind": "action", "calls": []}])
    run = tmp_path / "run"
    run.mkdir()
    (run / "episodes.jsonl").write_text(json.dumps(line) + "\n")
    try:
        load_script().analyse(run)
    except ValueError as exc:
        assert "no episode recorded its candidates" in str(exc) and str(run) in str(exc)
    else:
        raise AssertionError("a run of free decoding was analysed")
