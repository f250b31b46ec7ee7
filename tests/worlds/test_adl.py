"""ADL, derived predicates and action costs: small domains (tests/fixtures/pddl) loaded with `read_task` +
`ground`, checked by hand against PDDL semantics, and along seeded random walks against pymimir, an
independent simulator (its own parser, grounder and successor generator, in C++). Hostile input gives one
clear `PDDLError`, never a hang or a traceback."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pymimir
import pytest

from pddlworlds.worlds.grounding import GroundTask, ground
from pddlworlds.worlds.pddl import PDDLError, SizeLimitError, read_task

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pddl"
NAMES = sorted(p.name for p in FIXTURES.iterdir() if (p / "domain.pddl").is_file())


def load(name: str) -> GroundTask:
    return ground(read_task(FIXTURES / name / "domain.pddl", FIXTURES / name / "problem.pddl"))


def applicable(task: GroundTask, state: int) -> list[str]:
    return [task.actions[i].pddl for i in task.applicable(state)]


def step(task: GroundTask, state: int, action: str) -> int:
    schema, *args = action.strip("()").split()
    index = task.action_index[(schema, tuple(args))]
    assert task.is_applicable(state, index), f"{action} is not applicable"
    return task.apply(state, index)


def run(task: GroundTask, *actions: str) -> int:
    state = task.init
    for action in actions:
        state = step(task, state, action)
    return state


def atoms(task: GroundTask, state: int, predicate: str | None = None) -> set[str]:
    return {"(" + " ".join((name, *args)) + ")" for name, args in task.true_atoms(state)
            if predicate is None or name == predicate}


def test_every_fixture_is_listed() -> None:
    assert NAMES == ["party", "roads", "shared-names", "switches", "towers"]
    assert (FIXTURES / "README.md").is_file()


# ---- conditional and quantified effects (switches) ----------------------------------------------


def test_forall_when_effects_read_the_state_before_the_action() -> None:
    task = load("switches")
    assert atoms(task, task.init) == {"(on l1)"}
    assert applicable(task, task.init) == ["(toggle-all)", "(flash l1)", "(flash l2)", "(flash l3)", "(smash l1)"]
    (schema,) = [s for s in task.lifted.schemas if s.name == "toggle-all"]
    assert schema.conditional and not schema.add and not schema.delete
    toggled = run(task, "(toggle-all)")
    assert atoms(task, toggled) == {"(on l2)", "(on l3)"}  # not toggled twice: conditions read before
    assert run(task, "(toggle-all)", "(toggle-all)") == task.init


def test_a_when_that_adds_and_deletes_one_atom_adds_it() -> None:
    task = load("switches")
    once = run(task, "(flash l1)")
    # (when (on l1) (and (not (on l1)) (on l1))): on l1 stays; (seen l1) is added
    assert atoms(task, once) == {"(on l1)", "(seen l1)"}
    # now (when (seen l1) (not (seen l1))) fires, but the action also adds (seen l1): the add wins
    assert run(task, "(flash l1)", "(flash l1)") == once
    # off: the when does not fire, on l2 stays false
    assert atoms(task, run(task, "(flash l2)")) == {"(on l1)", "(seen l2)"}


def test_quantified_conditional_effect_with_equality() -> None:
    task = load("switches")
    smashed = run(task, "(toggle-all)", "(smash l2)")  # on l2 l3 -> l3 seen, l2 broken and off
    assert atoms(task, smashed) == {"(on l3)", "(seen l3)", "(broken l2)"}
    assert "(flash l2)" not in applicable(task, smashed) and "(flash l1)" in applicable(task, smashed)


def test_switches_goal_and_progress() -> None:
    task = load("switches")
    assert task.goal_size == 3 and task.progress(task.init) == 0
    after = run(task, "(flash l1)")
    assert task.progress(after) == pytest.approx(1 / 3) and not task.is_goal(after)
    assert task.is_goal(run(task, "(flash l1)", "(toggle-all)"))


# ---- derived predicates (towers) -----------------------------------------------------------------


def test_derived_predicates_recursive_and_stratified() -> None:
    task = load("towers")
    assert set(task.lifted.derived) == {"clear", "above", "floating"}
    assert atoms(task, task.init, "clear") == {"(clear b)", "(clear c)"}
    assert atoms(task, task.init, "above") == {"(above a table)", "(above b a)", "(above b table)", "(above c table)"}
    assert applicable(task, task.init) == ["(move b a c)", "(move b a table)", "(move c table b)"]
    state = run(task, "(move c table b)")
    assert atoms(task, state, "above") == {"(above a table)", "(above b a)", "(above b table)", "(above c b)",
                                          "(above c a)", "(above c table)"}
    assert atoms(task, state, "clear") == {"(clear c)"}
    # derived atoms are recomputed, not kept: moving c back removes what it implied
    assert run(task, "(move c table b)", "(move c b table)") == task.init


def test_derived_predicate_over_a_negated_derived_one() -> None:
    task = load("towers")
    # a cycle a-on-b-on-a is unreachable, but closure computes `floating` one stratum above `above`
    state = task.closure(task.state_of([("on", ("a", "b")), ("on", ("b", "a")), ("on", ("c", "table"))]))
    assert atoms(task, state, "floating") == {"(floating a)", "(floating b)"}
    assert "(above a a)" in atoms(task, state, "above")
    assert not atoms(task, task.init, "floating")


def test_goal_on_derived_atoms() -> None:
    task = load("towers")
    assert task.goal_size == 2 and task.progress(task.init) == 0
    state = run(task, "(move b a table)", "(move a table c)")
    assert task.progress(state) == pytest.approx(1 / 2)
    assert task.is_goal(run(task, "(move b a table)", "(move a table c)", "(move b table a)"))
    # hidden helper atoms of the translator are not shown
    assert all(not name.startswith("new-axiom@") for name, _ in task.true_atoms(state))


# ---- action costs (roads) ------------------------------------------------------------------------


def test_action_costs_constant_static_function_and_none() -> None:
    task = load("roads")
    assert task.costs and task.lifted.costs
    costs = {a.pddl: a.cost for a in task.actions}
    assert costs["(drive a b)"] == 2 and costs["(drive b c)"] == 3 and costs["(drive a c)"] == 7
    assert costs["(fly c a)"] == 10 and costs["(rest b)"] == 0
    assert applicable(task, task.init) == ["(drive a b)", "(drive a c)", "(fly a a)", "(fly a b)", "(fly a c)",
                                           "(rest a)"]
    assert run(task, "(rest a)") == task.init  # an action with no effect is still an action
    assert task.is_goal(run(task, "(drive a b)", "(drive b c)"))
    assert not task.is_goal(run(task, "(drive a c)"))  # c reached, b not visited


def test_without_the_metric_every_action_costs_one(tmp_path: Path) -> None:
    text = (FIXTURES / "roads" / "problem.pddl").read_text().replace("\n  (:metric minimize (total-cost))", "")
    (tmp_path / "problem.pddl").write_text(text)
    task = ground(read_task(FIXTURES / "roads" / "domain.pddl", tmp_path / "problem.pddl"))
    assert not task.costs and {a.cost for a in task.actions} == {1}


# ---- forall / exists / or / imply / = (party) ----------------------------------------------------


def test_quantified_and_disjunctive_preconditions() -> None:
    task = load("party")
    # close: every guest in the room asleep; wake: some guest asleep there; sleep: not the hall, or happy
    assert applicable(task, task.init) == ["(sleep ann den)", "(walk ann den hall)", "(walk bob hall den)"]
    state = run(task, "(walk ann den hall)")
    assert atoms(task, state) == {"(in ann hall)", "(in bob hall)", "(happy ann)"}  # (when (= ?to hall) ...)
    assert "(close den)" in applicable(task, state)  # no one in the den: forall holds vacuously
    assert "(sleep ann hall)" in applicable(task, state) and "(sleep bob hall)" not in applicable(task, state)
    state = step(task, state, "(sleep ann hall)")
    assert "(wake hall)" in applicable(task, state) and "(close hall)" not in applicable(task, state)
    woken = step(task, state, "(wake hall)")
    assert atoms(task, woken) == {"(in ann hall)", "(in bob hall)", "(happy ann)"}


def test_quantified_goal_conditions_count_one_each() -> None:
    task = load("party")
    assert task.lifted.goal == (("happy", ("ann",), True),) and len(task.lifted.goal_conditions) == 3
    assert [c.op for c in task.lifted.goal_conditions] == ["forall", "or", "or"]  # imply is (or (not a) b)
    assert task.goal_size == 4
    assert task.progress(task.init) == pytest.approx(1 / 4)  # only the imply holds (bob is awake)
    plan = ["(walk ann den hall)", "(walk bob hall den)", "(sleep ann hall)", "(sleep bob den)", "(close den)"]
    progress = []
    state = task.init
    for action in plan:
        state = step(task, state, action)
        progress.append(task.progress(state))
    assert progress == [pytest.approx(x) for x in (2 / 4, 2 / 4, 3 / 4, 3 / 4, 3 / 4)]
    assert task.is_goal(step(task, state, "(close hall)"))
    # the imply fails where bob sleeps in the hall
    bad = run(task, "(walk bob hall den)", "(walk bob den hall)", "(sleep bob hall)")
    assert task.progress(bad) == pytest.approx(1 / 4)  # happy ann no, forall no, or yes, imply no
    assert atoms(task, bad) == {"(in ann den)", "(in bob hall)", "(happy bob)", "(asleep bob)"}


# ---- names shared by a type, a predicate, an action and an object; `either` ----------------------


def test_names_shared_between_type_predicate_action_and_object() -> None:
    task = load("shared-names")
    lifted = task.lifted
    assert {name for name, _ in lifted.predicates} == {"open", "lock", "has"}
    assert [s.name for s in lifted.schemas] == ["open", "lock", "unlock"]
    assert {"open", "lock"} <= set(lifted.supertypes)
    assert dict(lifted.objects) == {"lock": "lock", "open": "door", "crate": "box"}
    assert atoms(task, task.init) == {"(lock open)", "(has lock)"}
    assert applicable(task, task.init) == ["(open crate)", "(lock crate lock)", "(unlock open)"]
    state = run(task, "(unlock open)", "(open open)", "(open crate)")
    assert task.is_goal(state) and atoms(task, state) == {"(open open)", "(open crate)", "(has lock)"}


def test_an_object_repeating_a_constant_is_one_object(tmp_path: Path) -> None:
    text = (FIXTURES / "shared-names" / "problem.pddl").read_text()
    (tmp_path / "problem.pddl").write_text(text.replace("crate - box)", "crate - box lock - lock)"))
    task = ground(read_task(FIXTURES / "shared-names" / "domain.pddl", tmp_path / "problem.pddl"))
    assert sorted(name for name, _ in task.lifted.objects) == ["crate", "lock", "open"]
    assert applicable(task, task.init) == ["(open crate)", "(lock crate lock)", "(unlock open)"]


def test_either_as_an_action_parameter_type(tmp_path: Path) -> None:
    text = (FIXTURES / "shared-names" / "domain.pddl").read_text()
    (tmp_path / "domain.pddl").write_text(text.replace("(?x - open ?l - lock)", "(?x - (either door box) ?l - lock)"))
    task = ground(read_task(tmp_path / "domain.pddl", FIXTURES / "shared-names" / "problem.pddl"))
    assert applicable(task, task.init) == ["(open crate)", "(lock crate lock)", "(unlock open)"]


# ---- the same along random walks as pymimir ------------------------------------------------------


def _mimir_files(name: str, tmp_path: Path) -> tuple[Path, Path]:
    """The fixture's files for pymimir. pymimir reads a type as a predicate of the same name, so for
    shared-names the types are renamed (`open` -> `open-t`): the same task, whose predicates, actions and
    objects keep their names."""
    domain, problem = FIXTURES / name / "domain.pddl", FIXTURES / name / "problem.pddl"
    if name != "shared-names":
        return domain, problem
    text = domain.read_text().replace("(:types open lock - object", "(:types open-t lock-t - object")
    text = re.sub(r"- (open|lock)\b", r"- \1-t", text)
    (tmp_path / "domain.pddl").write_text(text)
    return tmp_path / "domain.pddl", problem


def _mimir_atoms(state, declared: set[str]) -> set[str]:
    out = set()
    for atom in state.get_atoms():
        name = atom.get_predicate().get_name().lower()
        if name in declared:
            out.add("(" + " ".join([name, *(o.get_name().lower() for o in atom.get_terms())]) + ")")
    return out


def _mimir_name(action) -> str:
    return "(" + " ".join(str(action).lower().strip("()").split()) + ")"


@pytest.mark.parametrize("name", NAMES)
def test_random_walks_agree_with_pymimir(name: str, tmp_path: Path) -> None:
    task = load(name)
    domain, problem = _mimir_files(name, tmp_path)
    mproblem = pymimir.Problem(pymimir.Domain(str(domain)), str(problem))
    declared = {n for n, _ in task.lifted.predicates}
    steps = 0
    for seed in range(6):
        rng = random.Random(seed)
        state, mstate = task.init, mproblem.get_initial_state()
        for _ in range(25):
            assert atoms(task, state) == _mimir_atoms(mstate, declared)
            ours = {task.actions[i].pddl: i for i in task.applicable(state)}
            theirs = {_mimir_name(a): a for a in mstate.generate_applicable_actions()}
            assert sorted(ours) == sorted(theirs)
            if not ours:
                break
            action = rng.choice(sorted(ours))
            state = task.apply(state, ours[action])
            mstate, cost = theirs[action].apply(mstate, return_cost=True)
            if task.costs:
                assert task.actions[ours[action]].cost == cost
            steps += 1
    assert steps >= 30  # the walks went somewhere


# ---- hostile input: one clear line, fast ---------------------------------------------------------


def write(tmp_path: Path, domain: str, problem: str) -> tuple[Path, Path]:
    (tmp_path / "domain.pddl").write_text(domain, encoding="utf-8")
    (tmp_path / "problem.pddl").write_text(problem, encoding="utf-8")
    return tmp_path / "domain.pddl", tmp_path / "problem.pddl"


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text, text
    return text


def test_forall_over_a_huge_type_in_a_precondition_is_stopped(tmp_path: Path) -> None:
    objects = " ".join(f"o{i}" for i in range(300))
    paths = write(tmp_path, """(define (domain q) (:requirements :typing :adl) (:types thing)
  (:predicates (p ?x - thing) (r ?x ?y ?z - thing) (done))
  (:action go :parameters () :precondition (forall (?x ?y ?z - thing) (or (p ?x) (r ?x ?y ?z)))
    :effect (done)))""", f"(define (problem q1) (:domain q) (:objects {objects} - thing) (:init (p o1)) (:goal (done)))")
    task = read_task(*paths)
    with pytest.raises(SizeLimitError) as caught:
        ground(task, max_explored=20_000)  # the default (2,000,000) stops it too, in about 25 s
    assert "MAX_EXPLORED" in one_line(caught.value) and "300 objects" in str(caught.value)


def test_forall_effect_over_a_large_type(tmp_path: Path) -> None:
    objects = " ".join(f"o{i}" for i in range(3000))
    init = " ".join(f"(p o{i})" for i in range(3000))
    paths = write(tmp_path, """(define (domain big) (:requirements :typing :adl) (:types thing)
  (:predicates (p ?x - thing) (done))
  (:action wipe :parameters () :precondition (and) :effect (and (done) (forall (?x - thing) (not (p ?x))))))""",
                  f"(define (problem b) (:domain big) (:objects {objects} - thing) (:init {init}) (:goal (done)))")
    task = ground(read_task(*paths))
    assert len(task.atoms) == 3001 and applicable(task, task.init) == ["(wipe)"]
    assert atoms(task, run(task, "(wipe)")) == {"(done)"}
    with pytest.raises(SizeLimitError) as caught:
        ground(read_task(*paths), max_atoms=1000)
    assert "max_atoms" in one_line(caught.value)


def test_deep_nesting_is_refused_with_file_and_line(tmp_path: Path) -> None:
    deep = "(p ?x)"
    for _ in range(40):
        deep = f"(and {deep})"
    paths = write(tmp_path, f"""(define (domain deep) (:requirements :typing) (:types thing)
  (:predicates (p ?x - thing) (done))
  (:action go :parameters (?x - thing) :precondition {deep} :effect (done)))""",
                  "(define (problem n) (:domain deep) (:objects a - thing) (:init (p a)) (:goal (done)))")
    with pytest.raises(PDDLError) as caught:
        read_task(*paths)
    assert one_line(caught.value).startswith(f"{paths[0]}:3: parentheses nested deeper than 32 levels")


def test_derived_predicates_recursing_through_negation_are_refused(tmp_path: Path) -> None:
    paths = write(tmp_path, """(define (domain neg) (:requirements :typing :derived-predicates) (:types thing)
  (:predicates (p ?x - thing) (q ?x - thing) (done))
  (:derived (p ?x - thing) (not (q ?x)))
  (:derived (q ?x - thing) (p ?x))
  (:action go :parameters (?x - thing) :precondition (p ?x) :effect (done)))""",
                  "(define (problem n) (:domain neg) (:objects a - thing) (:init) (:goal (done)))")
    with pytest.raises(PDDLError) as caught:
        ground(read_task(*paths))
    assert "recurse through negation" in one_line(caught.value)


def test_positive_recursion_through_derived_predicates_loads(tmp_path: Path) -> None:
    paths = write(tmp_path, """(define (domain reach) (:requirements :typing :derived-predicates) (:types node)
  (:predicates (edge ?x ?y - node) (reach ?x ?y - node) (at ?x - node))
  (:derived (reach ?x ?y - node) (or (edge ?x ?y) (exists (?z - node) (and (reach ?x ?z) (reach ?z ?y)))))
  (:action go :parameters (?x ?y - node) :precondition (and (at ?x) (reach ?x ?y))
    :effect (and (not (at ?x)) (at ?y))))""",
                  """(define (problem r) (:domain reach) (:objects n1 n2 n3 n4 - node)
  (:init (at n1) (edge n1 n2) (edge n2 n3) (edge n3 n1)) (:goal (at n3)))""")
    task = ground(read_task(*paths))
    assert applicable(task, task.init) == ["(go n1 n1)", "(go n1 n2)", "(go n1 n3)"]  # n4 unreachable
    assert task.is_goal(run(task, "(go n1 n3)"))


def test_unicode_names(tmp_path: Path) -> None:
    paths = write(tmp_path, """(define (domain unicodé) (:requirements :typing) (:types thing)
  (:predicates (prêt ?x - thing) (fait))
  (:action aller :parameters (?x - thing) :precondition (prêt ?x) :effect (fait)))""",
                  "(define (problem n) (:domain unicodé) (:objects café ключ 東京 - thing) (:init (prêt ключ)) "
                  "(:goal (fait)))")
    task = ground(read_task(*paths))
    assert applicable(task, task.init) == ["(aller ключ)"]
    assert task.is_goal(run(task, "(aller ключ)"))


# ---- scripts/ipc_check.py's replay and walks, on the fixtures ------------------------------------


def _ipc_check():
    import importlib.util

    path = Path(__file__).parents[2] / "scripts" / "ipc_check.py"
    spec = importlib.util.spec_from_file_location("ipc_check", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ipc_check_replays_a_plan_and_walks_with_pymimir() -> None:
    check = _ipc_check()
    task = load("roads")
    assert check.replay(task, ["(drive a b)", "(drive b c)"]) == (True, "", 5)
    ok, why, _ = check.replay(task, ["(drive b c)"])
    assert not ok and why == "step 1 (drive b c): not applicable"
    ok, why, _ = check.replay(task, ["(drive a c)"])
    assert not ok and why.startswith("goal not reached after 1 steps")
    record = check.walks(task, FIXTURES / "roads" / "domain.pddl", FIXTURES / "roads" / "problem.pddl", 2, 10, 0)
    assert record == {"mimir_loaded": True, "agree": True, "steps": 20}
