"""`pddlworlds plan` and `pddlworlds list --ground` on files the engine refuses: one line naming the file and
what is wrong, exit 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

DOMAIN = """(define (domain par) (:requirements :typing)
  (:types car - vehicle)
  (:predicates (moved ?v - vehicle))
  (:action move :parameters (?v - vehicle) :precondition (and) :effect (moved ?v)))"""


@pytest.mark.parametrize("objects", ["c1 - car x1 - boat", "c1 - car v1 - vehicle"])
@pytest.mark.parametrize("command", [["plan"], ["list", "--ground"]])
def test_a_refused_or_read_problem_is_never_a_traceback(cli, tmp_path: Path, command: list[str], objects: str) -> None:
    (tmp_path / "domain.pddl").write_text(DOMAIN)
    (tmp_path / "problem.pddl").write_text(f"(define (problem p) (:domain par) (:objects {objects}) (:init) "
                                           "(:goal (moved c1)))")
    files = ([str(tmp_path / "domain.pddl"), str(tmp_path / "problem.pddl")] if command == ["plan"]
             else ["--domain-file", str(tmp_path / "domain.pddl"), "--problem-files", str(tmp_path / "problem.pddl")])
    code, out, err = cli([*command, *files])
    assert "Traceback" not in err
    if "boat" in objects:  # an object of an undeclared type: one line naming the file
        assert code == 2 and err.count("\n") == 1
        assert "problem.pddl:1: the object x1 has the type 'boat', which the domain does not declare" in err
    else:  # an object of a type named only as a parent (`vehicle`): read, and planned
        assert code == 0, err
        if command == ["plan"]:
            assert "(move c1)" in out
