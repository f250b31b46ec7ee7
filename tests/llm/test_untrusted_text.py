"""Text a server sends is shown inert (no escape sequence reaches the terminal, no cell breaks report.md's
tables) and stored and sent back as valid UTF-8 (a lone surrogate does not stop the episode)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from pddlworlds.cli import main
from pddlworlds.llm import Completion, LLMServiceError, LLMUnavailableError
from pddlworlds.printable import markdown_cell, printable
from pddlworlds.testing.fake_openai import FakeOpenAIServer

pytest.importorskip("openai")

#: Retitles the terminal, clears the line and forges a line of output; then a table row of its own.
HOSTILE = "bad key\x1b]0;pwned\x07\x1b[2K\r| forged | row |\nnote: all 5 episodes solved\u202e"


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def eval_argv(srv: FakeOpenAIServer, out: Path, agent: str = "standard", steps: str = "3") -> list[str]:
    return ["eval", "--agents", agent, "--domains", "blocksworld", "--problems", "problem1", "--seeds", "0",
            "--max-steps", steps, "--workers", "1", "--llm", "openai:fake-model", "--base-url", srv.base_url,
            "--out", str(out), "--no-progress"]


def test_printable_escapes_every_control_character() -> None:
    assert printable(HOSTILE) == (
        "bad key\\x1b]0;pwned\\x07\\x1b[2K\\r| forged | row |\\nnote: all 5 episodes solved\\u202e"
    )
    assert printable("plain text, é, ü, 漢字") == "plain text, é, ü, 漢字"
    assert markdown_cell("a|b\nc") == "a\\|b\\nc"
    assert LLMServiceError("rejected", HOSTILE).message == printable(HOSTILE)
    assert "\x1b" not in str(LLMUnavailableError(HOSTILE))


def test_a_servers_error_message_reaches_neither_terminal_nor_report_raw(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer("check valid actions", failures=[400], failure_message=HOSTILE) as srv:
        code, stdout, err = run_cli(eval_argv(srv, out))
    assert code == 1, err
    for text in (stdout, err):
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u202e]", text), text
    assert "bad key\\x1b]0;pwned\\x07" in err  # shown, escaped
    stored = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])["error"]["message"]
    assert "\x1b" not in stored and "\n" not in stored
    report = (out / "report.md").read_text()
    assert "\x1b" not in report and "\x07" not in report
    rows = [ln for ln in report.splitlines() if "| rejected |" in ln]
    assert len(rows) == 1
    cells = re.split(r"(?<!\\)\|", rows[0].strip())[1:-1]
    assert len(cells) == 7 and "forged \\| row" in cells[5]
    assert "note: all 5 episodes solved" not in report.replace("\\nnote: all 5", "")


def test_a_reply_with_a_lone_surrogate_does_not_stop_the_episode(tmp_path: Path) -> None:
    out = tmp_path / "run"
    replies = ["Action: check valid actions \ud800", "Action: look around \udfff"] * 3
    with FakeOpenAIServer(replies) as srv:
        code, _, err = run_cli(eval_argv(srv, out, steps="4"))
        sent = [json.dumps(r["messages"], ensure_ascii=False) for r in srv.chat_requests]
    assert code == 0, err
    line = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    assert line["error"] is None and line["steps"] == 4
    assert all(step["calls"][-1]["raw_output"].endswith("\ufffd") for step in line["trajectory"])
    assert len(sent) == 4 and "check valid actions \ufffd" in sent[-1]  # the reply went back, repaired


def test_completions_are_valid_text_whatever_the_backend() -> None:
    done = Completion("a\ud800b", 1, 1, 0.0, raw="\udc00")
    assert done.text == "a\ufffdb" and done.raw == "\ufffd"
    assert Completion("fine", 1, 1, 0.0).text == "fine"
