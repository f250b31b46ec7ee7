"""The AgentBoard profile on a domain AgentBoard never wrote text for (ADL, objects named like the words it
reads actions by): the goal names every top-level condition, no translator helper atom is ever shown, and
every listed action typed back is that action."""

from __future__ import annotations

import random
from pathlib import Path

import pddlworlds

DOMAIN = """(define (domain rooms) (:requirements :adl :derived-predicates)
  (:predicates (robot-at ?p) (link ?a ?b) (visited ?p) (blocked ?p) (place ?p) (seen ?p))
  (:derived (seen ?p) (and (visited ?p) (not (blocked ?p))))
  (:action move :parameters (?a ?b)
    :precondition (and (robot-at ?a) (link ?a ?b) (not (exists (?x) (and (blocked ?x) (= ?x ?b)))))
    :effect (and (not (robot-at ?a)) (robot-at ?b) (visited ?b)))
  (:action clear :parameters (?p) :precondition (and (blocked ?p) (forall (?q) (imply (robot-at ?q) (link ?q ?p))))
    :effect (not (blocked ?p))))"""
#: Places named like the action (`move`) and like AgentBoard's meta-action word (`check`).
PROBLEM = """(define (problem r1) (:domain rooms) (:objects move check hall)
  (:init (robot-at hall) (visited hall) (place move) (place check) (place hall)
         (link hall move) (link move hall) (link move check) (link check move) (blocked check))
  (:goal (and (visited move) (forall (?p) (imply (place ?p) (seen ?p))))))"""


def test_agentboard_on_an_adl_domain_says_every_condition_and_takes_back_every_listed_action(tmp_path: Path) -> None:
    (tmp_path / "domain.pddl").write_text(DOMAIN)
    (tmp_path / "problem.pddl").write_text(PROBLEM)
    env = pddlworlds.make_env(tmp_path / "domain.pddl", tmp_path / "problem.pddl", profile="agentboard")
    observation, info = env.reset()
    assert info["goal"] == ("The goal is to satisfy the following conditions: for every object ?p: (not place ?p or "
                            "seen ?p), visited move")
    world = env.unwrapped.world
    texts = [observation]
    rng = random.Random(0)
    for _ in range(40):
        state = env.unwrapped.state
        listed = world.valid_actions(state)
        for text in listed:  # each, typed back exactly as listed, is that action
            outcome = world.step(state, text, "full")
            assert outcome.valid and outcome.action == text, (text, outcome.observation)
            texts.append(outcome.observation)
        if not listed:
            break
        observation, *_ = env.step(rng.choice(listed))
        texts.append(observation)
    assert all("@" not in text for text in texts)  # no new-axiom@N, no goal@N
    assert any("Seen hall" in text for text in texts)  # derived atoms are the domain's: shown
