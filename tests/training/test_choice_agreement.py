"""scripts/choice_agreement.py on an eval run folder: every rule is judged at the states the run reached,
by the planner, from the candidates the step's choice scored."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


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
        assert "no episode recorded every candidate's log-probability" in str(exc) and str(run) in str(exc)
        assert "--score-all-candidates" in str(exc)
    else:
        raise AssertionError("a run of free decoding was analysed")


def test_steps_whose_choice_stopped_at_its_pick_are_left_out(tmp_path) -> None:
    # a run without --score-all-candidates: the candidates its choice did not finish scoring hold bounds,
    # on which another rule cannot be replayed, so such a step is not judged; a step scored whole is
    pruned = step(2, "putdown b1", [("putdown b1", -3.0, 6), ("stack b1 on b3", -2.0, 2)])
    pruned["calls"][0]["candidate_scores"][1]["exact"] = False
    line = episode([step(1, "unstack b1 from b3", [("unstack b1 from b3", -1.0, 5)]), pruned])
    run = tmp_path / "run"
    run.mkdir()
    (run / "episodes.jsonl").write_text(json.dumps(line) + "\n")
    assert load_script().analyse(run)["standard/all"]["steps"] == 1


def a_run(tmp_path: Path) -> Path:
    line = episode([step(1, "unstack b1 from b3", [("unstack b1 from b3", -1.0, 5)])])
    run = tmp_path / "run"
    run.mkdir()
    (run / "episodes.jsonl.gz").write_bytes(gzip.compress((json.dumps(line) + "\n").encode()))
    return run


def test_a_gzipped_run_is_read_and_a_damaged_one_named_in_one_line(tmp_path, capsys) -> None:
    run = a_run(tmp_path)
    assert load_script().analyse(run)["standard/all"]["steps"] == 1
    packed = run / "episodes.jsonl.gz"
    packed.write_bytes(packed.read_bytes()[:-12])  # the end cut off: a torn copy
    assert load_script().main([str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"choice_agreement: error: {packed}: damaged gzip file")


def test_damaged_figures_and_an_unwritable_json_are_one_line(tmp_path, capsys) -> None:
    figures = tmp_path / "out.json"
    figures.write_text('{"held_out_set": "standard"}')
    figures.with_name("out.json.episodes.jsonl").write_text('{"agent": "standard", "domain": "blocks')
    assert load_script().main([str(figures)]) == 2
    err = capsys.readouterr().err
    assert err == f"choice_agreement: error: {figures}.episodes.jsonl, line 1: not valid JSON " \
        "(Unterminated string starting at); a torn or damaged file?\n"
    (tmp_path / "a-file").write_text("")
    assert load_script().main([str(a_run(tmp_path)), "--json", str(tmp_path / "a-file" / "shares.json")]) == 2
    assert capsys.readouterr().err == (
        f"choice_agreement: error: --json: cannot write {tmp_path / 'a-file' / 'shares.json'}: "
        f"{tmp_path / 'a-file'} is a file, not a folder\n"
    )


def test_validate_adapters_run_folder_beside_its_figures_is_read_with_its_domains_root(tmp_path) -> None:
    # validate_adapter.py keeps its episodes in OUT.json.run/, its problems in a folder of domains of its own:
    # the problem is found there (a name no shipped split has), not among the shipped domains
    import shutil

    from pddlworlds.worlds.catalogue import get_domain

    shipped = get_domain("blocksworld")
    root = tmp_path / "out.json.run" / "held-out-problems"
    (root / "blocksworld" / "problems" / "held-out-x").mkdir(parents=True)
    shutil.copy(shipped.domain_file, root / "blocksworld" / "domain.pddl")
    shutil.copy(shipped.text_file, root / "blocksworld" / "text.toml")
    shutil.copy(shipped.problem_file("problem2"), root / "blocksworld" / "problems" / "held-out-x" / "h1-easy-01.pddl")
    line = episode([
        step(1, "unstack b1 from b3", [("unstack b1 from b3", -1.0, 5)]),
        step(2, "putdown b1", [("putdown b1", -3.0, 6), ("stack b1 on b3", -2.0, 2)]),
    ])
    line.update(split="held-out-x", problem="h1-easy-01")
    (tmp_path / "out.json.run" / "episodes.jsonl").write_text(json.dumps(line) + "\n")
    (tmp_path / "out.json.run" / "config.json").write_text(json.dumps({"domains_root": str(root)}))
    result = load_script().analyse(tmp_path / "out.json")
    assert result["standard/all"] == {"steps": 2, "sum": 50.0, "token-mean": 100.0, "word-mean": 50.0}
