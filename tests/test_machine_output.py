"""`--format csv|json` is for programs and spreadsheets: stdout carries the rows alone (every note, fault
notes included, goes to stderr), a header is printed even when no episode can be scored, lists and objects
are JSON text, and no cell starts a spreadsheet formula (an agent name in a shared run folder, a server's
message)."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from pddlworlds.tables import Column, print_rows

pytest.importorskip("openai")
from pddlworlds.testing.fake_openai import FakeOpenAIServer

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_RUN = FIXTURES / "eval_run"
CHATTER = "pw_eval_agents:chatter"
FORMULA = '=HYPERLINK("http://example.com/x","click")'


def test_csv_cells_never_start_a_formula_and_hold_json_for_lists_and_objects() -> None:
    rows = [{"text": value, "n": -0.5, "curve": {5: 0.25, 10: None}, "list": ["a", 1]}
            for value in (FORMULA, "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "plain", "")]
    text = io.StringIO()
    print_rows(rows, [Column(k, k) for k in ("text", "n", "curve", "list")], "csv", file=text)
    read = list(csv.DictReader(io.StringIO(text.getvalue())))
    assert [r["text"] for r in read] == ["'" + FORMULA, "'+1+1", "'-2+3", "'@SUM(A1)", "'\tx", "'\rx", "plain", ""]
    assert {r["n"] for r in read} == {"-0.5"}  # a number is a number, negative or not
    assert json.loads(read[0]["curve"]) == {"5": 0.25, "10": None} and json.loads(read[0]["list"]) == ["a", 1]


def test_report_of_a_shared_folder_names_no_formula_and_keeps_progress_at_json(tmp_path: Path, cli) -> None:
    out = tmp_path / "run"
    shutil.copytree(FIXTURE_RUN, out)
    lines = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    (out / "episodes.jsonl").write_text("".join(json.dumps({**x, "agent": FORMULA}) + "\n" for x in lines))
    config = json.loads((out / "config.json").read_text())
    config["agents"] = {FORMULA: {}}
    (out / "config.json").write_text(json.dumps(config))
    code, stdout, err = cli(["report", str(out), "--no-plots", "--format", "csv"])
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(stdout)))
    assert rows and all(r["agent"] == "'" + FORMULA for r in rows)
    assert all(not cell.startswith(("=", "+", "-", "@")) for r in rows for cell in r.values())
    assert json.loads(rows[0]["progress_at"]) == json.loads((out / "summary.json").read_text())["rows"][0][
        "progress_at"
    ]


def eval_argv(srv: FakeOpenAIServer, out: Path, fmt: str) -> list[str]:
    return ["eval", "--agents", CHATTER, "--domains", "blocksworld", "--problems", "problem1", "--seeds", "0,1",
            "--max-steps", "2", "--workers", "1", "--llm", "openai:fake-model", "--base-url", srv.base_url,
            "--out", str(out), "--no-progress", "--format", fmt]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_eval_keeps_stdout_for_the_rows_when_episodes_fault(tmp_path: Path, cli, fmt: str) -> None:
    with FakeOpenAIServer("check valid actions", failures=[400], failure_message=FORMULA) as srv:
        code, stdout, err = cli(eval_argv(srv, tmp_path / "run", fmt))
    assert code == 1 and "seed 0: rejected:" in err, err
    rows = json.loads(stdout) if fmt == "json" else list(csv.DictReader(io.StringIO(stdout)))
    assert [row["n"] for row in rows] in ([1, 1], ["1", "1"])  # the faulted episode is not scored
    assert "episode" not in stdout and "report:" not in stdout


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_eval_prints_a_header_when_every_episode_faulted(tmp_path: Path, cli, fmt: str) -> None:
    with FakeOpenAIServer("check valid actions", failures=[400, 400]) as srv:
        code, stdout, err = cli(eval_argv(srv, tmp_path / "run", fmt))
    assert code == 1 and "2 episode(s) stopped by a fault" in err, err
    if fmt == "json":
        assert json.loads(stdout) == []
    else:
        header = stdout.splitlines()[0].split(",")
        assert stdout.splitlines()[1:] == [] and header[:2] == ["domain", "agent"] and "sr" in header
