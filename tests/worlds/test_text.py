"""Text in and out: templates, the tolerant action parser, and the messages for invalid actions."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pddlworlds.worlds.action_parser import ActionParser, ParsedAction, ParseError
from pddlworlds.worlds.pddl import PDDLError, read_task
from pddlworlds.worlds.text import CHARSET, generic_sentences, load_templates, starter_text, tokens

ALLOWED = set(CHARSET)
MAX_ACTIONS = 400
BLOCKS_VERBS = (
    "Actions are: pickup <ob>, putdown <ob>, stack <ob> on <underob>, unstack <ob> from <underob>, "
    "check valid actions, look around."
)


def test_charset_covers_what_the_renderers_need() -> None:
    for needed in " ()-\n.,:'_":
        assert needed in CHARSET
    assert len(set(CHARSET)) == len(CHARSET)


def test_every_phrasing_of_every_ground_action_parses_back(domain_problem, world_of) -> None:
    """The canonical phrasing and every alternative in text.toml, for every ground action (a seeded sample
    of MAX_ACTIONS on the largest Barman problems, to keep the suite fast)."""
    world = world_of(*domain_problem)
    templates, parser = world.templates, world.parser
    params = {s.name: s.parameters for s in world.lifted.schemas}
    actions = list(world.task.actions)
    if len(actions) > MAX_ACTIONS:
        actions = random.Random("/".join(domain_problem)).sample(actions, MAX_ACTIONS)
    for action in actions:
        expected = ParsedAction(action.schema, action.args)
        values = dict(zip(params[action.schema], action.args))
        for phrase in templates.actions[action.schema]:
            text = phrase.template.format(**values)
            assert parser.parse(text) == expected, text
        assert parser.parse(action.pddl) == expected  # the bare PDDL form
        assert set(templates.action_text(action.schema, action.args)) <= ALLOWED
    for atom in world.task.atoms:
        for true in (True, False):
            assert set(templates.sentence(atom, true)) <= ALLOWED


# ---- tolerance ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "stack b1 on b2",
        "Stack b1 on b2",
        "STACK B1 ON B2",
        "stack b1 on b2.",
        "stack b1 on b2...",
        "  stack   b1 on b2 !",
        "Please stack b1 on b2 now.",
        "I will stack b1 on the b2",
        "(stack b1 b2)",
        "stack b1 b2",
        "(STACK b1 b2).",
        "put b1 on b2",
        "Action: stack b1 on b2",
    ],
)
def test_tolerant_parsing(world_of, text: str) -> None:
    parser = world_of("blocksworld", "problem1").parser
    assert parser.parse(text) == ParsedAction("stack", ("b1", "b2"))


@pytest.mark.parametrize(
    ("domain", "problem", "text", "schema", "args"),
    [
        ("blocksworld", "problem1", "pick up b1", "pickup", ("b1",)),
        ("blocksworld", "problem1", "Put b2 down.", "putdown", ("b2",)),
        ("blocksworld", "problem1", "take b2 off b3", "unstack", ("b2", "b3")),
        ("tyreworld", "p01", "Open boot.", "open", ("boot",)),
        ("tyreworld", "p01", "get jack from boot", "fetch", ("jack", "boot")),
        ("tyreworld", "p01", "jack up the-hub1", "jack-up", ("the-hub1",)),  # jack is also an object
        ("tyreworld", "p01", "lower the-hub1", "jack-down", ("the-hub1",)),
        ("tyreworld", "p01", "put w1 away in boot", "put-away", ("w1", "boot")),
        ("tyreworld", "p01", "mount r1 on the-hub1", "put-on-wheel", ("r1", "the-hub1")),
        ("tyreworld", "p01", "(put-on-wheel r1 the-hub1)", "put-on-wheel", ("r1", "the-hub1")),
        ("gripper", "prob01", "go from rooma to roomb", "move", ("rooma", "roomb")),
        ("gripper", "prob01", "pick ball1 at rooma with left", "pick", ("ball1", "rooma", "left")),
        ("barman", "p01", "grasp shot1 with left", "grasp", ("left", "shot1")),
        ("barman", "p01", "left grasp shot1", "grasp", ("left", "shot1")),
    ],
)
def test_alternative_phrasings(world_of, domain, problem, text, schema, args) -> None:
    assert world_of(domain, problem).parser.parse(text) == ParsedAction(schema, args)


@pytest.mark.parametrize(
    ("text", "meta"),
    [
        ("check valid actions", "check valid actions"),
        ("Check valid actions.", "check valid actions"),
        ("valid actions?", "check valid actions"),
        ("look around", "look around"),
        ("LOOK AROUND!", "look around"),
    ],
)
def test_meta_actions(world_of, text: str, meta: str) -> None:
    assert world_of("blocksworld", "problem1").parser.parse(text) == ParsedAction(meta=meta)


def test_tokens() -> None:
    assert tokens("(Stack B1, b2).") == ["stack", "b1", "b2"]
    assert tokens("the-hub1 -- x-") == ["the-hub1", "x"]
    assert tokens("é€\x00\t") == []


# ---- why a text is not an action -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "message"),
    [
        ("fly b1", "unknown_verb", "Unknown action 'fly b1'. " + BLOCKS_VERBS),
        ("", "empty", "The action is empty. " + BLOCKS_VERBS),
        ("?!", "empty", "The action is empty. " + BLOCKS_VERBS),
        ("pickup b9", "unknown_object", "Unknown object 'b9' in 'pickup b9'. Objects are: b1, b2, b3."),
        (
            "stack b1 on the table",
            "unknown_object",
            "Unknown object 'table' in 'stack b1 on the table'. Objects are: b1, b2, b3.",
        ),
        (
            "stack b1",
            "wrong_arity",
            "The action 'stack' takes 2 objects (stack <ob> on <underob>), but 1 was given in 'stack b1'.",
        ),
        (
            "pick up b1 b2",
            "wrong_arity",
            "The action 'pickup' takes 1 object (pickup <ob>), but 2 were given in 'pick up b1 b2'.",
        ),
        (
            "(unstack b1 b2 b3)",
            "wrong_arity",
            (
                "The action 'unstack' takes 2 objects (unstack <ob> from <underob>), but 3 were given in "
                "'unstack b1 b2 b3'."
            ),
        ),
    ],
)
def test_parse_errors(world_of, text: str, kind: str, message: str) -> None:
    result = world_of("blocksworld", "problem1").parser.parse(text)
    assert result == ParseError(kind, message)


def test_long_text_is_shortened_in_messages(world_of) -> None:
    parser = world_of("blocksworld", "problem1").parser
    result = parser.parse("fly " * 500)
    assert isinstance(result, ParseError) and result.kind == "unknown_verb"
    assert "..." in result.message and len(result.message) < 500


def test_failed_precondition_message(world_of) -> None:
    world = world_of("blocksworld", "problem1")
    task = world.task
    # b1 in the hand, b3 on b2: b2 is not clear
    state = task.state_of(
        [("holding", ("b1",)), ("on-table", ("b2",)), ("on", ("b3", "b2")), ("clear", ("b3",))]
    )
    outcome = world.step(state, "stack b1 on b2", "full")
    assert outcome.observation == "Cannot stack b1 on b2: b2 is not clear."
    assert (outcome.valid, outcome.kind, outcome.error, outcome.state) == (
        False,
        "invalid",
        "precondition",
        state,
    )
    assert outcome.action == "stack b1 on b2"
    # several failures are joined with commas and "and"
    outcome = world.step(world.initial_state, "stack b2 on b1", "full")
    assert (
        outcome.observation == "Cannot stack b2 on b1: the robot arm is not holding b2 and b1 is not clear."
    )
    state = task.state_of([("holding", ("b3",)), ("on-table", ("b1",)), ("on", ("b2", "b1"))])
    outcome = world.step(state, "unstack b1 from b2", "full")
    assert outcome.observation == (
        "Cannot unstack b1 from b2: b1 is not on b2, b1 is not clear and the robot arm is not empty."
    )


def test_type_mismatch_message(world_of) -> None:
    world = world_of("tyreworld", "p01")
    outcome = world.step(world.initial_state, "open w1", "changes")
    assert outcome.observation == "Cannot open w1: w1 is a wheel, not a container."
    assert (outcome.valid, outcome.error, outcome.state) == (False, "type", world.initial_state)
    outcome = world.step(world.initial_state, "fetch boot from w1", "changes")
    assert outcome.observation == (
        "Cannot fetch boot from w1: boot is a container, not an obj and w1 is a wheel, not a container."
    )


def test_static_precondition_message_in_an_untyped_domain(world_of) -> None:
    world = world_of("gripper", "prob01")  # types are static predicates here
    outcome = world.step(world.initial_state, "move from ball1 to roomb", "full")
    assert (
        outcome.observation
        == "Cannot move from ball1 to roomb: ball1 is not a room and Robby is not at ball1."
    )
    assert (outcome.valid, outcome.error) == (False, "precondition")


# ---- templates -----------------------------------------------------------------------------------

DOMAIN = """\
(define (domain toy)
  (:requirements :strips)
  (:predicates (p ?x) (q ?x))
  (:action go :parameters (?x) :precondition (p ?x) :effect (and (q ?x) (not (p ?x)))))
"""
PROBLEM = "(define (problem t) (:domain toy) (:objects a) (:init (p a)) (:goal (q a)))"


@pytest.fixture
def toy_task(tmp_path: Path):
    (tmp_path / "d.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(PROBLEM)
    return read_task(tmp_path / "d.pddl", tmp_path / "p.pddl")


def test_text_written_from_names_without_templates(toy_task) -> None:
    templates = load_templates(toy_task, None)
    assert templates.sentence(("p", ("a",))) == "a is p"
    assert templates.sentence(("p", ("a",)), true=False) == "a is not p"
    assert templates.action_text("go", ("a",)) == "go a"
    assert ActionParser(toy_task, templates).parse("Go a.") == ParsedAction("go", ("a",))


@pytest.mark.parametrize(
    ("name", "params", "true", "false"),
    [
        ("on", ("x", "y"), "{x} is on {y}", "{x} is not on {y}"),
        ("on-table", ("x",), "{x} is on table", "{x} is not on table"),
        ("has-key", ("a", "k"), "{a} has key {k}", "{a} does not have key {k}"),
        ("can_reach", ("a", "b"), "{a} can reach {b}", "{a} cannot reach {b}"),
        ("at", ("r",), "at {r} is true", "at {r} is false"),
        ("handempty", (), "handempty is true", "handempty is false"),
        ("road", ("a", "b", "c"), "road holds for {a}, {b} and {c}", "road does not hold for {a}, {b} and {c}"),
    ],
)
def test_generic_sentences_read_the_predicate_name(name, params, true, false) -> None:
    assert generic_sentences(name, params) == (true, false)


def test_a_starter_text_file_reads_back_and_names_everything(tmp_path: Path, toy_task) -> None:
    path = tmp_path / "text.toml"
    path.write_text(starter_text(toy_task))
    templates = load_templates(toy_task, path)
    assert templates.sentence(("p", ("a",))) == load_templates(toy_task, None).sentence(("p", ("a",)))
    assert set(templates.actions) == {s.name for s in toy_task.schemas}


@pytest.mark.parametrize(
    ("toml", "match"),
    [
        ("[predicates]\nr = ['x', 'y']\n", "unknown predicate 'r'"),
        ("[actions]\nfly = ['fly {x}']\n", "unknown action 'fly'"),
        ("[actions]\ngo = ['go there']\n", "must use each of"),
        ("[actions]\ngo = ['go {x}, now']\n", "may not contain ','"),
        ("[predicates]\np = ['{x} is p']\n", "expected \\[true sentence, false sentence\\]"),
        ("[predicates]\np = ['{x} is p', 'p is false']\n", "must use each of"),
        ("[predicates]\np = ['{x} is p\u00e9', '{x} is not p']\n", "outside the charset"),
        ("after_action = 'sometimes'\n", "after_action"),
        ("this is not toml", "invalid TOML"),
    ],
)
def test_bad_text_files(tmp_path: Path, toy_task, toml: str, match: str) -> None:
    path = tmp_path / "text.toml"
    path.write_text(toml)
    with pytest.raises(PDDLError, match=match):
        load_templates(toy_task, path)
