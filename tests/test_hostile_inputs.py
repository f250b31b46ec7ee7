"""Smaller cases of bad or hostile input, one test each: names from a shared run folder reach neither the
terminal nor report.md raw, the adapter validation script refuses a bad adapter or figures file in one line,
HiAgent's subgoal rule keeps single-letter names apart, a huge action does not grow the observation past its
space, and option, PDDL and `reset` mistakes are named in one line."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import pddlworlds
from pddlworlds.agents.sameness import same_subgoal
from pddlworlds.worlds.pddl import PDDLError

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_RUN = FIXTURES / "eval_run"
REPO = Path(__file__).resolve().parents[1]
SRC = str(Path(pddlworlds.__file__).resolve().parents[1])  # the package these tests import
ESCAPES = re.compile("[\x00-\x08\x0b-\x1f\x7f\u202e]")
HOSTILE_AGENT = "agent\x1b]0;pwned\x07[bold]x[/bold]\u202e"


def on_terminal(argv: list[str], columns: int) -> str:
    """`pddlworlds ARGV` with stdout a terminal `columns` wide (what rich sizes its tables to)."""
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": str(columns), "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-m", "pddlworlds.cli", *argv], stdout=slave, stderr=subprocess.PIPE,
                            env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed: the command ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=300) == 0, proc.stderr.read().decode()
    return b"".join(chunks).decode()


def test_names_from_a_shared_run_folder_reach_neither_terminal_nor_report_raw(tmp_path: Path) -> None:
    out = tmp_path / "run\x1b[2J"
    shutil.copytree(FIXTURE_RUN, out)
    lines = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    (out / "episodes.jsonl").write_text("".join(json.dumps({**x, "agent": HOSTILE_AGENT}) + "\n" for x in lines))
    config = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**config, "agents": {HOSTILE_AGENT: {}}, "split": "a\x1b[31m"}))
    screen = on_terminal(["report", str(out), "--no-plots"], 200)
    text = re.sub(r"\x1b\[[0-9;]*m", "", screen)  # rich's own colours and styles are fine
    assert "\x1b]0;pwned" not in screen and "\x1b[2J" not in screen and "\u202e" not in screen
    assert "\\x1b]0;pwned\\x07[bold]x[/bold]\\u202e" in text  # shown, escaped, its markup not read
    report = (out / "report.md").read_text()
    assert not ESCAPES.search(report.replace("\n", "")), [ln for ln in report.splitlines() if ESCAPES.search(ln)]
    assert "\\x1b]0;pwned\\x07" in report and "a\\x1b[31m" in report


def test_a_table_on_a_narrow_terminal_prints_every_value() -> None:
    screen = on_terminal(["list", "--domain", "blocksworld", "--split", "agentboard"], 20)
    lines = screen.replace("\r\n", "\n").splitlines()
    assert "problem: problem1" in lines and "optimal: 8" in lines and "domain: blocksworld" in lines
    assert not any(re.fullmatch(r"[│┃ ]+", line) for line in lines)  # no row of empty cells
    wide = on_terminal(["list", "--domain", "blocksworld", "--split", "agentboard"], 120)
    assert re.search(r"│ blocksworld\s+│ agentboard\s+│ problem1\s+│", wide)


def validate(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO / "scripts" / "validate_adapter.py"), *argv], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": SRC}, check=False)


def test_validate_adapter_refuses_a_bad_adapter_and_a_foreign_figures_file_in_one_line(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="the embedded model needs llama-cpp-python")
    bad = tmp_path / "adapter.gguf"
    bad.write_text("not an adapter\n")
    done = validate("--lora", str(bad), "--out", str(tmp_path / "v.json"), "--domains", "blocksworld")
    assert done.returncode == 2 and "--lora" in done.stderr and "not a GGUF file" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "BrokenProcessPool" not in done.stderr
    assert not (tmp_path / "v.json.run").exists() and not (tmp_path / "v.json.episodes.jsonl").exists()
    for content, expected in (('{"held_out', "not valid JSON"), ("[1, 2]", "not a figures file of this script"),
                              ('{"figures": {}, "held_out_set": "nope"}', "held-out set 'nope' is none of")):
        (tmp_path / "f.json").write_text(content)
        done = validate("--out", str(tmp_path / "f.json"), "--report-only")
        assert done.returncode == 2 and expected in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    (tmp_path / "f.json").write_text('{"figures": {}}')
    (tmp_path / "f.json.episodes.jsonl").write_text('{"agent": "standard"}\n')
    done = validate("--out", str(tmp_path / "f.json"), "--report-only")
    assert done.returncode == 2 and "f.json.episodes.jsonl:1: not an episode of this script" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("move every ball to room b", "move every ball to room a", False),
        ("move every ball to room a", "move all the balls to room a", True),
        ("go to room a, then pick up a ball", "go to room b, then pick up a ball", False),
        ("pick up a ball in room a", "pick up a ball in room a", True),
        ("take the balls from room c to room d", "take the balls from room d to room c", False),
        ("move ball1 to roomb", "carry ball1 into roomb", True),
    ],
)
def test_single_letter_object_names_keep_subgoals_apart(a: str, b: str, same: bool) -> None:
    assert same_subgoal(a, b) is same and same_subgoal(b, a) is same


@pytest.mark.parametrize("domain", ["Blocksworld", "Gripper", "Tyreworld", "Barman"])
@pytest.mark.parametrize("profile", ["pddlworlds", "agentboard"])
def test_a_huge_action_keeps_the_observation_inside_its_space(domain: str, profile: str) -> None:
    env = gym.make(f"pddlworlds/{domain}-v0", profile=profile).unwrapped
    env.reset(seed=0)
    for action in ("stack " + "x" * 1_000_000, "y" * 1_000_000, "pick up " + "z" * 999_999 + " now"):
        observation, *_ = env.step(action)
        assert env.observation_space.contains(observation), (len(observation), observation[:200])
        assert len(observation) < 2_000


def test_threads_below_one_is_refused_by_the_parser(cli) -> None:
    code, _, err = cli(["serve", "--threads", "-5", "--port", "18999"])
    # serve bounds its own numbers, so that its startup errors are one line without the usage text
    assert code == 2 and "--threads must be at least 1, not -5" in err and err.strip().count("\n") == 0, err
    assert "pydantic" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--agents", "random", "--decoding", "admissible"], "--setting admissible says how a model plays"),
        (["--agents", "random", "--domains", ""], "--domains is empty"),
        (["--agents", "random", "--domains", " , "], "--domains is empty"),
    ],
)
def test_eval_options_that_cannot_run_are_refused_before_anything_is_written(tmp_path: Path, cli, argv, expected):
    out = tmp_path / "run"
    code, _, err = cli(["eval", *argv, "--out", str(out), "--no-progress"])
    assert code == 2 and expected in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


DOMAIN = """(define (domain d)
  (:requirements :strips :typing{requirement})
  (:types {types})
  (:predicates (p ?x - a))
  (:action act :parameters (?x - a) :precondition (p ?x) :effect (not (p ?x))))
"""
PROBLEM = "(define (problem p) (:domain d) (:objects o - a) (:init (p o)) (:goal (not (p o))))\n"


@pytest.mark.parametrize(
    ("requirement", "types", "expected"),
    [
        (" :foo-bar", "a", r"domain.pddl:2: unknown requirement :foo-bar: PDDL has no such requirement"),
        ("", "a - b b - a", r"domain.pddl:3: the types form a cycle \(a - b - a\)"),
        ("", "a - b b - c c - b", r"domain.pddl:3: the types form a cycle \(b - c - b\)"),
        ("", "a - a", r"domain.pddl:3: the types form a cycle \(a - a\)"),
    ],
)
def test_a_pddl_mistake_is_named_with_file_and_line(tmp_path: Path, requirement: str, types: str, expected: str):
    domain = tmp_path / "domain.pddl"
    domain.write_text(DOMAIN.format(requirement=requirement, types=types))
    (tmp_path / "p.pddl").write_text(PROBLEM)
    with pytest.raises(PDDLError, match=expected):
        pddlworlds.make_env(domain, tmp_path / "p.pddl")


def test_the_same_domain_without_the_mistake_loads(tmp_path: Path) -> None:
    domain = tmp_path / "domain.pddl"
    domain.write_text(DOMAIN.format(requirement=" :negative-preconditions", types="a b - object"))
    (tmp_path / "p.pddl").write_text(PROBLEM)
    assert pddlworlds.make_env(domain, tmp_path / "p.pddl").reset(seed=0)[1]["problem"] == "p"


@pytest.mark.parametrize("options", [["problem"], "problem", {"problem": ["p01"]}])
def test_reset_options_of_the_wrong_type_are_named(options) -> None:
    env = gym.make("pddlworlds/Blocksworld-v0")
    with pytest.raises(TypeError, match=r"reset option"):
        env.reset(options=options)


def test_the_docs_speak_of_the_project_not_of_its_tracker() -> None:
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        found = re.findall(r"(?i)\bissue\s+#?\d+|\bthe issue'?s?\b", path.read_text())
        assert not found, (path.name, found)
