"""Bounds with one-line errors: a seed range is counted before it is made, a training line is refused before it
is held whole, a flood of bad lines gives a bounded number of warnings and a count, and `config.json` has one
typed reader (a resume, `report`, `view`) that names what is wrong instead of a traceback."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import pddlworlds
from pddlworlds.cli import main
from pddlworlds.evaluation import RunPlan, run_evaluation
from pddlworlds.training.data import TrainingDataError, load_calls

FIXTURES = Path(__file__).parent / "fixtures"
SRC = str(Path(pddlworlds.__file__).resolve().parents[1])  # the package these tests import
WALKER = "pw_eval_agents:walker"


def _limited_memory() -> None:  # a subprocess that would fill the memory fails fast instead
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "--agents", WALKER, "--domains", "blocksworld", "--limit", "1", "--seeds", "0-200000000"],
        ["train", "data", "--seeds", "1-200000000"],
    ],
)
def test_a_huge_seed_range_is_refused_before_it_is_made(tmp_path: Path, argv: list[str]) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from pddlworlds.cli import main; sys.exit(main(sys.argv[1:]))",
         *argv, "--out", str(out)],
        capture_output=True, text=True, timeout=300, preexec_fn=_limited_memory, check=False,
        env={"PYTHONPATH": f"{SRC}:{FIXTURES}", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]  # after argparse's usage, if any: one line
    assert "--seeds" in last and "-200000000' names 200,000,00" in last
    assert "values; at most 100,000 are allowed" in last and "Traceback" not in done.stderr
    assert not out.exists()


def test_a_huge_training_line_is_refused_without_being_read_whole(tmp_path: Path, capsys) -> None:
    data = tmp_path / "data"
    data.mkdir()
    call = {"agent": "standard", "domain": "d", "messages": [{"role": "user", "content": "Action:"}], "reply": " go"}
    huge = {**call, "reply": "x" * (50 << 20)}
    with (data / "calls.jsonl").open("w") as handle:
        handle.write(json.dumps(call) + "\n" + json.dumps(huge) + "\n")
    del huge
    tracemalloc.start()
    try:
        with pytest.raises(TrainingDataError, match=r"calls.jsonl, line 2: longer than 4 MiB"):
            load_calls(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20  # the 50 MB line was never held (nor decoded, nor tokenised)
    code = main(["train", "fit", "--data", str(data), "--out", str(tmp_path / "fit"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "line 2: longer than 4 MiB" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "fit").exists()


def walker_run(out: Path) -> RunPlan:  # the `cli` fixture puts the test agents on the path
    plan = RunPlan(agents=[WALKER], problems={"blocksworld": ["problem1"]}, max_steps=4)
    run_evaluation(plan, out, progress=False)
    return plan


def test_view_of_a_million_junk_lines_warns_a_bounded_number_of_times(tmp_path: Path, cli) -> None:
    out = tmp_path / "run"
    walker_run(out)
    with (out / "episodes.jsonl").open("a") as handle:
        handle.write("junk\n" * 1_000_000)
    page = tmp_path / "page.html"
    code, _, err = cli(["view", str(out), "--out", str(page), "--no-replay"])
    assert code == 0, err[-2000:]
    warnings = [line for line in err.splitlines() if "warning:" in line]
    assert len(warnings) == 21 and "1,000,000" not in err and "999,980 more line(s) skipped" in warnings[-1]
    assert page.stat().st_size < 1 << 20


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (lambda c: '{"agents": ' + DEEP + "}", "config.json: not valid JSON (nested too deep to read)"),
        (lambda c: json.dumps({**c, "agents": [[[[1]]]] * 3}), "agents is a list, not an object"),
        (lambda c: json.dumps({**c, "llm": "embedded"}), "llm is a string, not an object or null"),
        (lambda c: json.dumps({**c, "max_steps": "30"}), "max_steps is a string, not an integer or null"),
        (lambda c: json.dumps({**c, "problems": {"blocksworld": "problem1"}}), "problems.blocksworld is a string"),
        (lambda c: json.dumps({**c, "prompt_file": "a.json"}), "prompt_file is a string"),
        (lambda c: json.dumps({**c, "run_info": []}), "run_info is a list, not an object"),
        (lambda c: json.dumps({**c, "agents": {WALKER: {"x": json.loads("[" * 80 + "]" * 80)}}}),
         "nested deeper than 64 levels"),
    ],
)
def test_a_malformed_config_is_one_line_in_report_resume_and_view(tmp_path: Path, cli, config, expected: str) -> None:
    out = tmp_path / "run"
    walker_run(out)
    path = out / "config.json"
    path.write_text(config(json.loads(path.read_text())))
    for argv, code_expected in (
        (["report", str(out), "--no-plots"], 2),
        (["eval", "--agents", WALKER, "--domains", "blocksworld", "--problems", "problem1", "--max-steps", "4",
          "--out", str(out), "--no-progress"], 2),
        (["view", str(out), "--out", str(tmp_path / "page.html"), "--no-replay"], 2),
    ):
        code, _, err = cli(argv)
        assert code == code_expected and expected in err and str(path) in err, (argv[0], err[-3000:])
        assert "Traceback" not in err and len(err.strip().splitlines()) <= 2, (argv[0], err[-3000:])
