"""profile="agentboard": replays checked against a reference written here from AgentBoard's rules.

The reference below is independent of `pddlworlds.worlds.agentboard.text` / `agentboard_world`: it keeps
AgentBoard's wording table as AgentBoard's code has it (a Python dict with repeated keys, positional
`{}` templates; data from hkust-nlp/AgentBoard, agentboard/environment/pddl_env/pddl_env.py, Apache-2.0)
and re-states its rules in a few lines. Only the state transition is shared (the grounded task, which
test_world checks against unified-planning). Listings are compared in sorted order: AgentBoard's own
order follows Python's string hashing.
"""

from __future__ import annotations

import re
import typing
import warnings

import gymnasium as gym
import pytest

import pddlworlds  # noqa: F401  (registers the ids)
from pddlworlds.artefacts.plans import plan_file
from pddlworlds.env import StepInfo
from pddlworlds.registration import env_id, make_env
from pddlworlds.worlds.catalogue import get_domain
from pddlworlds.worlds.pddl import PDDLError, PDDLNormalisationWarning

# AgentBoard's table in its order, repeated keys and all: as in their dict literal, the last entry of a key wins.
AB_MAP = dict(  # noqa: C406  (pairs, so that repeated keys resolve as in their dict literal)
    [
        ("on", "{} is on {}."),
        ("clear", "{} is clear."),
        ("arm-empty", "Your arm is empty."),
        ("holding", "You are holding {}."),
        ("on-table", "{} is on the table."),
        ("putdown", "Putdown {}."),
        ("stack", "Stack {} on {}."),
        ("pickup", "Pickup {}."),
        ("unstack", "Unstack {} from {}."),
        ("vehicle-at", "The vehicle is at {}."),
        ("changetire", "Change tire at {}"),
        ("spare-in", "The spare tire is in {}."),
        ("road", "There is a road from {} to {}."),
        ("movecar", "Move the car to {}."),
        ("isopen", "{} is open."),
        ("closed", "{} is closed."),
        ("have", "You have {}."),
        ("in", "{} is in {}."),
        ("loose", "The nut {} on the hub {} is loose."),
        ("tight", "The nut {} on the hub {} is tight."),
        ("unlocked", "{} is unlocked."),
        ("on-ground", "Hub {} is on the ground."),
        ("not-on-ground", "Hub {} is not on the ground."),
        ("inflated", "Wheel {} is inflated."),
        ("not-inflated", "Wheel {} is not inflated."),
        ("fastened", "Hub {} is fastened."),
        ("unfastened", "Hub {} is unfastened."),
        ("free", "Hub {} is free."),
        ("on", "{} is on {}."),
        ("intact", "Wheel {} is intact."),
        ("open", "Open {}."),
        ("close", "Close {}."),
        ("fetch", "Fetch {} from {}."),
        ("put-away", "Put-away {} in {}."),
        ("loosen", "Loosen the nut {} on the hub {}."),
        ("tighten", "Tighten the nut {} on the hub {}."),
        ("jack-up", "jack-up the hub {}."),
        ("jack-down", "Jack-down the hub {}."),
        ("undo", "Undo the fastening of the nut {} on the hub {}."),
        ("do-up", "Do-up the nut {} on the hub {}."),
        ("remove-wheel", "Remove-wheel {} from the hub {}."),
        ("put-on-wheel", "put-on-wheel {} on the hub {}."),
        ("inflate", "Inflate the wheel {}."),
        ("clear", "The {} is clear."),
        ("move", "Move {} to {}."),
        ("smaller", "{} is smaller than {}."),
        ("ball", "{} is a ball. "),
        ("gripper", "{} is a gripper. "),
        ("at-robby", "Robby is at {}. "),
        ("at", "{} is at {}. "),
        ("free", "{} is free. "),
        ("carry", "{} is carrying {}. "),
        ("move", "Move from {} to {}. "),
        ("pick", "Pick up {} at {} with arm {}. "),
        ("ontable", "{} is on the table. "),
        ("holding", "You are holding {}. "),
        ("empty", "{} is empty. "),
        ("contains", "{} contains {}. "),
        ("clean", "{} is clean. "),
        ("used", "Pour {} from a shot glass to a used shaker {}"),
        ("dispenses", "{} dispenses {}. "),
        ("shaker-empty-level", "{} is at empty level {}. "),
        ("shaker-level", "{} is at level {}. "),
        ("next", "level {} is next to level {}. "),
        ("unshaked", "{} is unshaked. "),
        ("shaked", "{} is shaked. "),
        ("cocktail-part1", "{} part1 ingredient is {}. "),
        ("cocktail-part2", "{} part2 ingredient is {}. "),
        ("grasp", "{} grasp {}. "),
        ("leave", "{} leave {}. "),
        ("fill-shot", "fill-shot glass {} with {} with {} and {} holding {}. "),
        ("refill-shot", "refill-shot {} with {} with {} and {} holding {}. "),
        ("empty-shot", "use hand {} to empty-shot glass {} with beverage {}. "),
        ("clean-shot", "clean-shot glass {} with {} with hand {} holding shot glass and {}. "),
        (
            "pour-shot-to-clean-shaker",
            "pour-shot-to-clean-shaker from a shot glass {} with {} to a clean shaker {} with hand {} from level {} to level {}",
        ),
        (
            "pour-shot-to-used-shaker",
            "pour-shot-to-used-shaker from a shot glass {} with {} to a used shaker {} with hand {} from level {} to level {}",
        ),
        ("empty-shaker", "use hand {} to empty-shaker {} with ingredient {} from level {} to level {}."),
        ("clean-shaker", "use hand {} and hand {} to clean-shaker {}"),
        (
            "shake",
            "shake a cocktail {} with ingredient {} and ingredient {} in a shaker {} with hand {} and hand {}",
        ),
        (
            "pour-shaker-to-shot",
            "pour-shaker-to-shot to a shot glass {} the ingredient {} with hand {} from shaker {} from level {} to level {}",
        ),
    ]
)

UNREADABLE = "The action is not valid and therefore takes no effect. Please check valid actions."
NO_EFFECT = (
    "The action is not valid and therefore takes no effect. Please remember to satisfy the restriction of actions. "
    "You can also check valid actions."
)
CHANGES_ONLY = {"tyreworld", "barman"}


def ab_text(name: str, args) -> str:
    template = AB_MAP.get(name)
    return template.format(*args) if template is not None else " ".join([name, *args])


def ab_words(text: str) -> list[str]:
    """Word splitting for the plain texts these tests send (NLTK's result on them)."""
    text = re.sub(r"[()\[\],;:!?]", " ", text.lower())
    return [w.removesuffix(".") for w in text.split()]


class Reference:
    """AgentBoard's environment re-stated from its rules, over one grounded problem."""

    def __init__(self, domain: str, world) -> None:
        self.domain, self.task = domain, world.task
        self.state = self.task.init
        self.reward = 0.0
        goal = sorted(ab_text(n, args) for n, args, _ in world.lifted.goal)
        self.goal = "The goal is to satisfy the following conditions: " + ", ".join(goal)
        self.objects = {name for name, _ in world.lifted.objects}

    def sentences(self, state: int) -> str:
        return " ".join(sorted(ab_text(*atom).capitalize() for atom in self.task.true_atoms(state)))

    def executable(self) -> list[int]:
        actions = self.task.actions
        return [
            i for i in self.task.applicable(self.state) if len(set(actions[i].args)) == len(actions[i].args)
        ]

    def step(self, text: str) -> tuple[str, float, bool]:
        if "check" in text.lower():
            extras = ["check valid actions"] + (["look around"] if self.domain in CHANGES_ONLY else [])
            listed = sorted(
                ab_text(self.task.actions[i].schema, self.task.actions[i].args) for i in self.executable()
            )
            return "Valid actions are: " + ", ".join(listed + extras), self.reward, True
        if "look around" in text.lower():
            return self.sentences(self.state), self.reward, True
        words = ab_words(text)
        arity = {self.task.actions[i].schema: len(self.task.actions[i].args) for i in self.executable()}
        name = next((w for w in words if w in arity), None)
        objects = [w for w in words if w in self.objects]
        if name is None or len(objects) < arity[name]:
            return UNREADABLE, self.reward, False
        index = self.task.action_index.get((name, tuple(objects[: arity[name]])))
        if (
            index is None
            or index not in self.executable()
            or self.task.apply(self.state, index) == self.state
        ):
            return NO_EFFECT, self.reward, False
        before, self.state = self.state, self.task.apply(self.state, index)
        self.reward = max(self.reward, self.task.progress(self.state))
        shown = self.state & ~before if self.domain in CHANGES_ONLY else self.state
        observation = self.sentences(shown)
        if self.task.is_goal(self.state):
            observation += " The goal is satisfied."
        return observation, self.reward, True


def read_plan(domain: str, problem: str) -> list[tuple[str, tuple[str, ...]]]:
    lines = plan_file(domain, problem).read_text().splitlines()
    steps = [line.strip().strip("()").split() for line in lines if line.strip().startswith("(")]
    return [(s[0], tuple(s[1:])) for s in steps]


def episode(domain: str, world, plan) -> list[str]:
    """Texts of one constructed episode: meta-actions, unreadable and inapplicable texts, no-ops, and the
    plan's actions in AgentBoard's wording, bare, bracketed, upper-cased and with extra objects."""
    task = world.task
    objects = sorted(name for name, _ in world.lifted.objects)
    texts = ["check valid actions", "dance with the robot", "Check the valid actions please."]
    if domain in CHANGES_ONLY:
        texts.append("look around")
    state = task.init
    for k, (name, args) in enumerate(plan):
        if k % 5 == 1:  # an executable action name with objects that do not apply
            wrong = next(
                (
                    a
                    for a in task.actions
                    if a.schema == name
                    and a.args != args
                    and not task.is_applicable(state, task.action_index[(a.schema, a.args)])
                ),
                None,
            )
            if wrong is not None:
                texts.append(ab_text(wrong.schema, wrong.args))
        if k % 7 == 3:
            texts.append(f"{name} {args[0]}")  # too few objects
            texts.append(f"{name} {objects[0]} {objects[0]} " * len(args))  # one object repeated
        form = k % 4
        if form == 0:
            texts.append(ab_text(name, args))
        elif form == 1:
            texts.append("(" + " ".join((name, *args)) + ")")
        elif form == 2:
            texts.append(" ".join((name, *args)).upper() + " " + objects[-1])  # an extra object is dropped
        else:
            texts.append("I will " + " ".join((name, *args)) + ".")
        index = task.action_index[(name, args)]
        if domain == "barman" and k % 3 == 0:
            texts.append(ab_text(name, args))  # the same action again: mostly inapplicable now
        state = task.apply(state, index)
    return texts


@pytest.fixture(scope="module")
def ab_env():
    envs: dict[str, gym.Env] = {}

    def get(domain: str) -> gym.Env:
        if domain not in envs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PDDLNormalisationWarning)
                envs[domain] = gym.make(env_id(domain), profile="agentboard", step_budget=10**6)
        return envs[domain]

    return get


def test_replay_matches_agentboard_rules(domain_problem, ab_env) -> None:
    domain, problem = domain_problem
    env = ab_env(domain)
    obs, info = env.reset(options={"problem": problem})
    world = env.unwrapped.world
    reference = Reference(domain, world)
    assert info["goal"] == reference.goal
    assert obs == reference.sentences(world.task.init)
    assert info["progress"] == 0.0 and info["profile"] == "agentboard"
    total = 0.0
    kinds = set()
    for text in episode(domain, world, read_plan(domain, problem)):
        expected, progress, valid = reference.step(text)
        obs, reward, terminated, _, info = env.step(text)
        total += reward
        kinds.add(info["action_kind"] if valid else obs)
        assert (obs, info["progress"], info["action_valid"]) == (expected, progress, valid), text
        assert env.observation_space.contains(obs), obs[:200]
        assert info["goal"] == reference.goal
        assert abs(total - info["progress"]) < 1e-12
        if terminated:
            break
    assert terminated and info["success"], "the plan reaches the goal"
    assert {"check valid actions", "action", UNREADABLE} <= kinds


def test_stored_plans_in_agentboard_wording_reach_the_goal_in_both_profiles(domain_problem) -> None:
    domain, problem = domain_problem
    d = get_domain(domain)
    texts = [ab_text(name, args) for name, args in read_plan(domain, problem)]
    for profile in ("pddlworlds", "agentboard"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PDDLNormalisationWarning)
            env = make_env(d.domain_file, d.problem_file(problem), profile=profile, max_episode_steps=None)
        env.reset()
        for k, text in enumerate(texts):
            obs, _, terminated, _, info = env.step(text)
            assert info["action_valid"] and info["action_kind"] == "action", (profile, text, obs)
            assert terminated == (k == len(texts) - 1), (profile, text)
        assert info["success"]


# ---- single rules --------------------------------------------------------------------------------


def test_gymnasium_checker_passes(domain_name) -> None:
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = gym.make(env_id(domain_name), profile="agentboard")
        check_env(env.unwrapped, skip_render_check=True)


def test_progress_starts_at_zero_and_rises_only_on_a_change(make_env) -> None:
    ours = make_env("blocksworld")
    ab = make_env("blocksworld", profile="agentboard")
    _, info = ours.reset(options={"problem": "problem5"})
    assert info["progress"] == 0.5  # half the goal holds at reset: our profile credits it
    _, info = ab.reset(options={"problem": "problem5"})
    assert info["progress"] == 0.0
    _, reward, _, _, info = ab.step("check valid actions")
    assert (reward, info["progress"]) == (0.0, 0.0)  # a meta-action changes nothing
    action = ab.unwrapped.valid_actions()[0]
    _, reward, _, _, info = ab.step(action)
    assert info["progress"] == ab.unwrapped.world.task.progress(ab.unwrapped.state) == reward


def test_no_op_and_repeated_objects_are_invalid(make_env) -> None:
    env = make_env("barman", profile="agentboard")
    env.reset(options={"problem": "p01"})
    env.step("right grasp shaker1")
    obs, _, _, _, info = env.step("use hand right and hand left to clean-shaker shaker1")  # already clean
    assert (obs, info["action_valid"], info["error"]) == (NO_EFFECT, False, "no_effect")
    ours = make_env("barman")
    ours.reset(options={"problem": "p01"})
    ours.step("right grasp shaker1")
    _, _, _, _, info = ours.step("use hand right and hand left to clean-shaker shaker1")
    assert info["action_valid"]  # our profile counts the no-op as a valid step
    gripper = make_env("gripper", profile="agentboard")
    gripper.reset(options={"problem": "prob01"})
    obs, _, _, _, info = gripper.step("Move from rooma to rooma.")
    assert (obs, info["action_valid"]) == (NO_EFFECT, False)
    assert not any("rooma to rooma" in a for a in gripper.unwrapped.valid_actions())


def test_any_text_with_check_lists_and_listing_ends_with_meta_actions(make_env) -> None:
    env = make_env("tyreworld", profile="agentboard")
    env.reset(options={"problem": "p01"})
    obs, _, _, _, info = env.step("I checked twice")
    assert obs == "Valid actions are: Open boot., check valid actions, look around"
    assert info["valid_actions"] == ["Open boot."] and info["action_kind"] == "check valid actions"
    obs, *_ = env.step("Open boot.")
    assert obs == "Boot is open."  # only what became true


def test_step_info_documents_every_key(make_env) -> None:
    hints = typing.get_type_hints(StepInfo)
    required = StepInfo.__required_keys__
    optional = {"valid_actions", "claimed_impossible"}
    assert set(hints) == set(required) | optional
    for profile in ("pddlworlds", "agentboard"):
        env = make_env("gripper", profile=profile)
        _, info = env.reset(options={"problem": "prob01"})
        assert set(info) == set(required)
        _, _, _, _, info = env.step("check valid actions")
        assert set(info) == set(required) | {"valid_actions"}
    env = make_env("gripper", allow_impossible=True)  # the action offered: every key
    env.reset(options={"problem": "prob01"})
    _, _, _, _, info = env.step("check valid actions")
    assert set(info) == set(hints)


def test_make_env_uses_the_text_beside_the_domain_file(tmp_path) -> None:
    d = get_domain("blocksworld")
    problem = tmp_path / "mine.pddl"
    problem.write_text(
        "(define (problem mine) (:domain blocksworld-4ops) (:objects b1 b2)"
        " (:init (arm-empty) (on-table b1) (on-table b2) (clear b1) (clear b2)) (:goal (on b2 b1)))"
    )
    env = make_env(d.domain_file, problem)
    obs, info = env.reset()
    assert "b1 is on the table" in obs and "holds" not in obs
    _, _, _, _, info = env.step("Pick up b2.")
    assert info["action_valid"]
    env = make_env(d.domain_file, problem, profile="agentboard")
    obs, info = env.reset()
    assert (
        obs == "B1 is on the table. B2 is on the table. The b1 is clear. The b2 is clear. Your arm is empty."
    )
    assert info["goal"] == "The goal is to satisfy the following conditions: b2 is on b1."
    obs, _, _, _, info = env.step("Pickup b2.")
    assert obs == "B1 is on the table. The b1 is clear. You are holding b2. " and info["action_valid"]
    obs, _, terminated, _, _ = env.step("stack b2 b1")
    assert terminated and obs.endswith(" The goal is satisfied.")


def test_a_domain_without_agentboard_words_reads_bare(tmp_path) -> None:
    d = get_domain("blocksworld")
    (tmp_path / "domain.pddl").write_text(d.domain_file.read_text())
    problem = tmp_path / "p.pddl"
    problem.write_text(
        "(define (problem p) (:domain blocksworld-4ops) (:objects b1)"
        " (:init (arm-empty) (on-table b1) (clear b1)) (:goal (holding b1)))"
    )
    env = make_env(tmp_path / "domain.pddl", problem, profile="agentboard")
    obs, info = env.reset()
    assert obs == "Arm-empty Clear b1 On-table b1" and info["goal"].endswith(": holding b1")
    obs, *_ = env.step("check")
    assert obs == "Valid actions are: pickup b1, check valid actions"


def test_bad_agentboard_text_file_names_file_and_entry(tmp_path) -> None:
    d = get_domain("blocksworld")
    problem = d.problem_file("problem1")
    bad = tmp_path / "agentboard.toml"
    bad.write_text('[predicates]\non = "{y} is under {x}."\n')
    with pytest.raises(PDDLError, match=r"agentboard.toml.*\[predicates\] on: .*in this order"):
        make_env(d.domain_file, problem, text_file=bad, profile="agentboard")
    bad.write_text('[actions]\nfly = "Fly {ob}."\n')
    with pytest.raises(PDDLError, match=r"unknown action 'fly'"):
        make_env(d.domain_file, problem, text_file=bad, profile="agentboard")
    with pytest.raises(ValueError, match="unknown profile 'nope'; profiles: pddlworlds, agentboard"):
        make_env(d.domain_file, problem, profile="nope")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("pickup b1.", ["pickup", "b1", "."]),
        ("(stack b1 b2)", ["(", "stack", "b1", "b2", ")"]),
        ("stack b1 on b2. then pickup b3.", ["stack", "b1", "on", "b2", ".", "then", "pickup", "b3", "."]),
        ("put-away w1 in boot, now", ["put-away", "w1", "in", "boot", ",", "now"]),
        ("b1.b2 b1/b2 b1:block", ["b1.b2", "b1/b2", "b1", ":", "block"]),
        ('action: "unstack b1 b2"', ["action", ":", "``", "unstack", "b1", "b2", "''"]),
        ("don't move rooma's ball", ["do", "n't", "move", "rooma", "'s", "ball"]),
        ("'pickup b1'", ["'", "pickup", "b1", "'"]),
        ("cannot pickup `b1`", ["can", "not", "pickup", "`", "b1", "`"]),
        ("stack b1... b2 -- now!", ["stack", "b1", "...", "b2", "--", "now", "!"]),
        ("move -cannot b1.", ["move", "-", "can", "not", "b1", "."]),
        (
            "Move from rooma to roomb.  and then stack b1.b2",
            ["Move", "from", "rooma", "to", "roomb", ".", "and", "then", "stack", "b1.b2"],
        ),
    ],
)
def test_word_splitting_follows_nltk(text, words) -> None:
    """Expected words as NLTK 3.10's word_tokenize gives them."""
    from pddlworlds.worlds.agentboard.text import word_tokenize

    assert word_tokenize(text) == words
