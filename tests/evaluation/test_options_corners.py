"""`eval --domains all` over a folder of domains, some of which have no problem in the split: those are left
out with a note, the others played; a folder where none has any is one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pddl"


def test_domains_all_leaves_out_folders_without_problems(cli, tmp_path: Path) -> None:
    root = tmp_path / "mine"
    for name, problems in (("roads", True), ("empty-split", False), ("no-split", None)):
        folder = root / name
        folder.mkdir(parents=True)
        shutil.copy(FIXTURES / "roads" / "domain.pddl", folder / "domain.pddl")
        if problems is not None:
            (folder / "problems" / "agentboard").mkdir(parents=True)
        if problems:
            shutil.copy(FIXTURES / "roads" / "problem.pddl", folder / "problems" / "agentboard" / "p01.pddl")
    (root / "not-a-domain").mkdir()  # no domain.pddl: not listed at all
    out = tmp_path / "run"
    code, _, err = cli(["eval", "--agents", "random", "--domains", "all", "--domains-root", str(root), "--max-steps",
                        "1", "--optimal-timeout", "0", "--out", str(out), "--no-progress", "--no-report"])
    assert code == 0, err
    assert "note: --domains all: empty-split, no-split have no problem in split 'agentboard'; leaving them out" in err
    assert [json.loads(line)["domain"] for line in (out / "episodes.jsonl").read_text().splitlines()] == ["roads"]
    shutil.rmtree(root / "roads")
    code, _, err = cli(["eval", "--agents", "random", "--domains", "all", "--domains-root", str(root), "--out",
                        str(tmp_path / "run2"), "--no-progress", "--no-report"])
    assert code == 2 and "no domain has a problem in split 'agentboard'" in err and err.count("\n") <= 2
