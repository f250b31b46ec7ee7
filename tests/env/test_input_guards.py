"""Bad input on the environment/PDDL side: every bad input gets one clear error, nothing grows without a bound,
and the surprises the adversarial probe found behave as documented.

Each test reproduces one case of the issue and checks the behaviour the issue names.
"""

from __future__ import annotations

import resource
import time
import warnings
from pathlib import Path

import pytest

import pddlworlds
from pddlworlds.env import SOLVED_AT_RESET, PDDLTextEnv
from pddlworlds.worlds.catalogue import check_split_name, get_domain, load_task, names_shipped_domain
from pddlworlds.worlds.grounding import check_size, estimate_size, ground
from pddlworlds.worlds.pddl import (
    MAX_NESTING,
    PDDLError,
    SizeLimitError,
    read_pddl_text,
    read_task,
    read_up_problem,
)

DOMAIN = """\
(define (domain toy)
  (:requirements :strips :typing)
  (:types thing)
  (:predicates (p ?x - thing) (q ?x - thing))
  ; a comment
  (:action go
    :parameters (?x - thing)
    :precondition (and (p ?x))
    :effect (and (q ?x) (not (p ?x)))))
"""

PROBLEM = """\
(define (problem toy1) (:domain toy)
  (:objects a b - thing)
  (:init (p a) (p b))
  (:goal (and (q a) (q b))))
"""


def write(folder: Path, name: str, data: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


@pytest.fixture
def toy(tmp_path: Path) -> tuple[Path, Path]:
    return write(tmp_path, "domain.pddl", DOMAIN), write(tmp_path, "problem.pddl", PROBLEM)


# ---- undecodable bytes ----------------------------------------------------------------------------


def test_utf8_is_accepted(tmp_path: Path, toy) -> None:
    domain = write(tmp_path, "utf8.pddl", DOMAIN.replace("; a comment", "; café, naïve"))
    assert read_task(domain, toy[1]).domain_name == "toy"


@pytest.mark.parametrize("reader", [read_task, load_task], ids=["read_task", "load_task"])
def test_latin1_comment_names_the_file_and_line(tmp_path: Path, toy, reader) -> None:
    domain = write(tmp_path, "latin1.pddl", DOMAIN.replace("; a comment", "; café").encode("latin-1"))
    with pytest.raises(PDDLError) as caught:
        reader(domain, toy[1])
    assert caught.value.path == str(domain) and caught.value.line == 5
    assert "not UTF-8" in str(caught.value) and "line 5, column 8" in str(caught.value)
    assert str(caught.value).startswith(f"{domain}:5: ")


def test_binary_file_is_refused_as_not_utf8(tmp_path: Path, toy) -> None:
    binary = write(tmp_path, "image.pddl", b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    with pytest.raises(PDDLError, match="not UTF-8") as caught:
        load_task(toy[0], binary)
    assert caught.value.path == str(binary) and caught.value.line == 1
    nul = write(tmp_path, "nul.pddl", b"(define\x00\x00)")
    with pytest.raises(PDDLError, match="NUL byte"):
        read_pddl_text(nul)


# ---- malformed structure ----------------------------------------------------------------------------


def test_runaway_nesting_is_a_pddl_error_not_a_recursion_error(tmp_path: Path, toy) -> None:
    deep = write(tmp_path, "deep.pddl", "(define (problem deep) (:domain toy) (:goal " + "(" * 10_000 + ")" * 10_002)
    with pytest.raises(PDDLError, match="nested deeper") as caught:
        load_task(toy[0], deep)
    assert not isinstance(caught.value.__context__, RecursionError)
    assert caught.value.path == str(deep) and caught.value.line == 1


def test_nesting_just_under_the_limit_reaches_unified_planning_without_recursion(tmp_path: Path, toy) -> None:
    # The limit must sit below the depth where unified-planning's recursive reader breaks.
    goal = "(and " * (MAX_NESTING - 4) + "(q a)" + ")" * (MAX_NESTING - 4)
    problem = write(tmp_path, "nested.pddl", PROBLEM.replace("(:goal (and (q a) (q b)))", f"(:goal {goal})"))
    assert read_task(toy[0], problem).goal == (("q", ("a",), True),)


def test_missing_parenthesis_is_reported_where_the_form_opened(tmp_path: Path, toy) -> None:
    # line 8 is `:precondition (and (p ?x))`; dropping its last ')' leaves the (and ...) of line 8 open
    domain = write(tmp_path, "d1.pddl", DOMAIN.replace("(and (p ?x))", "(and (p ?x)"))
    with pytest.raises(PDDLError, match="unclosed") as caught:
        read_task(domain, toy[1])
    assert caught.value.line == 8
    # a missing ')' at the end of a line-starting section (line 3) is found from the next section
    problem = write(tmp_path, "p.pddl", PROBLEM.replace("(:init (p a) (p b))", "(:init (p a) (p b)"))
    with pytest.raises(PDDLError, match="unclosed") as caught:
        read_task(toy[0], problem)
    assert caught.value.line == 3
    # an action missing its own last ')': blamed on the action (line 6), not on (define at line 1
    twice = DOMAIN.replace("(not (p ?x)))))", "(not (p ?x))))\n  (:action stop\n    :parameters (?x - thing)\n"
                           "    :precondition (q ?x)\n    :effect (p ?x)))")
    domain = write(tmp_path, "d2.pddl", twice.replace("(not (p ?x))))\n", "(not (p ?x)))\n", 1))
    with pytest.raises(PDDLError, match="unclosed") as caught:
        read_task(domain, toy[1])
    assert caught.value.line == 6


def test_a_goal_with_nothing_in_it_is_a_pddl_error(tmp_path: Path, toy) -> None:
    problem = write(tmp_path, "p.pddl", PROBLEM.replace("(:goal (and (q a) (q b)))", "(:goal)"))
    with pytest.raises(PDDLError, match="goal is empty") as caught:
        load_task(toy[0], problem)
    assert caught.value.path == str(problem) and caught.value.line == 4


@pytest.mark.parametrize("goal", ["(:goal (and))", "(:goal (and (and)))"])
def test_an_empty_conjunction_is_a_goal_that_holds_at_reset(tmp_path: Path, toy, goal: str) -> None:
    """`(and)` is true in every state (Fast Downward reads it so: the empty plan solves it; the IPC's
    blocks-3op ships such a first problem): the episode is over at reset, solved, with full progress."""
    problem = write(tmp_path, "p.pddl", PROBLEM.replace("(:goal (and (q a) (q b)))", goal))
    env = pddlworlds.make_env(toy[0], problem)
    observation, info = env.reset(seed=0)
    assert info["goal"] == "The goal is empty: it holds in every state."
    assert info["progress"] == 1.0 and observation.endswith("The goal is reached.")
    _, reward, terminated, _, info = env.step("look around")
    assert reward == 1.0  # the return is the progress: paid on the one step the episode has
    assert terminated and info["success"] and info["action_kind"] == "goal held at reset"


def test_missing_goal_is_a_pddl_error(tmp_path: Path, toy) -> None:
    problem = write(tmp_path, "p.pddl", PROBLEM.replace("(:goal (and (q a) (q b)))", ""))
    with pytest.raises(PDDLError, match="no \\(:goal"):
        read_task(toy[0], problem)


def test_action_without_effect_is_a_pddl_error(tmp_path: Path, toy) -> None:
    domain = write(tmp_path, "d.pddl", DOMAIN.replace("    :effect (and (q ?x) (not (p ?x)))))", "  ))"))
    with pytest.raises(PDDLError, match="action 'go' has no :effect") as caught:
        read_task(domain, toy[1])
    assert caught.value.path == str(domain) and caught.value.line == 6


def test_missing_problem_file_is_a_pddl_error(tmp_path: Path, toy) -> None:
    for reader in (read_task, load_task):
        with pytest.raises(PDDLError, match="no such file") as caught:
            reader(toy[0], tmp_path / "missing.pddl")
        assert caught.value.path == str(tmp_path / "missing.pddl")
    with pytest.raises(PDDLError, match="no such file"):
        pddlworlds.make_env(toy[0], tmp_path / "missing.pddl")


def test_a_file_named_like_a_shipped_domain_does_not_shadow_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "blocksworld").write_text("not a domain")
    assert names_shipped_domain("blocksworld") and names_shipped_domain("Blocksworld")
    assert not names_shipped_domain("./blocksworld") and not names_shipped_domain("blocksworld.pddl")
    assert not names_shipped_domain("mine")
    assert get_domain("blocksworld").domain_file.is_file()  # the catalogue ignores the working directory
    import gymnasium as gym

    assert gym.make("pddlworlds/Blocksworld-v0").reset(seed=0)[1]["domain"] == "blocksworld"
    from pddlworlds.planning import resolve_target

    target = resolve_target("blocksworld", "problem1")  # the planner's reading of a name, too
    assert target.shipped and target.domain_file == get_domain("blocksworld").domain_file


def test_the_planner_names_a_missing_problem_file(tmp_path: Path) -> None:
    from pddlworlds.planning import resolve_target

    with pytest.raises(PDDLError, match="no such PDDL file") as caught:
        resolve_target("blocksworld", str(tmp_path / "nope.pddl"))
    assert caught.value.path == str(tmp_path / "nope.pddl")


# ---- size guards -----------------------------------------------------------------------------------

WIDE_DOMAIN = """\
(define (domain wide)
  (:requirements :strips)
  (:predicates (p ?a ?b) (q ?c ?d))
  (:action a4
    :parameters (?a ?b ?c ?d)
    :precondition (p ?a ?b)
    :effect (q ?c ?d)))
"""


def wide_problem(n: int) -> str:
    objects = " ".join(f"o{i}" for i in range(n))
    return f"(define (problem wide{n}) (:domain wide)\n  (:objects {objects})\n  (:init (p o0 o1))\n  (:goal (q o0 o1)))\n"


def test_grounding_counts_the_reachable_actions_not_the_argument_tuples(tmp_path: Path) -> None:
    domain, problem = write(tmp_path, "domain.pddl", WIDE_DOMAIN), write(tmp_path, "p.pddl", wide_problem(50))
    task = read_task(domain, problem)
    assert estimate_size(task).ground_actions == 50**4  # the product of the argument domains
    assert len(ground(task).actions) == 50**2  # only (a4 o0 o1 ?c ?d) is reachable
    assert pddlworlds.make_env(domain, problem).reset(seed=0)[1]["problem"] == "p"
    # past the limit on reachable actions, refused by name; a raised limit lets it through
    with pytest.raises(SizeLimitError, match="2,500 reachable ground actions.*max_ground_actions"):
        pddlworlds.make_env(domain, problem, max_ground_actions=1_000)
    env = pddlworlds.make_env(domain, problem, max_ground_actions=3_000)
    assert env.reset(seed=0)[1]["problem"] == "p"


def test_a_reachable_explosion_is_stopped_fast_and_small(tmp_path: Path) -> None:
    """Every (p a b) true makes all 50**4 actions reachable: the exploration stops at its bound."""
    domain = write(tmp_path, "domain.pddl", WIDE_DOMAIN)
    objects = [f"o{i}" for i in range(50)]
    init = " ".join(f"(p {a} {b})" for a in objects for b in objects)
    problem = write(tmp_path, "p.pddl", f"(define (problem wide) (:domain wide) (:objects {' '.join(objects)})"
                                        f" (:init {init}) (:goal (q o0 o1)))")
    task = read_task(domain, problem)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    with pytest.raises(SizeLimitError) as caught:
        ground(task, max_explored=20_000)
    elapsed = time.perf_counter() - start
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert "20,000" in str(caught.value) and "MAX_EXPLORED" in str(caught.value) and "50 objects" in str(caught.value)
    assert elapsed < 5 and grown_kib < 100_000


def test_atom_limit_names_its_parameter(tmp_path: Path) -> None:
    domain, problem = write(tmp_path, "domain.pddl", WIDE_DOMAIN), write(tmp_path, "p.pddl", wide_problem(8))
    task = read_task(domain, problem)
    size = check_size(task)
    assert size.atoms <= 2 * 8**2 + 2 and size.atoms >= len(ground(task).atoms)
    with pytest.raises(SizeLimitError, match="ground atoms, over the limit of 10 \\(max_atoms\\)"):
        check_size(task, max_atoms=10)


def test_estimates_bound_every_shipped_problem(domain_problem, world_of) -> None:
    world = world_of(*domain_problem)
    size = estimate_size(world.lifted)
    assert len(world.task.actions) <= size.ground_actions
    assert len(world.task.atoms) <= size.atoms


def test_large_pddl_file_is_refused_before_any_parser_reads_it(tmp_path: Path, toy, monkeypatch) -> None:
    padding = "; " + "x" * 1000 + "\n"
    big = write(tmp_path, "big.pddl", PROBLEM + padding * 150)  # about 150 kB
    import unified_planning.io

    def never(*args, **kwargs):
        raise AssertionError("unified-planning must not see an oversized file")

    monkeypatch.setattr(unified_planning.io.PDDLReader, "parse_problem_string", never)
    # the world's reader takes it (4 MiB by default); unified-planning's, the planner's, refuses it first
    assert load_task(toy[0], big).problem_name == "toy1"
    with pytest.raises(SizeLimitError) as caught:
        read_up_problem(toy[0], big)
    assert caught.value.path == str(big)
    assert "max_file_bytes" in str(caught.value) and "over the limit of 131,072 bytes" in str(caught.value)
    start = time.perf_counter()
    with pytest.raises(SizeLimitError) as caught:
        load_task(toy[0], big, max_file_bytes=100_000)
    assert time.perf_counter() - start < 0.5 and "over the limit of 100,000 bytes" in str(caught.value)
    with pytest.raises(SizeLimitError, match="max_file_bytes"):
        pddlworlds.make_env(toy[0], big, max_file_bytes=100_000)


# ---- surprises ----------------------------------------------------------------------------------------


def test_split_takes_a_name_not_a_path(tmp_path: Path) -> None:
    write(tmp_path, "p1.pddl", PROBLEM)
    for bad in (str(tmp_path), "../agentboard", "agentboard/..", ".", ""):
        with pytest.raises(ValueError, match="make_env"):
            check_split_name(bad)
        with pytest.raises(ValueError, match="not a path"):
            PDDLTextEnv(domain="blocksworld", split=bad)
    assert get_domain("blocksworld").problems("agentboard")


def test_same_named_problems_from_two_folders_are_refused(tmp_path: Path, toy) -> None:
    a = write(tmp_path, "a/p1.pddl", PROBLEM)
    b = write(tmp_path, "b/p1.pddl", PROBLEM.replace("(p b)", ""))
    with pytest.raises(ValueError, match="both named 'p1'") as caught:
        pddlworlds.make_env(toy[0], [a, b])
    assert str(a) in str(caught.value) and str(b) in str(caught.value)
    # the same file twice is one problem, not a clash
    assert pddlworlds.make_env(toy[0], [a, tmp_path / "a" / ".." / "a" / "p1.pddl"]).unwrapped.problem_names == ["p1"]


def test_missing_text_file_is_an_error(tmp_path: Path, toy) -> None:
    with pytest.raises(PDDLError, match="text file not found") as caught:
        pddlworlds.make_env(toy[0], toy[1], text_file=tmp_path / "nowhere.toml")
    assert caught.value.path == str(tmp_path / "nowhere.toml")


LOOK_DOMAIN = """\
(define (domain looky)
  (:requirements :strips)
  (:predicates (clear ?x) (on ?x ?y))
  (:action stack
    :parameters (?x ?y)
    :precondition (and (clear ?x) (clear ?y))
    :effect (and (on ?x ?y) (not (clear ?y)))))
"""

LOOK_PROBLEM = """\
(define (problem look1) (:domain looky)
  (:objects look around)
  (:init (clear look) (clear around))
  (:goal (on look around)))
"""


def test_objects_named_look_around_do_not_turn_a_listed_action_into_the_meta_action(tmp_path: Path) -> None:
    domain, problem = write(tmp_path, "d.pddl", LOOK_DOMAIN), write(tmp_path, "p.pddl", LOOK_PROBLEM)
    env = pddlworlds.make_env(domain, problem)
    env.reset(seed=0)
    _, _, _, _, info = env.step("check valid actions")
    assert "stack look around" in info["valid_actions"]
    for text in ("stack look around", "(stack look around)", "Stack look around."):
        env.reset(seed=0)
        _, reward, terminated, _, info = env.step(text)
        assert info["action_kind"] == "action" and info["action"] == "stack look around"
        assert terminated and info["success"] and reward == 1.0
    env.reset(seed=0)
    assert env.step("look around")[4]["action_kind"] == "look around"


def test_negated_instruction_is_refused_and_not_executed(shared_env) -> None:
    env = shared_env("blocksworld")
    env.reset(options={"problem": "problem1"})
    state = env.unwrapped.state
    assert "unstack b2 from b3" in env.unwrapped.valid_actions()
    for text in ("do not unstack b2 from b3", "Don't unstack b2 from b3.", "never unstack b2 from b3"):
        observation, reward, _, _, info = env.step(text)
        assert env.unwrapped.state == state and reward == 0.0
        assert not info["action_valid"] and info["error"] == "negated"
        assert "negated" in observation and "Nothing was done" in observation
    assert env.step("unstack b2 from b3")[4]["action_valid"]


SOLVED_PROBLEM = PROBLEM.replace("(:goal (and (q a) (q b)))", "(:goal (and (p a)))")


def test_goal_holding_at_reset_starts_solved_and_is_never_broken(tmp_path: Path, toy) -> None:
    problem = write(tmp_path, "solved.pddl", SOLVED_PROBLEM)
    env = pddlworlds.make_env(toy[0], problem)
    observation, info = env.reset(seed=0)
    assert info["success"] and info["progress"] == 1.0
    assert observation.endswith("The goal is reached.")
    # "go a" would delete (p a) and break the goal: it is not applied; the episode ends with success
    state = env.unwrapped.state
    observation, reward, terminated, truncated, info = env.step("go a")
    assert terminated and not truncated and info["success"] and info["action_kind"] == SOLVED_AT_RESET
    assert env.unwrapped.state == state and reward == 1.0 and "already held" in observation
    # a problem whose goal does not hold at reset plays as before
    env = pddlworlds.make_env(*toy)
    _, info = env.reset(seed=0)
    assert not info["success"]
    _, _, terminated, _, info = env.step("go a")
    assert not terminated and info["action_kind"] == "action"


def test_no_warning_for_well_formed_shipped_input() -> None:
    d = get_domain("gripper")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_task(d.domain_file, d.problem_file(d.problems()[0])).goal


def test_a_domain_file_given_as_the_problem_is_named_so(tmp_path: Path, toy) -> None:
    """A collection that lists its domain among its problems (the IPC 2000 elevators' m10-strips.pddl)."""
    with pytest.raises(PDDLError, match=r"this is a domain file \(\(define \(domain toy\) \.\.\.\)\), not a problem"):
        load_task(toy[0], toy[0])
