"""Every word the LLM agents send, in one place.

A prompt is two messages. The system message (instruction, the domain's actions with preconditions and
effects, and the domain's fixed solved example, see `examples.py`) is fixed for a domain and an agent
configuration; the user message starts with the problem (goal and first observation, fixed for the
episode), then the working memory, then a one-line cue. Everything that changes during an episode comes
after everything that does not, so a llama.cpp backend reuses its cached prefix from call to call.
HiAgent's summariser has a prompt of its own: the finished subgoal and its trajectory, nothing else.

Only words live here: the example is read in `examples.py`, replies are parsed in `parsing.py`.

`PROMPTS_VERSION` changes whenever the wording or the format changes; evaluation records it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..worlds.text import join_and
from .examples import Example

if TYPE_CHECKING:
    from ..worlds.pddl import Literal, Schema
    from ..worlds.world import World
    from .memory import Subgoal

__all__ = [
    "ACTION_STOP",
    "INSIGHTS_HEADING",
    "PROMPTS_VERSION",
    "SUMMARY_STOP",
    "action_lines",
    "change_text",
    "clause",
    "hiagent_cue",
    "hiagent_system",
    "observation_sentences",
    "problem_text",
    "render_pairs",
    "render_subgoals",
    "retrieval_error",
    "retrieval_note",
    "standard_cue",
    "standard_system",
    "state_line",
    "summarizer_system",
    "summary_request",
    "with_insights",
]

PROMPTS_VERSION = "pw-prompts-3"

#: Stop sequences of every action call: only what truly ends a turn, an invented observation line. A blank
#: line does not (a reply may put one between its subgoal and its action); the parser takes the first
#: subgoal and the first action of the whole reply.
ACTION_STOP = ("\nObservation:",)

#: Stop sequences of a summary call: an invented next subgoal or action (never between Met and Summary).
SUMMARY_STOP = ("\nSubgoal:", "\nAction:")

# --------------------------------------------------------------------------------------------------
# The domain in words.

_LOWER_FIRST = {"The", "You", "A", "An"}


def clause(sentence: str) -> str:
    """A template sentence used inside another sentence: 'The robot arm is empty' -> 'the robot arm ...'."""
    first, _, rest = sentence.partition(" ")
    if first in _LOWER_FIRST:
        return first.lower() + (" " + rest if rest else "")
    return sentence


def _literal(world: World, schema: Schema, lit: Literal, true: bool) -> str:
    args = tuple(f"<{schema.parameters[a]}>" if isinstance(a, int) else a for a in lit.args)
    return clause(world.templates.sentence((lit.predicate, args), true=true))


def action_lines(world: World, *, look_around: bool = True, describe: bool = True) -> str:
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
        placeholders = {"?" + p: f"<{p}>" for p in schema.parameters}
        pre += [clause(world.templates.condition(formula, placeholders)) for formula in schema.conditions]
        eff = [_literal(world, schema, lit, True) for lit in schema.add]
        eff += [_literal(world, schema, lit, False) for lit in schema.delete if lit not in schema.add]
        if schema.conditional:
            eff.append("more, depending on the state")
        line = f"- {world.templates.signature(schema.name)}"
        if typed:
            line += f" ({', '.join(typed)})"  # e.g. "(<h1> <h2> hands, <s> shot)"
        line += f": needs {join_and(pre) if pre else 'nothing'}; then {join_and(eff) if eff else 'nothing changes'}."
        lines.append(line)
    if describe:  # the meta-actions that only describe (not offered where the state is always in view)
        lines.append("- check valid actions: lists the actions you can take now.")
        if look_around:
            lines.append("- look around: describes the whole state.")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# System messages.

_INTRO = "You act in a text world to reach a goal. Each turn you write one action and get an observation."


def _actions_block(world: World, look_around: bool, describe: bool) -> str:
    return "Actions (<x> stands for an object):\n" + action_lines(world, look_around=look_around, describe=describe)


def standard_system(world: World, example: Example | None, *, look_around: bool, describe: bool = True) -> str:
    parts = [_INTRO, _actions_block(world, look_around, describe), "Reply with one line: Action: <action>"]
    if example is not None:
        lines = ["Example (a different problem):", f"Goal: {_goal(example.goal)}", f"Observation: {example.observation}"]
        for step in example.env_steps:
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
    describe: bool = True,
) -> str:
    rules = (
        'Work in subgoals. Start a subgoal with a line "Subgoal: <what to reach next>" followed by a line '
        '"Action: <action>". While the subgoal is not reached, write only "Action: <action>". '
        "When it is reached, write the next subgoal and its first action."
    )
    if hide_finished:
        rules += " A finished subgoal is shown only by a summary."
        if retrieve:
            rules += (
                ' To see the actions of finished subgoal k again, write "Action: retrieve(k)": they are shown in'
                " place of its summary until the current subgoal is finished, and it takes no turn."
            )
    parts = [_INTRO, _actions_block(world, look_around, describe), rules]
    if example is not None:
        lines = ["Example (a different problem):", f"Goal: {_goal(example.goal)}", f"Observation: {example.observation}"]
        for number, sub in enumerate(example.subgoals, start=1):
            lines.append(f"Subgoal {number}: {sub.text}")
            for step in sub.steps:
                if step.is_retrieval:
                    if retrieve and hide_finished:
                        lines += [f"Action: {step.action}", retrieval_note(step.retrieved).rstrip("\n")]
                    continue
                lines += [f"Action: {step.action}", f"Observation: {step.observation}"]
            if hide_finished:
                env_steps = sub.env_steps
                summary = sub.summary if summarize else env_steps[-1].observation
                lines.append(_summary_line(summary, sub.met, judged=summarize))
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _goal(goal_text: str) -> str:
    return goal_text.removeprefix("The goal is to satisfy the following conditions: ")


#: The one heading under which cross-trial insights (rules from earlier episodes) enter the instruction.
INSIGHTS_HEADING = "Insights from earlier episodes (rules that helped before; follow them where they apply):"


def with_insights(system: str, insights: list[str]) -> str:
    """The system text with the insights under `INSIGHTS_HEADING` at its end; unchanged without any."""
    if not insights:
        return system
    return system + "\n\n" + INSIGHTS_HEADING + "\n" + "\n".join(f"- {text}" for text in insights)


# --------------------------------------------------------------------------------------------------
# User messages: the problem, the working memory, the cue.


def problem_text(goal_text: str, observation: str) -> str:
    return f"Your problem:\nGoal: {_goal(goal_text)}\nObservation: {observation}\n"


def render_pairs(pairs, indent: str = "") -> str:
    """`Action: ...` / `Observation: ...` lines; a retrieval pair's observation is its note as is."""
    out = []
    for pair in pairs:
        out.append(f"{indent}Action: {pair.action}\n")
        if getattr(pair, "kind", "env") == "retrieval":
            out.append(pair.observation)
        else:
            out.append(f"{indent}Observation: {pair.observation}\n")
    return "".join(out)


def retrieval_note(index: int) -> str:
    """What follows a successful `retrieve(k)` in the memory (the pairs themselves stand at subgoal k)."""
    return f"Observation: Subgoal {index} is shown in full above, in place of its summary.\n"


def retrieval_error(index: int | None, finished: list[int]) -> str:
    """What follows a refused `retrieve(k)`: an observation like any other, so the reply's stop sequence
    ends a model that goes on writing after it (it stays only until the next environment step)."""
    which = f"subgoal {index}" if index is not None else "a subgoal without its number"
    known = f"finished subgoals are {', '.join(map(str, finished))}" if finished else "no subgoal is finished yet"
    return f"Observation: Cannot retrieve {which}: {known}.\n"


def _met_word(met: bool | None) -> str:
    return "unknown" if met is None else ("yes" if met else "no")


def _summary_line(summary: str | None, met: bool | None, *, judged: bool = True) -> str:
    """`Summary (met: yes|no|unknown): ...` from the summariser, plain `Summary: ...` without one."""
    label = f"Summary (met: {_met_word(met)})" if judged else "Summary"
    return f"{label}: {summary or 'nothing recorded'}"


def render_subgoals(subgoals, *, hide_finished: bool, summarize: bool = True) -> str:
    """The working memory: each subgoal with its pairs, a finished one (when hidden) by its summary
    unless it was retrieved during the current subgoal, then by its pairs in the summary's place."""
    out = []
    for sub in subgoals:
        out.append(f"Subgoal {sub.index}: {sub.text or '(not stated)'}\n")
        if sub.finished and hide_finished and not sub.retrieved_now:
            met = sub.met if summarize else None
            out.append(_summary_line(sub.summary, met, judged=summarize) + "\n")
        elif sub.finished and hide_finished:
            out.append(render_pairs(sub.env_pairs))
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


# --------------------------------------------------------------------------------------------------
# The summariser: its own prompt, seeing only the finished subgoal and its trajectory.

_SUMMARIZER_EXAMPLE = (
    "Example:\n"
    "Subgoal: open the cellar door\n"
    "Action: open cellar door\n"
    "Observation: The cellar door is locked.\n"
    "Action: take brass key\n"
    "Observation: You cannot take brass key: there is no brass key here.\n"
    "Met: no\n"
    "Summary: The cellar door stayed shut: it is locked, and there is no brass key here to unlock it."
)


_SUMMARIZER_TASK = (
    "You read one finished subgoal of an agent acting in a text world: the subgoal and the actions "
    "taken for it, each with its observation. Say whether the subgoal was met, then state in one or two "
    "sentences the facts the actions established. If no action had the intended effect, say why "
    "instead, from what the observations report."
)
_SUMMARIZER_FORMAT = 'Reply with two lines: "Met: yes" or "Met: no", then "Summary: <the facts>".'


_SUMMARIZER_CHANGES_TASK = (
    "You read one finished subgoal of an agent acting in a text world: the subgoal and the actions "
    "taken for it, each with the facts it made true. Say whether the subgoal was met, then state in one or "
    "two sentences the facts the actions established."
)

_SUMMARIZER_CHANGES_EXAMPLE = (
    "Example:\n"
    "Subgoal: the cellar door is open\n"
    "Action: take brass key\n"
    "Made true: You hold the brass key.\n"
    "Action: go to the hall\n"
    "Made true: You are in the hall.\n"
    "Met: no\n"
    "Summary: You hold the brass key and are in the hall; the cellar door is still shut."
)


def summarizer_system(*, changes: bool = False) -> str:
    """The summariser's instruction, reply format and one worked example (a subgoal not met, explained);
    with `changes`, for a trajectory given as actions and what each made true."""
    if changes:
        return f"{_SUMMARIZER_CHANGES_TASK}\n\n{_SUMMARIZER_FORMAT}\n\n{_SUMMARIZER_CHANGES_EXAMPLE}"
    return f"{_SUMMARIZER_TASK}\n\n{_SUMMARIZER_FORMAT}\n\n{_SUMMARIZER_EXAMPLE}"


def summary_request(subgoal: Subgoal, *, changes: bool = False) -> str:
    """The summariser's user message: the finished subgoal and its environment steps, nothing else; with
    `changes`, each step as its action and what it made true (`Pair.change`) instead of the whole state."""
    head = f"Subgoal: {subgoal.text or '(not stated)'}\n"
    if not changes:
        return head + render_pairs(subgoal.env_pairs) + "Met:"
    lines = "".join(f"Action: {p.action}\nMade true: {p.change or p.observation}\n" for p in subgoal.env_pairs)
    return head + lines + "Met:"


def observation_sentences(observation: str) -> list[str]:
    """A full-state observation's sentences, each with its full stop ("b1 is clear. b2 is on b1." -> 2)."""
    return [s for s in re.split(r"(?<=\.)\s+", observation.strip()) if s]


def change_text(before: str, after: str) -> str:
    """What a step made true, from the full-state observations before and after it: the sentences of
    `after` that `before` lacks, in `after`'s order ("Nothing new is true." when there are none)."""
    old = set(observation_sentences(before))
    new = [s for s in observation_sentences(after) if s not in old]
    return " ".join(new) if new else "Nothing new is true."


def state_line(observation: str) -> str:
    """The current state, where the prompt's last observation is not it (after a retrieval, say)."""
    return f"Current state: {observation}\n"
