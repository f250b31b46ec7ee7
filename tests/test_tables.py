"""Listings a shell can read: `pddlworlds list` and `pddlworlds report` through a pipe, as a table (whole
values), CSV and JSON (the Python API's rows)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pddlworlds
from pddlworlds.listing import problem_rows
from pddlworlds.tables import Column, print_rows
from pddlworlds.worlds.catalogue import domains

FIXTURE_RUN = Path(__file__).parent / "fixtures" / "eval_run"


def piped(*argv: str) -> subprocess.CompletedProcess[str]:
    """`pddlworlds ARGV` with stdout a pipe, as `pddlworlds list | grep ...` runs it (COLUMNS as a narrow
    terminal would set it, which a pipe must not obey)."""
    src = str(Path(pddlworlds.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]), "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "pddlworlds.cli", *argv],
        capture_output=True,  # stdout is a pipe
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_piped_table_keeps_every_value_whole() -> None:
    done = piped("list", "--domain", "blocksworld")
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    lines = done.stdout.splitlines()
    for row in problem_rows(["blocksworld"]):
        found = [line for line in lines if f" {row['problem']} " in line and f" {row['split']} " in line]
        assert len(found) == 1, (row, done.stdout[:2000])
    assert [line for line in lines if " problem10 " in line]  # `| grep problem10` finds it


def test_csv_has_one_row_per_problem_of_every_split() -> None:
    """Blocksworld's every split (the whole catalogue takes minutes to load cold on a loaded CI machine;
    every domain goes through the same code)."""
    done = piped("list", "--domain", "blocksworld", "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    domain = domains()["blocksworld"]
    expected = [(domain.name, split, problem) for split in domain.splits() for problem in domain.problems(split)]
    assert len(domain.splits()) >= 5 and [(r["domain"], r["split"], r["problem"]) for r in rows] == expected
    assert list(rows[0]) == list(problem_rows(["blocksworld"], "agentboard")[0])
    as_text = [{k: "" if v is None else str(v) for k, v in row.items()} for row in problem_rows(["blocksworld"])]
    assert rows == as_text


def test_json_parses_to_the_python_api_rows() -> None:
    done = piped("list", "--domain", "gripper", "--domain", "blocksworld", "--split", "agentboard", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == problem_rows(["gripper", "blocksworld"], "agentboard")


def test_report_formats_through_a_pipe(tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(FIXTURE_RUN, out)
    table = piped("report", str(out), "--no-plots")
    assert table.returncode == 0, table.stderr
    assert "…" not in table.stdout and str(out) in table.stdout and "expert (planner)" in table.stdout
    rows = json.loads(piped("report", str(out), "--no-plots", "--format", "json").stdout)
    stored = json.loads((out / "summary.json").read_text())["rows"]
    assert rows == stored and {"domain", "agent", "sr", "pr"} <= set(rows[0])
    lines = list(csv.DictReader(io.StringIO(piped("report", str(out), "--no-plots", "--format", "csv").stdout)))
    assert [(r["domain"], r["agent"]) for r in lines] == [(r["domain"], r["agent"]) for r in rows]


def test_print_rows_formats() -> None:
    rows = [{"name": "a" * 300, "n": 3, "missing": None}]
    columns = [Column("name", "name"), Column("n", "n", "right"), Column("missing", "missing")]
    text = io.StringIO()
    print_rows(rows, columns, "table", file=text)  # a StringIO is no terminal: nothing is cut
    assert "a" * 300 in text.getvalue() and " - " in text.getvalue()
    text = io.StringIO()
    print_rows(rows, columns, "json", file=text)
    assert json.loads(text.getvalue()) == rows
    text = io.StringIO()
    print_rows(rows, columns, "csv", file=text)
    assert text.getvalue().splitlines() == ["name,n,missing", "a" * 300 + ",3,"]
