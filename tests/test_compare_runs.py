"""scripts/compare_runs.py: two run folders paired problem by problem, a gzipped one included."""

from __future__ import annotations

import gzip
import importlib.util
import json
import shutil
from pathlib import Path

from pddlworlds import cli

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "compare_runs.py"


def _script():
    spec = importlib.util.spec_from_file_location("compare_runs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_two_runs_are_paired_by_agent_domain_and_problem(tmp_path: Path, capsys) -> None:
    base = ["eval", "--agents", "expert,random", "--domains", "blocksworld", "--limit", "3", "--no-progress", "--no-report"]
    assert cli.main([*base, "--out", str(tmp_path / "a")]) == 0
    assert cli.main([*base, "--seeds", "1", "--out", str(tmp_path / "b")]) == 0
    packed = tmp_path / "packed"
    packed.mkdir()
    shutil.copy(tmp_path / "b" / "config.json", packed / "config.json")
    (packed / "episodes.jsonl.gz").write_bytes(gzip.compress((tmp_path / "b" / "episodes.jsonl").read_bytes()))
    out = tmp_path / "cmp.json"
    capsys.readouterr()
    assert _script().main([str(tmp_path / "a"), str(packed), "--json", str(out)]) == 0
    figures = json.loads(out.read_text())["figures"]
    assert figures["expert/blocksworld"]["pairs"] == 3 and figures["expert/blocksworld"]["sr_a"] == 100.0
    assert figures["all/all"]["pairs"] == 6
    assert "| expert/blocksworld | 3 |" in capsys.readouterr().out
    assert _script().main([str(tmp_path / "a"), str(tmp_path / "nowhere")]) == 2  # one line, no traceback
