"""The run viewer's data: reading run folders (in progress, resumed, damaged), figures, pictures, replay, page.

Fixtures: tests/fixtures/eval_run (expert and random, made by `pddlworlds eval`) and tests/fixtures/viewer_run
(HiAgent and STANDARD through the stand-in server: tests/fixtures/make_viewer_run.py).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from pddlworlds.cli import main
from pddlworlds.viewer import ViewerError, ViewerWarning, build_html, page_data, picture_of, read_run
from pddlworlds.viewer.pagedata import progress_curve, step_tokens, summary

FIXTURES = Path(__file__).parents[1] / "fixtures"
EVAL_RUN = FIXTURES / "eval_run"
VIEWER_RUN = FIXTURES / "viewer_run"


def lines_of(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines() if line.strip()]


def copy_run(tmp_path: Path, source: Path = EVAL_RUN) -> Path:
    target = tmp_path / source.name
    shutil.copytree(source, target)
    return target


# ---- reading run folders --------------------------------------------------------------------------


def test_reads_a_finished_run() -> None:
    run = read_run(EVAL_RUN)
    assert run.config["agents"].keys() == {"expert", "random"}
    assert len(run.lines) == 16 and run.notes == []
    assert run.lines == lines_of(EVAL_RUN)


def test_torn_last_line_of_a_run_in_progress_is_skipped(tmp_path: Path) -> None:
    folder = copy_run(tmp_path)
    whole = (folder / "episodes.jsonl").read_bytes()
    with open(folder / "episodes.jsonl", "ab") as handle:
        handle.write(whole.split(b"\n")[0][:300])  # half an episode: the runner is still writing it
    run = read_run(folder)
    assert len(run.lines) == 16 and run.notes == []


def test_an_episode_stored_twice_keeps_its_first_line_with_a_note(tmp_path: Path) -> None:
    folder = copy_run(tmp_path)
    first = lines_of(folder)[0]
    again = dict(first, progress=0.5, run_time_s=99.0)
    with open(folder / "episodes.jsonl", "a") as handle:
        handle.write(json.dumps(again) + "\n")
    with pytest.warns(ViewerWarning, match=r"episodes.jsonl, line 17: duplicate of line 1; skipped"):
        run = read_run(folder)
    assert len(run.lines) == 16
    kept = [
        line
        for line in run.lines
        if (line["agent"], line["domain"], line["problem"])
        == (first["agent"], first["domain"], first["problem"])
    ]
    assert kept == [first]  # as the report and a resume count it


def test_bad_line_in_the_middle_is_skipped_with_file_and_line(tmp_path: Path) -> None:
    folder = copy_run(tmp_path)
    lines = (folder / "episodes.jsonl").read_text().splitlines()
    lines[2] = "{not json"
    lines[4] = json.dumps({"domain": "gripper"})
    (folder / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.warns(ViewerWarning) as caught:
        run = read_run(folder)
    assert len(run.lines) == 14
    messages = [str(w.message) for w in caught]
    assert any("episodes.jsonl, line 3: not valid JSON" in m for m in messages)
    assert any("episodes.jsonl, line 5: no agent, problem" in m for m in messages)
    assert run.notes == messages


def test_not_a_run_folder(tmp_path: Path) -> None:
    with pytest.raises(ViewerError, match="not a folder"):
        read_run(tmp_path / "missing")
    with pytest.raises(ViewerError, match="neither config.json nor episodes.jsonl"):
        read_run(tmp_path)
    (tmp_path / "config.json").write_text("{oops")
    with pytest.raises(ViewerError, match=r"config\.json: not valid JSON"):
        read_run(tmp_path)


def test_run_without_config_yet_opens(tmp_path: Path) -> None:
    folder = copy_run(tmp_path)
    (folder / "config.json").unlink()
    data, _ = page_data([read_run(folder)], replay=False)
    assert data["runs"][0]["config"] == {} and len(data["episodes"]) == 16


def test_older_and_newer_records_open(tmp_path: Path) -> None:
    folder = copy_run(tmp_path, VIEWER_RUN)
    lines = lines_of(folder)
    old = json.loads(json.dumps(lines[0]))
    for key in ("meta", "memory", "error", "flags", "model"):
        old.pop(key, None)
    for step in old["trajectory"]:
        for key in ("memory_view", "subgoal", "subgoal_index", "calls", "raw_output"):
            step.pop(key)
    new = json.loads(json.dumps(lines[1]))
    new["flags"]["example_digest"] = "abc123"
    new["context_tokens"] = 1234
    new["trajectory"][0]["context_tokens"] = 77
    (folder / "episodes.jsonl").write_text(json.dumps(old) + "\n" + json.dumps(new) + "\n")
    data, details = page_data([read_run(folder)])
    assert [row["memory"] for row in data["episodes"]] == [False, True]  # STANDARD sends its history too
    assert details[0]["steps"][0]["memory_view"] is None and details[0]["steps"][0]["calls"] == []
    assert details[1]["more"] == {"context_tokens": 1234}
    assert details[1]["steps"][0]["more"] == {"context_tokens": 77}
    assert details[1]["flags"]["example_digest"] == "abc123"


# ---- figures ----------------------------------------------------------------------------------------


def test_summary_matches_the_records_by_hand() -> None:
    lines = lines_of(EVAL_RUN)
    data, _ = page_data([read_run(EVAL_RUN)], replay=False)
    rows = {(s["label"], s["domain"]): s for s in data["summary"]}
    for agent in ("expert", "random"):
        for domain in ("barman", "blocksworld", "gripper", "tyreworld", "all"):
            mine = [ln for ln in lines if ln["agent"] == agent and domain in ("all", ln["domain"])]
            s = rows[(agent, domain)]
            assert s["episodes"] == len(mine)
            assert s["success_rate"] == pytest.approx(sum(ln["success"] for ln in mine) / len(mine))
            assert s["progress_rate"] == pytest.approx(sum(ln["progress"] for ln in mine) / len(mine))
            assert s["steps"] == pytest.approx(sum(ln["steps"] for ln in mine) / len(mine))
    assert rows[("expert", "all")]["success_rate"] == 1.0


def test_tokens_come_from_the_calls() -> None:
    line = lines_of(VIEWER_RUN)[0]
    step = line["trajectory"][4]  # the step with a retrieval and a summary call before its action
    assert [c["purpose"] for c in step["calls"]] == ["retrieve", "summary", "action"]
    assert step_tokens(step) == (
        sum(c["prompt_tokens"] for c in step["calls"]),
        sum(c["completion_tokens"] for c in step["calls"]),
    )
    assert step_tokens({"prompt_tokens": 5, "completion_tokens": 2, "calls": []}) == (5, 2)
    data, _ = page_data([read_run(VIEWER_RUN)], replay=False)
    expected = sum(sum(step_tokens(s)) for s in line["trajectory"])
    assert data["episodes"][0]["tokens"] == expected > 0


def test_progress_curve_holds_the_last_value() -> None:
    line = {"trajectory": [{"progress": 0.0}, {"progress": 0.5}, {"progress": 0.25}], "progress": 0.5}
    assert progress_curve(line, 5) == [0.0, 0.0, 0.5, 0.5, 0.5, 0.5]
    data, _ = page_data([read_run(EVAL_RUN)], replay=False)
    series = {(s["label"], s["domain"]): s["values"] for s in data["curves"]["series"]}
    expert_bw = [ln for ln in lines_of(EVAL_RUN) if ln["agent"] == "expert" and ln["domain"] == "blocksworld"]
    assert series[("expert", "blocksworld")][-1] == pytest.approx(1.0)
    k = 3
    assert series[("expert", "blocksworld")][k] == pytest.approx(
        sum(ln["trajectory"][k - 1]["progress"] for ln in expert_bw) / len(expert_bw), abs=1e-4
    )
    assert data["curves"]["max_k"] == 30


def test_summary_groups_two_runs_apart() -> None:
    data, _ = page_data([read_run(VIEWER_RUN), read_run(EVAL_RUN)], replay=False)
    labels = {row["label"] for row in data["episodes"]}
    assert labels == {"viewer_run:hiagent", "viewer_run:standard", "eval_run:expert", "eval_run:random"}
    assert summary([]) == []


# ---- steps: replay, pictures -------------------------------------------------------------------------


def test_replay_gives_the_parsed_action_and_why_not() -> None:
    _, details = page_data([read_run(VIEWER_RUN)])
    steps = details[0]["steps"]
    assert [s["replayed"] for s in steps] == [True] * len(steps)
    assert steps[1]["action"] == "put down b2" and steps[1]["canonical"] == "putdown b2"
    assert steps[6]["valid"] is False and steps[6]["why"] == "unknown_verb"
    assert "Unknown action 'jump around'" in steps[6]["observation"]


def test_replay_stops_where_the_record_disagrees(tmp_path: Path) -> None:
    folder = copy_run(tmp_path, VIEWER_RUN)
    lines = lines_of(folder)
    lines[0]["trajectory"][2]["observation"] = "something else happened"
    (folder / "episodes.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    _, details = page_data([read_run(folder)])
    assert [s["replayed"] for s in details[0]["steps"]][:4] == [True, True, False, False]


def test_pictures_from_observations() -> None:
    bw = picture_of(
        "blocksworld", "b1 is on the table. b3 is on b1. b3 is clear. The robot arm is holding b2."
    )
    assert bw == {"kind": "blocksworld", "stacks": [["b1", "b3"]], "holding": "b2"}
    text = (
        "rooma is a room. roomb is a room. left is a gripper. right is a gripper. Robby is at roomb. "
        "ball1 is at rooma. ball2 is at roomb. left is carrying ball3. right is free."
    )
    gr = picture_of("gripper", text)
    assert gr["rooms"] == [
        {"name": "rooma", "balls": ["ball1"], "robby": False},
        {"name": "roomb", "balls": ["ball2"], "robby": True},
    ]
    assert gr["grippers"] == [{"name": "left", "carrying": "ball3"}, {"name": "right", "carrying": None}]
    assert picture_of("blocksworld", "Unknown action 'jump'.") is None
    assert picture_of("barman", "shaker1 is on the table.") is None


def test_picture_is_kept_across_steps_without_state() -> None:
    _, details = page_data([read_run(VIEWER_RUN)])
    steps = details[0]["steps"]
    assert (
        steps[6]["picture"]
        == steps[5]["picture"]
        == {"kind": "blocksworld", "stacks": [["b1", "b2"], ["b3"]], "holding": None}
    )


# ---- the page and the command ---------------------------------------------------------------------------


def test_page_is_self_contained_and_record_text_cannot_break_out(tmp_path: Path) -> None:
    folder = copy_run(tmp_path, VIEWER_RUN)
    lines = lines_of(folder)
    lines[0]["trajectory"][0]["raw_output"] = (
        "</script><script>alert(1)</script> /*@SCRIPT@*/ <!--@EPISODES@-->"
    )
    (folder / "episodes.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    page = build_html([read_run(folder)])
    assert page.count("</script>") == 1 + 1 + len(lines)  # data, script, one block per episode
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<script src" not in page and "<link" not in page
    block = re.search(r'<script type="application/json" id="ep-0">(.*?)</script>', page, re.DOTALL).group(1)
    assert json.loads(block)["steps"][0]["raw_output"].startswith("</script><script>alert(1)")


def test_cli_writes_the_page_and_prints_its_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "page.html"
    assert main(["view", str(VIEWER_RUN), str(EVAL_RUN), "--out", str(out), "--no-replay"]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_cli_names_a_bad_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(tmp_path / "nope")]) == 2
    assert "nope: not a folder" in capsys.readouterr().err


def test_serve_on_localhost(tmp_path: Path) -> None:
    folder = copy_run(tmp_path)
    root = Path(__file__).parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pddlworlds.cli", "view", str(folder), "--serve", "--no-replay"],
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin"},
    )
    try:
        assert proc.stdout.readline().strip() == str(folder / "view.html")
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/view\.html", line).group(0)
        deadline = time.monotonic() + 10
        while True:
            try:
                body = urllib.request.urlopen(url, timeout=5).read().decode()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        assert body == (folder / "view.html").read_text()
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(url.replace("view.html", "episodes.jsonl"), timeout=5)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_memory_views_stored_as_shared_prefix_and_tail_rebuild_exactly() -> None:
    from pddlworlds.viewer.page import compact_memory

    _, details = page_data([read_run(VIEWER_RUN)], replay=False)
    compacted = 0
    for detail in details:
        packed = compact_memory(detail)
        previous = None
        for original, step in zip(detail["steps"], packed["steps"]):
            if "memory_delta" in step:  # what the page's script does
                compacted += 1
                shared, tail = step["memory_delta"]
                view = previous[:shared] + tail
            else:
                view = step["memory_view"]
            assert view == original["memory_view"]
            previous = view
    assert compacted > 10


def test_cli_makes_the_out_folder_and_names_a_busy_port(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    out = tmp_path / "new" / "folder" / "page.html"
    assert main(["view", str(VIEWER_RUN), "--out", str(out), "--no-replay"]) == 0 and out.is_file()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert (
            main(["view", str(VIEWER_RUN), "--out", str(out), "--no-replay", "--serve", "--port", str(port)])
            == 2
        )
    assert f"--port {port}: cannot serve on 127.0.0.1:{port}" in capsys.readouterr().err


# ---- every stored value is untrusted ----------------------------------------------------------------------

MARKUP = '<img src=x onerror="window.__pwned=1">'
#: (where, field) of every stored number the page lays out; "" is the episode, "step" its first step,
#: "call" that step's first call.
NUMBER_FIELDS = [
    ("", "seed"),
    ("", "progress"),
    ("", "steps"),
    ("", "optimal_length"),
    ("", "run_time_s"),
    ("step", "index"),
    ("step", "subgoal_index"),
    ("step", "progress"),
    ("step", "prompt_tokens"),
    ("step", "completion_tokens"),
    ("step", "latency_s"),
    ("call", "prompt_tokens"),
    ("call", "completion_tokens"),
    ("call", "latency_s"),
]


def set_field(line: dict, where: str, name: str, value: object) -> dict:
    line = json.loads(json.dumps(line))
    target = {"": line, "step": line["trajectory"][0], "call": line["trajectory"][0]["calls"][0]}[where]
    target[name] = value
    return line


def test_a_string_in_a_number_field_refuses_the_line_with_file_and_line(tmp_path: Path) -> None:
    folder = copy_run(tmp_path, VIEWER_RUN)
    good = lines_of(folder)[0]
    bad = [set_field(good, where, name, MARKUP) for where, name in NUMBER_FIELDS]
    bad.append(set_field(good, "step", "memory_view", 5))  # a memory view that is no text
    bad.append(set_field(good, "step", "observation", ["a", "list"]))
    (folder / "episodes.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in [good, *bad]))
    with pytest.warns(ViewerWarning) as caught:
        run = read_run(folder)
    assert run.lines == [good]
    notes = [str(w.message) for w in caught]
    assert len(notes) == len(bad)
    assert notes[5].endswith("episodes.jsonl, line 7: trajectory[0].index is a string, not an integer; skipped")
    assert "line 13: trajectory[0].calls[0].prompt_tokens is a string" in notes[11]
    assert "line 16: trajectory[0].memory_view is a number, not a string or null" in notes[14]
    for number, (note, (where, name)) in enumerate(zip(notes, NUMBER_FIELDS), start=2):
        assert f"episodes.jsonl, line {number}: " in note and f"{name} is a string" in note
        assert MARKUP not in note  # the note names the field, never repeats the value


def test_view_survives_nan_surrogates_deep_nesting_and_huge_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy_run(tmp_path, VIEWER_RUN)
    good = lines_of(folder)[0]
    text = "".join(json.dumps(ln) + "\n" for ln in [good])
    text += json.dumps(set_field(good, "", "progress", 0.5)).replace('"progress": 0.5', '"progress": NaN') + "\n"
    text += json.dumps(set_field(good, "", "run_time_s", 1.5)).replace("1.5", "Infinity") + "\n"
    text += json.dumps(set_field(good, "", "run_time_s", 1.5)).replace("1.5", "1e400") + "\n"
    text += json.dumps(set_field(good, "", "steps", 2**70)) + "\n"
    text += json.dumps(set_field(good, "", "deep", "X")).replace('"X"', "[" * 100_000 + "]" * 100_000) + "\n"
    text += json.dumps(set_field(good, "", "flags", {"a": json.loads("[" * 100 + "]" * 100)})) + "\n"
    lone = set_field(good, "step", "observation", "b1 is on the table.")
    lone["problem"] = "lone"
    text += json.dumps(lone).replace("b1 is on the table.", "b1 \\ud800 is on the table.") + "\n"
    (folder / "episodes.jsonl").write_text(text)
    out = tmp_path / "page.html"
    assert main(["view", str(folder), "--out", str(out), "--no-replay"]) == 0
    err = capsys.readouterr().err
    for number in (2, 3, 4):
        assert f"line {number}: not valid JSON" in err
    assert "line 5: steps is a number, expected an integer" in err
    assert "line 6: not valid JSON (nested too deep to read)" in err
    assert "line 7: flags nests deeper than 64 levels" in err
    page = out.read_bytes().decode("utf-8")  # valid UTF-8 throughout
    assert "b1 \ufffd is on the table." in page


def test_view_names_a_bad_out_or_port_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    import pddlworlds.viewer.page as page_module

    assert main(["view", str(VIEWER_RUN), "--out", str(tmp_path), "--no-replay"]) == 2
    assert f"{tmp_path}: is a folder" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert main(["view", str(VIEWER_RUN), "--out", str(tmp_path / "file" / "page.html"), "--no-replay"]) == 2
    err = capsys.readouterr().err
    assert "cannot write the page" in err and len(err.strip().splitlines()) == 1
    for code in (errno.ENOSPC, errno.EROFS, errno.EACCES):

        def refuse(*args: object, code: int = code, **kwargs: object) -> None:
            raise OSError(code, os.strerror(code))

        monkeypatch.setattr(page_module, "atomic_write", refuse)
        assert main(["view", str(VIEWER_RUN), "--out", str(tmp_path / "p.html"), "--no-replay"]) == 2
        err = capsys.readouterr().err
        assert f"p.html: cannot write the page ({os.strerror(code)})" in err
        assert len(err.strip().splitlines()) == 1
    for port in ("70000", "-1", "http"):
        with pytest.raises(SystemExit) as exited:
            main(["view", str(VIEWER_RUN), "--serve", "--port", port])
        assert exited.value.code == 2
        assert "is not a port number" in capsys.readouterr().err


def test_page_security_policy_allows_only_its_own_script_and_style(tmp_path: Path) -> None:
    import base64
    import hashlib

    page = build_html([read_run(VIEWER_RUN)], replay=False)
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page).group(1)
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy and "unsafe-hashes" not in policy
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";") if " " in d.strip())
    script = re.search(r"<script>(.*?)</script>", page, re.DOTALL).group(1)
    style = re.search(r"<style>(.*?)</style>", page, re.DOTALL).group(1)

    def source(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert directives["script-src"] == source(script) and directives["style-src"] == source(style)
    assert directives["default-src"] == "'none'"
    assert " style=" not in page.split("</style>", 1)[1]  # no style attribute: the policy would block it
