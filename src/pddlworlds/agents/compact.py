"""The compact prompt form: what a decision of a model trained in state-choice needs, and nothing else.

The full form (`prompts.py`) is written for a model that has to be told the game: the actions with their
preconditions and effects, whole-state sentences after every step. A model trained in the state-choice
setting has learned the game from its data, so each of its calls in the `state-choice-compact` setting
(`settings.py`) holds only:
- a one-line instruction (the reply format);
- the goal as facts (`pred: a b, c d`) and the facts no action changes that name an object of the goal
  (Barman's recipe of the cocktail asked for, not the other six), fixed for the episode;
- the history as the agent keeps it, one line a step (`> <action> -> <facts it made true>`): every step
  for STANDARD; for HiAgent the current subgoal's steps and each finished subgoal by its summary (or its
  steps while `retrieve(k)` shows them);
- the current state (the facts an action can change, one line a predicate);
- the candidates: one a line, those that differ in one word only on one line with the word's choices
  between bars (`right grasp shot1|shot2|shot3`); each is scored, whole, after the reply's `Action:`;
- a one-line cue.
Everything that changes at every step (state, candidates, cue) comes last, so a prompt cache reuses the
instruction, the goal and the history from call to call. HiAgent's summariser reads the subgoal and its
steps in the same one-line form and is taught to reply with the facts the subgoal made true, as facts;
the teacher's subgoal lines are facts too (the goal conditions a plan segment makes true).

Facts are written from the environment's state, not parsed from its sentences: a predicate's true atoms on
one line, `ontable: shot1 shot3` for one argument and `holding: left shot2, right shaker1` for more.

The diffs variant (`state-choice-diffs`) writes the state once, after the goal (`Start:`), and each step
as what it made true and what it made false (`diff_text`), with no State or Candidates block: each call is
the one before it plus one line, so a prompt cache evaluates a step's line and the cue, not a whole state.
HiAgent's folded subgoals leave their steps out, so after them the open subgoal's first state is shown
(`render_subgoals(..., start_states=True)`).

`COMPACT_VERSION` changes whenever this wording or format changes; agents record it in their flags.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..worlds.world import World
    from .memory import Pair, Subgoal

__all__ = [
    "COMPACT_VERSION",
    "DIFFS_VERSION",
    "atoms_text",
    "candidate_lines",
    "candidates_block",
    "changed_text",
    "conditions_of",
    "diff_text",
    "fact_lines",
    "goal_block",
    "goal_facts_text",
    "hiagent_cue",
    "hiagent_system",
    "open_goal_conditions",
    "render_pairs",
    "render_subgoals",
    "retrieval_error",
    "retrieval_note",
    "standard_cue",
    "standard_system",
    "start_block",
    "state_block",
    "state_lines",
    "summarizer_system",
    "summary_request",
]

COMPACT_VERSION = "pw-compact-1"
DIFFS_VERSION = "pw-diffs-1"

Atom = tuple[str, tuple[str, ...]]


def _bits(mask: int) -> Iterable[int]:
    i = 0
    while mask:
        if mask & 1:
            yield i
        mask >>= 1
        i += 1


def _atoms(world: World, mask: int) -> list[Atom]:
    atoms = world.task.atoms
    return [atoms[i] for i in _bits(mask & ~world.task.hidden)]


def fact_lines(atoms: Sequence[Atom]) -> list[str]:
    """One line per predicate, in first-seen order: `pred: a b c` (one argument), `pred: a b, c d` (more),
    `pred` alone (none)."""
    grouped: dict[str, list[tuple[str, ...]]] = {}
    for predicate, args in atoms:
        grouped.setdefault(predicate, []).append(args)
    lines = []
    for predicate, arg_lists in grouped.items():
        if all(not args for args in arg_lists):
            lines.append(predicate)
            continue
        sep = " " if all(len(args) <= 1 for args in arg_lists) else ", "
        lines.append(f"{predicate}: " + sep.join(" ".join(args) for args in arg_lists))
    return lines


def atoms_text(atoms: Sequence[Atom]) -> str:
    """Atoms on one line, `pred a b, pred c` ("nothing" when there are none): what a step made true."""
    return ", ".join(" ".join((p, *args)) for p, args in atoms) or "nothing"


def conditions_of(line: str) -> set[str]:
    """The facts of a line `atoms_text` wrote (`on b1 b2, clear b3`), each as its own text."""
    return {part.strip() for part in line.split(",") if part.strip()}


def changed_text(world: World, before: int, after: int) -> str:
    """The facts true in `after` and not in `before`, on one line (`atoms_text`)."""
    return atoms_text(_atoms(world, after & ~before))


def diff_text(world: World, before: int, after: int) -> str:
    """What a step changed, on one line: the facts it made true, then `; not:` and those it made false
    (left out when none were)."""
    gone = _atoms(world, before & ~after)
    made = changed_text(world, before, after)
    return f"{made}; not: {atoms_text(gone)}" if gone else made


def open_goal_conditions(world: World, state: int, *, ordered: bool = True) -> list[tuple[str, int]]:
    """The subgoals a chosen-subgoal HiAgent picks among in `state` (`state-choice-subgoals`): each positive
    goal condition not true there, as (its line as the teacher writes a one-condition subgoal, its mask), in
    atom order; `ordered`: less those another open condition comes before (`World.goal_orders`: made true
    now, they would have to be undone); when none is left but the goal does not hold (a negative or other
    condition), "the goal" with mask 0, which no state meets."""
    task = world.task
    open_bits = task.goal_pos & ~state & ~task.hidden
    if ordered:
        open_bits = world.goal_orders.ready(open_bits)
    out = [(atoms_text([task.atoms[i]]), 1 << i) for i in _bits(open_bits)]
    return out or [("the goal", 0)]


def goal_facts_text(world: World, before: int, after: int) -> str:
    """The goal's facts true in `after` and not in `before`, on one line: a subgoal line the teacher
    writes ("the goal" when there are none, as `segments.goal_segment` names a plan that makes none)."""
    atoms = _atoms(world, world.task.goal_pos & after & ~before)
    return atoms_text(atoms) if atoms else "the goal"


# --------------------------------------------------------------------------------------------------
# Fixed per episode: the instruction, the goal and the facts no action changes.

def standard_system(*, listed: bool = True) -> str:
    """The instruction; `listed`: the call lists the candidates (not in the diffs variant)."""
    return f"Pick the next action. Reply: Action: {'<candidate>' if listed else '<legal action>'}"


def hiagent_system(*, retrieve: bool, listed: bool = True) -> str:
    text = "Pick the next action, in subgoals. Reply: [Subgoal: <goal facts>] Action: "
    text += "<candidate>" if listed else "<legal action>"
    return text + (" (retrieve(k) shows subgoal k's steps)" if retrieve else "")


def goal_block(world: World, goal_text: str) -> str:
    """`Goal:` as facts, then `Fixed:` lines with the facts no action changes that name an object of the
    goal (none: no such block). A goal with negative or other conditions is its sentence, and every fixed
    fact is shown."""
    lifted = world.lifted
    fixed = _atoms(world, world.initial_state & ~world.fluent_mask)
    if all(positive for _, _, positive in lifted.goal) and not lifted.goal_conditions:
        goal_atoms = [(name, tuple(args)) for name, args, _ in lifted.goal]
        goal = "; ".join(fact_lines(goal_atoms))
        named = {obj for _, args in goal_atoms for obj in args}
        fixed = [atom for atom in fixed if named & set(atom[1])]
    else:
        goal = goal_text.removeprefix("The goal is to satisfy the following conditions: ")
    lines = fact_lines(fixed)
    return f"Goal: {goal}\n" + ("Fixed:\n" + "\n".join(lines) + "\n" if lines else "")


# --------------------------------------------------------------------------------------------------
# The history.


def retrieval_note(index: int) -> str:
    return f"subgoal {index} shown above"


def retrieval_error(index: int | None, finished: Sequence[int]) -> str:
    which = f"subgoal {index}" if index is not None else "no subgoal number"
    known = ", ".join(map(str, finished)) if finished else "none"
    return f"refused ({which}; finished: {known})"


def _pair_line(pair: Pair) -> str:
    return f"> {pair.action} -> {pair.change if pair.change is not None else pair.observation}\n"


def render_pairs(pairs: Sequence[Pair]) -> str:
    """One line a step: `> <action> -> <facts it made true>` (a retrieval: what became of it)."""
    return "".join(_pair_line(p) for p in pairs)


def _met(met: bool | None) -> str:
    return "unknown" if met is None else ("yes" if met else "no")


def render_subgoals(
    subgoals: Sequence[Subgoal], *, hide_finished: bool, summarize: bool = True, start_states: bool = False
) -> str:
    """HiAgent's memory: each subgoal's line, then its summary (finished and hidden) or its steps. With
    `start_states` (the diffs variant), an open subgoal after a summary shows the state it started in
    (`Subgoal.start_facts`), as the summary does not say what its steps made false."""
    out = []
    folded = False
    for sub in subgoals:
        out.append(f"Subgoal {sub.index}: {sub.text or '(not stated)'}\n")
        if sub.finished and hide_finished and not sub.retrieved_now:
            label = f"Summary (met: {_met(sub.met)})" if summarize else "Summary"
            out.append(f"{label}: {sub.summary or 'nothing recorded'}\n")
            folded = True
            continue
        if start_states and folded and not sub.finished and sub.start_facts is not None:
            out.append(f"State:\n{sub.start_facts}\n")
        out.append(render_pairs(sub.env_pairs if sub.finished and hide_finished else sub.pairs))
    return "".join(out)


# --------------------------------------------------------------------------------------------------
# What changes at every step: the state, the candidates, the cue.


def state_lines(world: World, state: int) -> str:
    """The facts an action can change that hold in `state`, one line a predicate ("nothing" for none)."""
    lines = fact_lines(_atoms(world, state & world.fluent_mask))
    return "\n".join(lines) if lines else "nothing"


def state_block(world: World, state: int) -> str:
    """`State:` and the facts an action can change that hold in `state`, one line a predicate."""
    return f"State:\n{state_lines(world, state)}\n"


def start_block(world: World) -> str:
    """`Start:` and the first state's changeable facts: the diffs variant's state, given once."""
    return f"Start:\n{state_lines(world, world.initial_state)}\n"


def candidate_lines(actions: Sequence[str]) -> list[str]:
    """The candidates, those that differ in one word only on one line (`right grasp shot1|shot2`): each
    action joins the line of the word position that puts it with the most others (ties: the last
    position), lines in the order of their first action, choices in the actions' order."""
    words = [a.split(" ") for a in actions]
    keys: dict[tuple[int, tuple[str, ...]], list[int]] = {}
    for n, w in enumerate(words):
        for i in range(len(w)):
            keys.setdefault((i, tuple(w[:i] + ["|"] + w[i + 1 :])), []).append(n)
    lines: dict[tuple[int, tuple[str, ...]], list[int]] = {}
    for n, w in enumerate(words):
        best = max(range(len(w)), key=lambda i: (len(keys[(i, tuple(w[:i] + ["|"] + w[i + 1 :]))]), i)) if w else 0
        key = (best, tuple(w[:best] + ["|"] + w[best + 1 :])) if w else (0, ("",))
        lines.setdefault(key, []).append(n)
    out = []
    for (i, _), members in lines.items():
        if len(members) == 1:
            out.append(actions[members[0]])
            continue
        w = words[members[0]]
        choices = "|".join(dict.fromkeys(words[m][i] for m in members))
        out.append(" ".join(w[:i] + [choices] + w[i + 1 :]))
    return out


def candidates_block(actions: Sequence[str]) -> str:
    return "Candidates:\n" + "".join(f"{line}\n" for line in candidate_lines(actions))


def standard_cue() -> str:
    return "Action:"  # the candidates are scored right after it


def hiagent_cue() -> str:
    return "Reply:"  # the open subgoal, if any, is the memory's last


# --------------------------------------------------------------------------------------------------
# The summariser.


def summarizer_system() -> str:
    return (
        "Read a finished subgoal and its steps. Say whether it was met, then the facts its steps made true.\n"
        "Reply: Met: yes or Met: no, then Summary: <facts>"
    )


def summary_request(subgoal: Subgoal) -> str:
    return f"Subgoal: {subgoal.text or '(not stated)'}\n" + render_pairs(subgoal.env_pairs) + "Met:"
