"""The compact layout of a world's text: objects by kind, fixed facts once, list sentences, what changed."""

from __future__ import annotations

import pytest

from pddlworlds.worlds.pddl import PDDLError, read_task
from pddlworlds.worlds.text import ListForm, load_templates
from pddlworlds.worlds.world import World

DOMAIN = """(define (domain roads) (:requirements :strips :typing)
  (:types place vehicle - object truck - vehicle)
  (:predicates (road ?a - place ?b - place) (at ?v - vehicle ?p - place) (visited ?p - place) (depot ?p - place))
  (:action drive :parameters (?t - truck ?from - place ?to - place)
    :precondition (and (at ?t ?from) (road ?from ?to))
    :effect (and (not (at ?t ?from)) (at ?t ?to) (visited ?to))))
"""
PROBLEM = """(define (problem p) (:domain roads)
  (:objects a b c - place t1 t2 - truck)
  (:init (road a b) (road b a) (road b c) (depot a) (at t1 a) (at t2 a))
  (:goal (and (visited c))))
"""
TEXT = """layout = "compact"
[types]
place = ["place", "places"]
truck = ["truck", "trucks"]
[predicates]
road = ["a road runs from {a} to {b}", "no road runs from {a} to {b}"]
at = ["{v} is at {p}", "{v} is not at {p}"]
visited = ["{p} has been visited", "{p} has not been visited"]
depot = ["{p} is a depot", "{p} is not a depot"]
[lists]
road = { text = "Roads: {items}", item = "{a} to {b}", symmetric = true }
at = { by = "p", text = "At {p}: {items}" }
[actions]
drive = ["drive {t} from {from} to {to}"]
"""


@pytest.fixture
def world(tmp_path):
    (tmp_path / "domain.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(PROBLEM)
    (tmp_path / "text.toml").write_text(TEXT)
    return World.load(tmp_path / "domain.pddl", tmp_path / "p.pddl")


def test_first_observation_has_kinds_fixed_facts_and_state(world):
    first = world.observe(world.initial_state, world.after_action)
    assert first == (
        "Objects: places a, b and c; trucks t1 and t2.\n"
        "Fixed facts: Roads: a to b and b to c. a is a depot.\n"
        "Current state: At a: t1 and t2."
    )
    assert world.after_action == "changes"


def test_after_an_action_only_what_changed_and_look_around_repeats_all(world):
    outcome = world.step(world.initial_state, "drive t1 from a to b", world.after_action)
    assert outcome.observation == "t1 is at b. b has been visited. t1 is not at a."
    look = world.step(outcome.state, "look around", world.after_action)
    assert look.observation.startswith("Objects: places a, b and c")
    assert look.observation.endswith("Current state: At a: t2. At b: t1. b has been visited.")
    # "full" after an action is the current state only: the fixed facts were said at the start
    full = world.step(world.initial_state, "drive t1 from a to b", "full")
    assert full.observation == "Current state: At a: t2. At b: t1. b has been visited."


def test_list_form_groups_and_symmetry():
    form = ListForm("{p} holds {items}", "{p} hold {items}", "{x}", ("p",))
    assert form.sentences(("x", "p"), [("1", "a"), ("2", "a"), ("3", "b")]) == ["a hold 1 and 2", "b holds 3"]
    roads = ListForm("Roads: {items}", "Roads: {items}", "{a}-{b}", (), symmetric=True)
    assert roads.sentences(("a", "b"), [("a", "b"), ("b", "a"), ("b", "c")]) == ["Roads: a-b and b-c"]


@pytest.mark.parametrize("text, message", [
    ('[types]\nplace = ["place", "places"]', "compact layout only"),
    ('layout = "compact"\n[types]\nplanet = "planet"', "neither a type nor a one-place predicate"),
    ('layout = "compact"\n[lists]\nroad = { text = "Roads: {items}", item = "{a}" }', "must use each of"),
    ('layout = "compact"\n[lists]\nat = { by = "q", text = "At {q}: {items}" }', "by must name parameters"),
    ('layout = "compact"\n[lists]\nat = { by = "p", text = "At: {items}" }', "must use {items} and each of"),
    ('layout = "compact"\n[lists]\nat = { by = "p", text = "At {p}: {items}", symmetric = true }', "symmetric"),
    ('layout = "tidy"', "layout must be one of"),
    ('colour = "blue"', "unknown key"),
])
def test_bad_text_files_are_refused_naming_what(tmp_path, text, message):
    (tmp_path / "domain.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(PROBLEM)
    (tmp_path / "text.toml").write_text(text)
    task = read_task(tmp_path / "domain.pddl", tmp_path / "p.pddl")
    with pytest.raises(PDDLError, match=message.replace("{", r"\{").replace("}", r"\}")) as err:
        load_templates(task, tmp_path / "text.toml")
    assert "text.toml" in str(err.value)


def test_a_kind_that_changes_is_refused(tmp_path):
    (tmp_path / "domain.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(PROBLEM)
    (tmp_path / "text.toml").write_text('layout = "compact"\n[types]\nvisited = ["visited place", "visited places"]')
    world = World.load(tmp_path / "domain.pddl", tmp_path / "p.pddl")
    with pytest.raises(PDDLError, match="an action changes it"):
        world.observe(world.initial_state, "changes")


COSTED = """(define (domain tolls) (:requirements :strips :typing :action-costs)
  (:types place)
  (:predicates (road ?a - place ?b - place) (here ?p - place))
  (:functions (toll ?a - place ?b - place) - number (total-cost) - number)
  (:action go :parameters (?a - place ?b - place)
    :precondition (and (here ?a) (road ?a ?b))
    :effect (and (not (here ?a)) (here ?b) (increase (total-cost) (toll ?a ?b)))))
"""
COSTED_PROBLEM = """(define (problem p) (:domain tolls) (:objects a b c - place)
  (:init (road a b) (road b a) (road b c) (here a) (= (toll a b) 2) (= (toll b a) 2) (= (toll b c) 5)
         (= (total-cost) 0))
  (:goal (here c)) (:metric minimize (total-cost)))
"""


def test_function_values_are_fixed_facts(tmp_path):
    """What actions cost is said once with the fixed facts: in `[functions]`'s words, else plainly."""
    (tmp_path / "domain.pddl").write_text(COSTED)
    (tmp_path / "p.pddl").write_text(COSTED_PROBLEM)
    (tmp_path / "text.toml").write_text('layout = "compact"\n')
    plain = World.load(tmp_path / "domain.pddl", tmp_path / "p.pddl")
    assert "Values of toll: a and b is 2; b and a is 2; b and c is 5." in plain.describe(plain.initial_state)
    (tmp_path / "text.toml").write_text('layout = "compact"\n[functions]\n'
                                        'toll = { text = "Tolls: {items}", item = "{a} to {b} {value}", symmetric = true }\n')
    worded = World.load(tmp_path / "domain.pddl", tmp_path / "p.pddl")
    first = worded.describe(worded.initial_state)
    assert "Tolls: a to b 2 and b to c 5." in first and "total-cost" not in first
    after = worded.step(worded.initial_state, "go a b", worded.after_action).observation
    assert "Tolls" not in after
    (tmp_path / "text.toml").write_text('layout = "compact"\n[functions]\nfare = "Fares: {items}"\n')
    with pytest.raises(PDDLError, match="unknown function 'fare'; functions: toll"):
        World.load(tmp_path / "domain.pddl", tmp_path / "p.pddl")
