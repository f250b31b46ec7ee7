"""Renamings of objects no plan can tell from the task (`worlds.symmetry`), and the search for a plan that
starts with a given segment (`worlds.search.first_segment_search`)."""

from __future__ import annotations

from pathlib import Path

from pddlworlds.worlds.catalogue import get_domain
from pddlworlds.worlds.search import breadth_first_search, first_segment_search
from pddlworlds.worlds.symmetry import NodeCount, find_renaming, object_maps
from pddlworlds.worlds.world import World

GRIPPER = """(define (problem two) (:domain gripper-strips)
 (:objects rooma roomb ball1 ball2 ball3 left right)
 (:init (room rooma) (room roomb) (ball ball1) (ball ball2) (ball ball3) (gripper left) (gripper right)
  (at-robby roomb) (carry ball1 left) (carry ball2 right) (at ball3 rooma))
 (:goal (and (at ball1 roomb) (at ball2 roomb) (at ball3 roomb))))
"""

ROADS = """(define (domain roads) (:requirements :typing :action-costs)
 (:types city)
 (:predicates (at ?c - city) (seen ?c - city) (road ?a ?b - city))
 (:functions (total-cost) - number (length ?a ?b - city) - number)
 (:action drive :parameters (?a ?b - city)
  :precondition (and (at ?a) (road ?a ?b))
  :effect (and (not (at ?a)) (at ?b) (seen ?b) (increase (total-cost) (length ?a ?b)))))
"""


def roads(tmp_path: Path, far: int) -> World:
    """Home with a road to each of two cities, both to be seen; the second road `far` long."""
    problem = f"""(define (problem trip) (:domain roads)
 (:objects home c1 c2 - city)
 (:init (at home) (road home c1) (road home c2) (road c1 home) (road c2 home)
  (= (length home c1) 1) (= (length c1 home) 1) (= (length home c2) {far}) (= (length c2 home) {far})
  (= (total-cost) 0))
 (:goal (and (seen c1) (seen c2))) (:metric minimize (total-cost)))
"""
    (tmp_path / "domain.pddl").write_text(ROADS)
    (tmp_path / "problem.pddl").write_text(problem)
    return World.load(tmp_path / "domain.pddl", tmp_path / "problem.pddl")


def gripper(tmp_path: Path) -> World:
    (tmp_path / "problem.pddl").write_text(GRIPPER)
    return World.load(get_domain("gripper", None).domain_file, tmp_path / "problem.pddl")


def test_two_balls_in_two_hands_swap_with_the_hands(tmp_path: Path) -> None:
    """Dropping ball2 first is as optimal as dropping ball1 first: the renaming swaps balls and hands."""
    world = gripper(tmp_path)
    found = find_renaming(world.task, world.initial_state, [("at", ("ball2", "roomb"))], [("at", ("ball1", "roomb"))])
    assert found is not None
    assert found.mapping["ball2"] == "ball1" and found.mapping["ball1"] == "ball2"
    assert found.mapping["left"] == "right" and found.mapping["right"] == "left"
    assert found.mapping["ball3"] == "ball3" and found.mapping["rooma"] == "rooma"
    assert found.atom(("carry", ("ball1", "left"))) == ("carry", ("ball2", "right"))


def test_a_ball_elsewhere_is_not_interchangeable(tmp_path: Path) -> None:
    """ball3 is in the other room: no renaming of the state maps it onto a carried ball."""
    world = gripper(tmp_path)
    assert find_renaming(world.task, world.initial_state, [("at", ("ball3", "roomb"))], [("at", ("ball1", "roomb"))]) is None


def test_the_identity_needs_no_search(tmp_path: Path) -> None:
    world = gripper(tmp_path)
    found = find_renaming(world.task, world.initial_state, [("at", ("ball1", "roomb"))],
                          [("at", ("ball1", "roomb")), ("at", ("ball2", "roomb"))])
    assert found is not None and all(k == v for k, v in found.mapping.items())
    assert found.nodes == len(found.mapping)


def test_action_costs_tell_cities_apart(tmp_path: Path) -> None:
    """Two cities alike in every fact are interchangeable only when their roads cost the same: the costs are
    no atom, so the ground actions' check is what refuses the renaming."""
    wanted, planned = [("seen", ("c2",))], [("seen", ("c1",))]
    same = roads(tmp_path, far=1)
    found = find_renaming(same.task, same.initial_state, wanted, planned)
    assert found is not None and found.mapping == {"home": "home", "c1": "c2", "c2": "c1"}
    far = roads(tmp_path, far=5)
    assert find_renaming(far.task, far.initial_state, wanted, planned) is None


def test_a_goal_atom_the_state_breaks_refuses(tmp_path: Path) -> None:
    """Once c1 is seen, c2 is no longer c1's twin."""
    world = roads(tmp_path, far=1)
    to_c1 = world.action_of("drive", ("home", "c1"))
    assert to_c1 is not None
    state = world.task.apply(world.initial_state, to_c1)
    assert find_renaming(world.task, state, [("seen", ("c2",))], [("seen", ("c1",))]) is None


def test_the_search_gives_up_at_its_limit(tmp_path: Path) -> None:
    world = gripper(tmp_path)
    args = (world.task, world.initial_state, [("at", ("ball2", "roomb"))], [("at", ("ball1", "roomb"))])
    assert find_renaming(*args, max_nodes=1) is None
    assert find_renaming(*args) is not None


def test_object_maps_checks_each_atom_once_its_objects_are_mapped() -> None:
    """Both maps of {a, b} onto {x, y} that keep `link` inside the target set, none when an atom without
    objects is missing from its set; an atom naming an object outside the order is not checked."""
    images = {"a": ["x", "y"], "b": ["x", "y"]}
    links = {("link", ("x", "y")), ("link", ("y", "x"))}
    found = [dict(m) for m in object_maps(["a", "b"], images, [(("link", ("a", "b")), links)])]
    assert found == [{"a": "x", "b": "y"}, {"a": "y", "b": "x"}]
    one_way = {("link", ("x", "y"))}
    assert [dict(m) for m in object_maps(["a", "b"], images, [(("link", ("a", "b")), one_way)])] == [{"a": "x", "b": "y"}]
    assert list(object_maps(["a", "b"], images, [(("alarm", ()), one_way)])) == []
    assert len(list(object_maps(["a", "b"], images, [(("link", ("a", "c")), set())]))) == 2
    count = NodeCount()
    assert [dict(m) for m in object_maps(["a", "b"], images, [], max_nodes=2, count=count)] == [{"a": "x", "b": "y"}]
    assert count.nodes == 3


def test_a_first_segment_search_finds_the_shortest_plan_that_starts_with_a_given_condition(tmp_path: Path) -> None:
    """Both hands full in room b: a plan that drops ball2 first is as short as the shortest (two drops, then
    ball3's trip of four: 6 steps); one that brings ball3 first must put a ball down in room a on the way (a
    drop in room b would make another goal condition true first), so it is longer; a step makes at most one
    ball's condition true, and an atom that is no open goal condition starts no plan."""
    world = gripper(tmp_path)
    task = world.task
    shortest = breadth_first_search(task, 10_000)
    assert shortest.status == "solvable"

    def first(*atoms: tuple[str, tuple[str, ...]]) -> int:
        return sum(1 << task.atom_index[atom] for atom in atoms)

    ball2 = first_segment_search(task, first(("at", ("ball2", "roomb"))), 10_000)
    assert ball2.status == "solvable" and ball2.plan_length == shortest.plan_length
    made = task.apply(task.init, ball2.plan[0]) & task.goal_pos & ~task.init
    assert made == first(("at", ("ball2", "roomb")))
    ball3 = first_segment_search(task, first(("at", ("ball3", "roomb"))), 10_000)
    assert ball3.status == "solvable" and ball3.plan_length > shortest.plan_length
    both = first_segment_search(task, first(("at", ("ball1", "roomb")), ("at", ("ball2", "roomb"))), 10_000)
    assert both.status == "unsolvable"  # one drop a step: no step makes both true
    assert first_segment_search(task, first(("free", ("left",))), 10_000).status == "unsolvable"
    assert first_segment_search(task, 0, 10_000).status == "unsolvable"
    assert first_segment_search(task, first(("at", ("ball3", "roomb"))), 5).status == "capped"
