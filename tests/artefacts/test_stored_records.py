"""One validation of a stored episode record (`records.check_stored`, used by `EpisodeRecord.from_stored`):
report, resume and view turn a field of the wrong type into one error naming the file and line."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from pddlworlds.cli import main
from pddlworlds.evaluation import RunPlan, run_evaluation
from pddlworlds.records import EpisodeRecord, RecordError, check_stored
from pddlworlds.viewer import ViewerWarning, read_run

FIXTURES = Path(__file__).parents[1] / "fixtures"
WALKER = "pw_eval_agents:walker"
PLAN = RunPlan(agents=[WALKER], problems={"blocksworld": ["problem1", "problem2"]}, max_steps=4)


@pytest.fixture(autouse=True)
def _fixture_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FIXTURES))


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory) -> Path:
    import sys

    sys.path.insert(0, str(FIXTURES))
    try:
        out = tmp_path_factory.mktemp("walker") / "run"
        run_evaluation(PLAN, out, progress=False)
    finally:
        sys.path.remove(str(FIXTURES))
    return out


def _tamper(stored_run: Path, tmp_path: Path, change) -> tuple[Path, Path]:
    out = tmp_path / "run"
    shutil.copytree(stored_run, out)
    path = out / "episodes.jsonl"
    first, second = (json.loads(line) for line in path.read_text().splitlines())
    change(second)
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    return out, path


def _set(key, value):
    def change(line):
        line[key] = value
    return change


def _set_step(key, value):
    def change(line):
        line["trajectory"][0][key] = value
    return change


CASES = [
    (_set("progress", None), "progress is null, not a number"),
    (_set("trajectory", "none"), "trajectory is a string, not a list"),
    (_set("steps", "3"), "steps is a string, not an integer"),
    (_set("success", 1), "success is a number, not true/false"),
    (_set("seed", 1.5), "seed is a number, not an integer or null"),
    (_set("flags", []), "flags is a list, not an object"),
    (_set_step("index", "<img src=x onerror=alert(1)>"), "trajectory[0].index is a string, not an integer"),
    (_set_step("progress", float("nan")), "trajectory[0].progress is nan, not a number"),
    (_set_step("memory_view", ["a"]), "trajectory[0].memory_view is a list, not a string or null"),
    (_set_step("calls", [{"purpose": "action", "prompt_tokens": "many", "completion_tokens": 1, "latency_s": 0.1,
                          "raw_output": "x"}]), "trajectory[0].calls[0].prompt_tokens is a string, not an integer"),
]


@pytest.mark.parametrize(("change", "expected"), CASES)
def test_report_names_file_and_line_of_a_wrongly_typed_field(stored_run, tmp_path, capsys, change, expected):
    out, path = _tamper(stored_run, tmp_path, change)
    code = main(["report", str(out), "--no-plots"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"{path}, line 2: not an episode record ({expected})" in err


@pytest.mark.parametrize(("change", "expected"), CASES[:3])
def test_resume_names_file_and_line_of_a_wrongly_typed_field(stored_run, tmp_path, change, expected):
    out, path = _tamper(stored_run, tmp_path, change)
    with pytest.raises(RecordError, match=r"episodes.jsonl, line 2: not an episode record") as info:
        run_evaluation(PLAN, out, progress=False)
    assert expected in str(info.value) and info.value.line_no == 2 and Path(info.value.source) == path


VIEWER_MESSAGES = {
    "trajectory[0].progress is nan, not a number": "not valid JSON (NaN is not a number the page can show)",
}


@pytest.mark.parametrize(("change", "expected"), CASES)
def test_view_skips_a_wrongly_typed_line_with_file_and_line(stored_run, tmp_path, change, expected):
    out, path = _tamper(stored_run, tmp_path, change)
    with pytest.warns(ViewerWarning) as caught:
        run = read_run(out)
    assert len(run.lines) == 1
    # The viewer reads JSON more strictly (its page holds no NaN anywhere): a NaN stops the line earlier.
    expected = VIEWER_MESSAGES.get(expected, expected)
    assert [str(w.message) for w in caught] == [f"{path}, line 2: {expected}; skipped"]
    code = main(["view", str(out), "--out", str(tmp_path / "page.html")])
    assert code == 0 and (tmp_path / "page.html").is_file()


def test_from_stored_checks_every_field_and_keeps_the_runs_own_keys_out(stored_run):
    line = json.loads((stored_run / "episodes.jsonl").read_text().splitlines()[0])
    record = EpisodeRecord.from_stored(line)
    assert record.to_dict() == {k: v for k, v in line.items() if k in record.to_dict()}
    with pytest.raises(RecordError, match=r"^x.jsonl, line 7: not an episode record \(no goal\)"):
        EpisodeRecord.from_stored({k: v for k, v in line.items() if k != "goal"}, source="x.jsonl", line_no=7)
    with pytest.raises(RecordError, match=r"unknown field\(s\) colour"):
        EpisodeRecord.from_stored({**line, "trajectory": [{**line["trajectory"][0], "colour": 1}]})
    with pytest.raises(RecordError, match=r"the line is a list, not an object"):
        check_stored([line])
    check_stored({"agent": "a", "domain": "d", "problem": "p"}, complete=False)  # the viewer's older records


def test_page_safe_adds_exact_numbers_and_bounded_nesting_to_the_one_check(stored_run):
    """What a web page cannot show is refused only where asked (`page_safe`, the viewer); the field types
    are the record's own either way."""
    line = json.loads((stored_run / "episodes.jsonl").read_text().splitlines()[0])
    step = line["trajectory"][0]
    call = {"purpose": "action", "prompt_tokens": 1, "completion_tokens": 1, "latency_s": 0.1, "raw_output": "x"}
    deep = json.loads("[" * 70 + "]" * 70)
    cases = [
        ({**line, "steps": 2**53}, "steps is a number, expected an integer from -(2**53 - 1) to 2**53 - 1"),
        ({**line, "run_time_s": -1e300}, "run_time_s is a number, expected a number from -(2**53 - 1)"),
        ({**line, "trajectory": [{**step, "calls": [{**call, "cached_tokens": 2**60}]}]},
         "trajectory[0].calls[0].cached_tokens is a number, expected an integer"),
        ({**line, "flags": {"a": deep}}, "flags nests deeper than 64 levels"),
        ({**line, "newer_field": deep}, "newer_field nests deeper than 64 levels"),
        ({**line, "trajectory": [{**step, "newer_field": deep}]}, "trajectory[0].newer_field nests deeper than 64"),
    ]
    for changed, expected in cases:
        check_stored(changed, complete=False)  # a report or resume takes it: no page shows it
        with pytest.raises(RecordError, match=re.escape(expected)):
            check_stored(changed, complete=False, page_safe=True)
    check_stored(line, page_safe=True)
    check_stored({**line, "steps": 2**53 - 1, "flags": {"a": json.loads("[" * 60 + "]" * 60)}}, page_safe=True)


@pytest.mark.parametrize("meta", ["x", [1], 3])
def test_a_run_key_of_the_wrong_type_is_named_by_report_and_view(stored_run, tmp_path, capsys, meta):
    out, path = _tamper(stored_run, tmp_path, _set("meta", meta))
    code = main(["report", str(out), "--no-plots"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"{path}, line 2: not an episode record (meta is " in err and "not an object or null)" in err
    with pytest.warns(ViewerWarning) as caught:
        assert len(read_run(out).lines) == 1
    assert [str(w.message) for w in caught] == [f"{path}, line 2: {err.split('(', 1)[1].split(')')[0]}; skipped"]
    check_stored({**json.loads(path.read_text().splitlines()[0]), "meta": None})
