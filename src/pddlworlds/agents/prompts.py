"""Every word the LLM agents send or expect, in one place.

A prompt is two messages. The system message (instruction, the domain's actions with preconditions and
effects, and one solved example of a different problem of the same domain) is fixed for a domain and an
agent configuration; the user message starts with the problem (goal and first observation, fixed for the
episode), then the working memory, then a one-line cue. Everything that changes during an episode comes
after everything that does not, so a llama.cpp backend reuses its cached prefix from call to call.

Parsers for the model's replies live here too, because they are the other half of the format: they
accept what small models actually write (missing colons, markdown, lower case, extra text).

`PROMPTS_VERSION` changes whenever the wording or the format changes; evaluation records it.
"""

from __future__ import annotations

import math
import re
import warnings
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..text import join_and

if TYPE_CHECKING:
    from ..grounding import GroundTask
    from ..pddl import Literal, Schema
    from ..world import World
    from .memory import Subgoal

__all__ = [
    "PROMPTS_VERSION",
    "Example",
    "ExampleStep",
    "ExampleSubgoal",
    "Reply",
    "action_lines",
    "build_example",
    "example_problem",
    "expert_steps",
    "expert_actions_fallback",
    "bfs_plan",
    "standard_system",
    "hiagent_system",
    "problem_text",
    "render_pairs",
    "render_subgoals",
    "render_retrieval",
    "retrieval_error",
    "standard_cue",
    "hiagent_cue",
    "summary_cue",
    "parse_reply",
    "parse_retrieve",
    "parse_summary",
]

PROMPTS_VERSION = "pw-prompts-2"

#: Stop sequences of every action call: a reply is one or two lines, and the model must not invent the
#: observation (a blank line also ends it: small models otherwise ramble to max_tokens).
ACTION_STOP = ("\n\n", "\nObservation", "Observation:")

# --------------------------------------------------------------------------------------------------
# The domain in words.

_LOWER_FIRST = {"The", "You", "A", "An"}


def _clause(sentence: str) -> str:
    """A template sentence used inside another sentence: 'The robot arm is empty' -> 'the robot arm ...'."""
    first, _, rest = sentence.partition(" ")
    if first in _LOWER_FIRST:
        return first.lower() + (" " + rest if rest else "")
    return sentence


def _literal(world: World, schema: Schema, lit: Literal, true: bool) -> str:
    args = tuple(f"<{schema.parameters[a]}>" if isinstance(a, int) else a for a in lit.args)
    return _clause(world.templates.sentence((lit.predicate, args), true=true))


def action_lines(world: World, *, look_around: bool = True) -> str:
    """One line per action: canonical phrase with placeholders, preconditions and effects in words.

    e.g. `- stack <ob> on <underob>: needs the robot arm is holding <ob> and <underob> is clear;
    then the robot arm is empty, ... and <underob> is not clear.`
    """
    lines = []
    for schema in world.lifted.schemas:
        by_type: dict[str, list[str]] = {}
        for p, t in zip(schema.parameters, schema.types):
            if t not in ("object", p):
                by_type.setdefault(t, []).append(f"<{p}>")
        typed = [f"{' '.join(ps)} {t}{'s' if len(ps) > 1 else ''}" for t, ps in by_type.items()]
        pre = [_literal(world, schema, lit, lit.positive) for lit in schema.preconditions]
        eff = [_literal(world, schema, lit, True) for lit in schema.add]
        eff += [_literal(world, schema, lit, False) for lit in schema.delete if lit not in schema.add]
        line = f"- {world.templates.signature(schema.name)}"
        if typed:
            line += f" ({', '.join(typed)})"  # e.g. "(<h1> <h2> hands, <s> shot)"
        line += f": needs {join_and(pre) if pre else 'nothing'}; then {join_and(eff) if eff else 'nothing changes'}."
        lines.append(line)
    lines.append("- check valid actions: lists the actions you can take now.")
    if look_around:
        lines.append("- look around: describes the whole state.")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# The in-context example: an expert episode of a different problem of the same domain.


@dataclass(frozen=True)
class ExampleStep:
    action: str
    observation: str
    progress: float


@dataclass(frozen=True)
class ExampleSubgoal:
    text: str
    start: int  # first step (index into Example.steps)
    end: int  # one past the last step
    summary: str  # what changed from the subgoal's start to its end


@dataclass(frozen=True)
class Example:
    problem: str
    goal: str
    observation: str  # the first observation
    steps: tuple[ExampleStep, ...]
    subgoals: tuple[ExampleSubgoal, ...]


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return math.inf  # type: ignore[return-value]


def example_problem(env: Any, problem: str) -> str | None:
    """The smallest problem of the environment's split other than `problem` (by file size, then name)."""
    from ..grounding import natural_key

    env = env.unwrapped
    files: dict[str, Path] = env.problem_files
    others = [name for name in files if name != problem]
    if not others:
        return None
    return min(others, key=lambda n: (_file_size(Path(files[n])), natural_key(n)))


def bfs_plan(task: GroundTask, max_nodes: int = 200_000) -> list[int] | None:
    """A shortest plan (action indices) by breadth-first search, or None past `max_nodes` states."""
    start = task.init
    if task.is_goal(start):
        return []
    parent: dict[int, tuple[int, int] | None] = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        for action in task.applicable(state):
            nxt = task.apply(state, action)
            if nxt in parent:
                continue
            parent[nxt] = (state, action)
            if task.is_goal(nxt):
                plan = []
                cur = nxt
                while parent[cur] is not None:
                    prev, act = parent[cur]  # type: ignore[misc]
                    plan.append(act)
                    cur = prev
                return plan[::-1]
            if len(parent) >= max_nodes:
                return None
            queue.append(nxt)
    return None


def _replay(world: World, actions: list[str], mode: str) -> list[tuple[str, str, str, float]]:
    state = world.initial_state
    observation = world.observe(state, "full")
    out = []
    for text in actions:
        outcome = world.step(state, text, mode)
        if not outcome.valid or outcome.action is None:
            raise ValueError(f"expert action {text!r} is not applicable: {outcome.observation}")
        out.append((observation, outcome.action, outcome.observation, world.task.progress(outcome.state)))
        state, observation = outcome.state, outcome.observation
    return out


def expert_steps(env: Any, problem: str) -> list[tuple[str, str, str, float]] | None:
    """(observation, action, next observation, progress) of an expert episode of `problem`.

    The actions come from `pddlworlds.planning.expert_trajectory` (the stored plan, else a planner run);
    without it, or when it fails, from `expert_actions_fallback`. They are replayed here so that the
    observations are in the environment's own observation mode.
    """
    env = env.unwrapped
    world = env.world_of(problem)
    actions: list[str] | None = None
    if env.split != "custom":
        from ..planning import expert_trajectory

        try:
            actions = [step[1] for step in expert_trajectory(env.domain_name, problem, split=env.split)]
        except Exception as exc:  # a missing planner must not stop an agent: search instead
            warnings.warn(f"expert_trajectory({env.domain_name!r}, {problem!r}) failed: {exc}", stacklevel=2)
    if actions is None:
        actions = expert_actions_fallback(env, problem)
    return None if actions is None else _replay(world, actions, env.observation_mode)


def expert_actions_fallback(env: Any, problem: str) -> list[str] | None:
    """A breadth-first search (fine for the small problems examples are made from; None when it gives up).

    No stored plan is looked up here: for a shipped split `expert_trajectory` has already tried it, and a
    problem of one's own (split "custom") has none, whatever its name.
    """
    world = env.unwrapped.world_of(problem)
    plan = bfs_plan(world.task)
    return None if plan is None else [world.action_text(i) for i in plan]


def _segment(progress: list[float], start_progress: float, max_len: int) -> list[tuple[int, int]]:
    """Cut a plan after each step that raises progress; pieces longer than `max_len` are cut evenly."""
    cuts, start, best = [], 0, start_progress
    for i, p in enumerate(progress):
        if p > best or i == len(progress) - 1:
            best = max(best, p)
            cuts.append((start, i + 1))
            start = i + 1
    out = []
    for a, b in cuts:
        pieces = math.ceil((b - a) / max_len)
        size = (b - a) / pieces
        bounds = [a + round(size * k) for k in range(pieces + 1)]
        out.extend(zip(bounds[:-1], bounds[1:]))
    return out


def _example_subgoals(world: World, actions: list[str], progress: list[float], max_len: int = 4):
    """Cut the expert run into subgoals; each is named by at most two facts it made true (goal facts
    first, then what its last action made true) and summarised by every fact it made true."""
    states = [world.initial_state]
    for text in actions:
        states.append(world.step(states[-1], text, "changes").state)
    task = world.task
    goal_atoms = {(n, a) for n, a, positive in world.lifted.goal if positive}

    def added(before: int, after: int) -> list:
        return [task.atoms[i] for i in range(len(task.atoms)) if (after >> i & 1) and not (before >> i & 1)]

    subgoals = []
    for a, b in _segment(progress, task.progress(states[0]), max_len):
        net = added(states[a], states[b])
        last = set(added(states[b - 1], states[b]))
        named = sorted(net, key=lambda atom: (atom not in goal_atoms, atom not in last))[:2]
        text = join_and([_clause(world.templates.sentence(atom)) for atom in named]) or "continue"
        summary = " ".join(world.templates.sentence(atom) + "." for atom in net) or "Nothing new is true."
        subgoals.append(ExampleSubgoal(text, a, b, summary))
    return tuple(subgoals)


_EXAMPLES: dict[tuple, Example | None] = {}


def build_example(env: Any, problem: str) -> Example | None:
    """The in-context example for an episode of `problem`: an expert run of the smallest other problem.

    Deterministic, and cached per domain file, example problem and observation mode.
    """
    env = env.unwrapped
    other = example_problem(env, problem)
    if other is None:
        return None
    key = (str(env.domain_file), str(env.problem_files[other]), str(env.text_file), env.observation_mode)
    if key not in _EXAMPLES:
        steps = expert_steps(env, other)
        if not steps:
            _EXAMPLES[key] = None
        else:
            world = env.world_of(other)
            actions = [s[1] for s in steps]
            progress = [float(s[3]) for s in steps]
            _EXAMPLES[key] = Example(
                problem=other,
                goal=world.goal_text(),
                observation=steps[0][0],
                steps=tuple(ExampleStep(a, o, p) for _, a, o, p in steps),
                subgoals=_example_subgoals(world, actions, progress),
            )
    return _EXAMPLES[key]


# --------------------------------------------------------------------------------------------------
# System messages.

_INTRO = "You act in a text world to reach a goal. Each turn you write one action and get an observation."


def _actions_block(world: World, look_around: bool) -> str:
    return "Actions (<x> stands for an object):\n" + action_lines(world, look_around=look_around)


def standard_system(world: World, example: Example | None, *, look_around: bool) -> str:
    parts = [_INTRO, _actions_block(world, look_around), "Reply with one line: Action: <action>"]
    if example is not None:
        lines = ["Example (a different problem):", f"Goal: {_goal(example.goal)}", f"Observation: {example.observation}"]
        for step in example.steps:
            lines += [f"Action: {step.action}", f"Observation: {step.observation}"]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def hiagent_system(
    world: World,
    example: Example | None,
    *,
    look_around: bool,
    hide_finished: bool,
    summarize: bool,
    retrieve: bool,
) -> str:
    rules = (
        'Work in subgoals. Start a subgoal with a line "Subgoal: <what to reach next>" followed by a line '
        '"Action: <action>". While the subgoal is not reached, write only "Action: <action>". '
        "When it is reached, write the next subgoal and its first action."
    )
    if hide_finished:
        rules += " A finished subgoal is shown only by a summary."
        if retrieve:
            rules += ' To see the actions of finished subgoal k again, write "Action: retrieve(k)"; it takes no turn.'
    parts = [_INTRO, _actions_block(world, look_around), rules]
    if example is not None:
        lines = ["Example (a different problem):", f"Goal: {_goal(example.goal)}", f"Observation: {example.observation}"]
        for number, sub in enumerate(example.subgoals, start=1):
            lines.append(f"Subgoal {number}: {sub.text}")
            for step in example.steps[sub.start : sub.end]:
                lines += [f"Action: {step.action}", f"Observation: {step.observation}"]
            if hide_finished:
                summary = sub.summary if summarize else example.steps[sub.end - 1].observation
                lines.append(_summary_line(summary, True if summarize else None))
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _goal(goal_text: str) -> str:
    return goal_text.removeprefix("The goal is to satisfy the following conditions: ")


# --------------------------------------------------------------------------------------------------
# User messages: the problem, the working memory, the cue.


def problem_text(goal_text: str, observation: str) -> str:
    return f"Your problem:\nGoal: {_goal(goal_text)}\nObservation: {observation}\n"


def render_pairs(pairs, indent: str = "") -> str:
    """`Action: ...` / `Observation: ...` lines; a retrieval pair's observation is its block as is."""
    out = []
    for pair in pairs:
        out.append(f"{indent}Action: {pair.action}\n")
        if getattr(pair, "kind", "env") == "retrieval":
            out.append(pair.observation)
        else:
            out.append(f"{indent}Observation: {pair.observation}\n")
    return "".join(out)


def render_retrieval(subgoal: Subgoal) -> str:
    """What `retrieve(k)` puts in the memory: subgoal k's own environment pairs, indented."""
    body = render_pairs(subgoal.env_pairs, indent="  ") or "  (no actions)\n"
    return f"Retrieved subgoal {subgoal.index} ({subgoal.text or 'not stated'}):\n{body}"


def retrieval_error(index: int | None, finished: list[int]) -> str:
    which = f"subgoal {index}" if index is not None else "a subgoal without its number"
    known = f"finished subgoals are {', '.join(map(str, finished))}" if finished else "no subgoal is finished yet"
    return f"Cannot retrieve {which}: {known}.\n"


def _summary_line(summary: str | None, met: bool | None) -> str:
    label = "Summary" if met is None else f"Summary (met: {'yes' if met else 'no'})"
    return f"{label}: {summary or 'nothing recorded'}"


def render_subgoals(subgoals, *, hide_finished: bool) -> str:
    out = []
    for sub in subgoals:
        out.append(f"Subgoal {sub.index}: {sub.text or '(not stated)'}\n")
        if sub.finished and hide_finished:
            out.append(_summary_line(sub.summary, sub.met) + "\n")
        else:
            out.append(render_pairs(sub.pairs))
    return "".join(out)


def standard_cue() -> str:
    # Ends on "Action:" so that a pretrained model, given the prompt as plain text, continues with one.
    return "Your next action.\nAction:"


def hiagent_cue(current: int | None, *, forced: bool = False) -> str:
    # No quoted "<placeholder>" here: the system text states the format, and a pretrained model given the
    # prompt as plain text copies placeholders from the last lines it read (measured: with the quoted
    # form the embedded 270M model wrote "Action: <" or lines of the action list, without it actions).
    prefix = "Do not retrieve now: write an action for the world. " if forced else ""
    if current is None:
        return prefix + "Your first subgoal and its first action."
    return prefix + (
        f"Your next action for subgoal {current}, "
        f"or a new subgoal and its first action if subgoal {current} is reached."
    )


def summary_cue(subgoal: Subgoal) -> str:
    return (
        f'Subgoal {subgoal.index} ({subgoal.text or "not stated"}) is finished. Was it reached? '
        'Reply with two lines: "Met: yes" or "Met: no", then "Summary: <the facts it established>".'
    )


# --------------------------------------------------------------------------------------------------
# Reading replies.


@dataclass(frozen=True)
class Reply:
    subgoal: str | None  # None when the reply states no subgoal
    action: str  # "" when nothing usable was found


_MARKUP = re.compile(r"\*\*|__|`")
_LABEL = re.compile(
    r"\b(subgoal|action)\b[ \t]*(?:\d+)?[ \t]*(?:\([^)\n]*\))?[ \t]*(:|=|-(?=\s))?[ \t]*", re.IGNORECASE
)
_LINE_START = re.compile(r"^[\s>#*\-+.\d)]*$")
_NON_ACTION_LINE = re.compile(r"^\s*(observation|summary|met|goal|example|your problem)\b", re.IGNORECASE)
# What a model copies from the prompt's own placeholders: "(not stated)", "<next subgoal>".
_PLACEHOLDER = re.compile(r"^\W*(\(not stated\)|<[^<>]*>)?\W*$", re.IGNORECASE)
_MAX_ACTION_CHARS = 300


def _clean_action(text: str) -> str:
    text = re.split(r"(?i)\bobservation\s*:", text, maxsplit=1)[0]
    text = text.strip().strip("\"'").strip()
    text = text.rstrip(".").strip()
    return text[:_MAX_ACTION_CHARS]


def _segments(text: str) -> list[tuple[str | None, str]]:
    """(label, content) per labelled part of each line; unlabelled lines come as (None, line)."""
    out: list[tuple[str | None, str]] = []
    for raw_line in _MARKUP.sub("", text).splitlines():
        line = raw_line.strip()
        if not line:
            continue
        labels = []
        for m in _LABEL.finditer(line):
            at_start = bool(_LINE_START.match(line[: m.start()]))
            capitalised = m.group(1)[0].isupper()
            after_subgoal = bool(labels) and m.group(1).lower() == "action" and line[m.end() :].strip() != ""
            if m.group(2) or at_start or (labels and (capitalised or after_subgoal)):
                labels.append(m)
        if not labels:
            out.append((None, line))
            continue
        head = line[: labels[0].start()].strip(" \t>#*-+")
        if head and not _LINE_START.match(head):
            out.append((None, head))
        for i, m in enumerate(labels):
            end = labels[i + 1].start() if i + 1 < len(labels) else len(line)
            out.append((m.group(1).lower(), line[m.end() : end].strip()))
    return out


def parse_reply(text: str) -> Reply:
    """Find `Subgoal: ...` and `Action: ...` in a reply, tolerating the slips small models make.

    The action is the first non-empty `Action` part (a label with nothing after it takes the next
    unlabelled line);
    without any `Action` label it is the first unlabelled line that is not an observation or summary.
    """
    segments = _segments(text or "")
    subgoal = next((c for label, c in segments if label == "subgoal" and c), None)
    action: str | None = None
    for i, (label, content) in enumerate(segments):
        if label == "action":
            if not content and i + 1 < len(segments) and segments[i + 1][0] is None:
                content = segments[i + 1][1]
            if content:
                action = content
                break
            action = ""
    if action is None:
        action = next(
            (c for label, c in segments if label is None and not _NON_ACTION_LINE.match(c)),
            "",
        )
    if subgoal is not None and _PLACEHOLDER.match(subgoal):
        subgoal = None  # a copied placeholder starts no subgoal
    return Reply(subgoal=subgoal.strip().rstrip(".") if subgoal else None, action=_clean_action(action))


_RETRIEVE = re.compile(r"^\W*retrieve\b\W*(?:subgoal\b\W*)?(\d+)?", re.IGNORECASE)


def parse_retrieve(action: str) -> tuple[bool, int | None]:
    """(is a retrieval, subgoal number): `retrieve(2)`, `retrieve( 2 )`, `Retrieve subgoal 2`, `retrieve`."""
    m = _RETRIEVE.match(action or "")
    if not m:
        return False, None
    return True, int(m.group(1)) if m.group(1) else None


_MET = re.compile(
    r"\b(?:met|reached|achieved|done|completed|success(?:ful)?)\b\W{0,3}(yes|no|true|false)\b", re.IGNORECASE
)
_SUMMARY = re.compile(r"\bsummary\b\W{0,3}(.*)", re.IGNORECASE | re.DOTALL)


def parse_summary(text: str) -> tuple[bool | None, str | None]:
    """(met, summary) from a summariser reply such as `Met: yes\\nSummary: b1 is on b2.`"""
    clean = _MARKUP.sub("", text or "").strip()
    met: bool | None = None
    m = _MET.search(clean)
    if m:
        met = m.group(1).lower() in ("yes", "true")
    else:
        lead = re.match(r"^\W*(yes|no)\s*(?:[.,:;!\n]|$)", clean, re.IGNORECASE)
        if lead:
            met = lead.group(1).lower() == "yes"
    s = _SUMMARY.search(clean)
    if s:
        summary = s.group(1)
    else:
        summary = "\n".join(ln for ln in clean.splitlines() if not _MET.search(ln))
    summary = " ".join(summary.split())
    return met, summary or None
