"""AgentBoard's rules of play over one problem: the pure transition of `profile="agentboard"`.

The same grounded problem as `World`, stepped the way AgentBoard's PDDL environment (hkust-nlp/AgentBoard)
steps it, so that a model reads the text and gets the feedback its published numbers were measured with:

- any text containing "check" lists the valid actions ("Valid actions are: a, b, check valid actions"),
  any other text containing "look around" shows the whole state; both are valid steps;
- otherwise the text is read by `agentboard_text.read_action`; a text it cannot read gets one fixed
  message, an action that is inapplicable, of the wrong types, or changes nothing gets another, and both
  leave the state as it was and count as invalid;
- after an action, Blocksworld and Gripper show the whole state and Tyreworld and Barman only the atoms
  that became true; the observation that reaches the goal ends " The goal is satisfied.";
- ground actions that name one object twice are neither listed nor executed.

On any domain, beyond the four AgentBoard wrote text for: the goal names each of its top-level conditions
(a quantified one in words, as progress counts it), the translator's helper atoms are never shown, and a
listed action typed back exactly as listed is that action (AgentBoard's own reading would take an object
named like a word of the phrasing, or containing "check", for something else).

The listing is sorted (AgentBoard's order follows Python's string hashing and differs between runs).
"""

from __future__ import annotations

from ..grounding import set_bits
from ..pddl import Formula, LiftedTask
from ..text import TextTemplates
from ..world import Outcome, World
from .text import AgentBoardText, read_action

__all__ = ["GOAL_SATISFIED", "NO_EFFECT", "UNREADABLE", "AgentBoardWorld"]

#: AgentBoard's message when no action executable now is named, or too few objects are.
UNREADABLE = "The action is not valid and therefore takes no effect. Please check valid actions."
#: AgentBoard's message when the named action is not applicable or changes nothing.
NO_EFFECT = (
    "The action is not valid and therefore takes no effect. Please remember to satisfy the restriction of "
    "actions. You can also check valid actions."
)
#: What AgentBoard appends to the observation of the action that reaches the goal.
GOAL_SATISFIED = "The goal is satisfied."
_GOAL_PREFIX = "The goal is to satisfy the following conditions: "


class AgentBoardWorld(World):
    """A grounded problem with AgentBoard's text and rules; as pure as `World` (no state of its own)."""

    def __init__(
        self,
        task: LiftedTask,
        templates: TextTemplates,
        words: AgentBoardText,
        name: str | None = None,
        **limits: int,
    ):
        super().__init__(task, templates, name, **limits)
        self.words = words
        atoms = self.task.atoms
        self._sentence = tuple(words.atom_text(atom).capitalize() for atom in atoms)
        goal = sorted(
            [words.atom_text((n, args)) if positive else "not " + words.atom_text((n, args))
             for n, args, positive in task.goal]
            + [condition_words(words, formula) for formula in task.goal_conditions]
        )
        self._ab_goal = _GOAL_PREFIX + ", ".join(goal)
        # Ground actions naming one object twice are left out, as AgentBoard's action space leaves them out.
        self._listed = tuple(len(set(a.args)) == len(a.args) for a in self.task.actions)
        self._ab_action_texts = tuple(words.action_text(a.schema, a.args) for a in self.task.actions)
        self._arity = {s.name.lower(): len(s.parameters) for s in task.schemas}
        self._schema_of = {s.name.lower(): s.name for s in task.schemas}
        self._object_of = {name.lower(): name for name, _ in task.objects}
        self._object_names = frozenset(self._object_of)
        # A listed action's text, typed back as listed, is that action (texts two actions share are left out).
        exact: dict[str, int | None] = {}
        for index, text in enumerate(self._ab_action_texts):
            if self._listed[index]:
                key = _typed_key(text)
                exact[key] = None if key in exact else index
        self._ab_exact = {key: index for key, index in exact.items() if index is not None}
        self._by_schema: dict[str, tuple[int, ...]] = {}
        for index, action in enumerate(self.task.actions):
            if self._listed[index]:
                key = action.schema.lower()
                self._by_schema[key] = (*self._by_schema.get(key, ()), index)

    @property
    def after_action(self) -> str:
        return self.words.after_action

    # ---- text of states ----------------------------------------------------------------------

    def _sentences(self, mask: int) -> str:
        return " ".join(sorted(self._sentence[i] for i in set_bits(mask)))

    def describe(self, state: int) -> str:
        """Every true atom as a capitalised sentence, sorted, joined by spaces (helper atoms left out)."""
        return self._sentences(state & self._shown)

    def describe_changes(self, before: int, after: int) -> str:
        """Only the atoms that became true (AgentBoard never says what stopped being true)."""
        return self._sentences(after & ~before & self._shown)

    def goal_text(self) -> str:
        return self._ab_goal

    def action_text(self, index: int) -> str:
        return self._ab_action_texts[index]

    def valid_actions(self, state: int) -> list[str]:
        """The actions AgentBoard lists in `state`, sorted, without its trailing meta-actions."""
        return sorted(self._ab_action_texts[i] for i in self._executable(state))

    def listing(self, state: int) -> str:
        """The observation of a "check" step."""
        return "Valid actions are: " + ", ".join([*self.valid_actions(state), *self.words.listing_extras()])

    def observe(self, state: int, mode: str, before: int | None = None) -> str:
        """The full state (at reset, `before` None), else the state or its additions after an action."""
        if before is None:
            return self.describe(state)
        text = self.describe(state) if mode == "full" else self.describe_changes(before, state)
        return text + " " + GOAL_SATISFIED if self.task.is_goal(state) else text

    def _executable(self, state: int) -> list[int]:
        return [i for i in self.task.applicable(state) if self._listed[i]]

    # ---- the transition ----------------------------------------------------------------------

    def step(self, state: int, text: str, mode: str) -> Outcome:
        """AgentBoard's step: "check", then "look around", then its action reading; no-ops are invalid."""
        text = text if isinstance(text, str) else str(text)
        listed = self._ab_exact.get(_typed_key(text))
        if listed is not None and self.task.is_applicable(state, listed):
            return self._applied(state, listed, mode)
        lowered = text.lower()
        if listed is None and "check" in lowered:  # an action's own text is never a meta-action
            actions = tuple(self.valid_actions(state))
            return Outcome(
                state, self.listing(state), "check valid actions", None, True, valid_actions=actions
            )
        if listed is None and "look around" in lowered:
            return Outcome(state, self.describe(state), "look around", None, True)

        def executable(name: str) -> bool:
            return any(self.task.is_applicable(state, i) for i in self._by_schema.get(name, ()))

        reading = read_action(text, self._arity, executable, self._object_names)
        if isinstance(reading, str):
            return Outcome(state, UNREADABLE, "invalid", None, False, reading)
        schema = self._schema_of[reading[0]]
        args = tuple(self._object_of[o] for o in reading[1])
        index = self.task.action_index.get((schema, args))
        shown = self.words.action_text(schema, args)
        if index is None or not self._listed[index]:
            kind = "precondition" if index is not None or self.parser.types_fit(schema, args) else "type"
            return Outcome(state, NO_EFFECT, "invalid", shown, False, kind)
        if not self.task.is_applicable(state, index):
            return Outcome(state, NO_EFFECT, "invalid", shown, False, "precondition")
        return self._applied(state, index, mode)

    def _applied(self, state: int, index: int, mode: str) -> Outcome:
        """An applicable action taken: invalid if it changes nothing, as AgentBoard counts a no-op."""
        action = self.task.actions[index]
        shown = self.words.action_text(action.schema, action.args)
        after = self.task.apply(state, index)
        if after == state:
            return Outcome(state, NO_EFFECT, "invalid", shown, False, "no_effect")
        return Outcome(after, self.observe(after, mode, before=state), "action", shown, True, cost=action.cost)


def _typed_key(text: str) -> str:
    """A text as typed back: case, surrounding space and a closing period do not matter."""
    return " ".join(text.lower().split()).rstrip(".").rstrip()


def condition_words(words: AgentBoardText, formula: Formula, true: bool = True) -> str:
    """A goal condition that is not a literal, in AgentBoard's wording of its atoms ("for every ball ?b:
    ?b at room2")."""
    op = formula.op
    if op == "atom":
        if formula.predicate == "=":
            return f"{formula.args[0]} is {'' if true else 'not '}{formula.args[1]}"
        text = words.atom_text((formula.predicate, formula.args))
        return text if true else "not " + text
    if op == "not":
        return condition_words(words, formula.parts[0], not true)
    if op in ("true", "false"):
        return "nothing is required" if (op == "true") == true else "it is impossible"
    if op in ("and", "or"):
        word = ("and" if op == "and" else "or") if true else ("or" if op == "and" else "and")
        inner = [condition_words(words, p, true) for p in formula.parts]
        return "(" + f" {word} ".join(inner) + ")" if len(inner) > 1 else "".join(inner)
    bound = ", ".join(f"{type_name} {name}" for name, type_name in formula.variables)
    inner = " and ".join(condition_words(words, p) for p in formula.parts)
    if (op == "forall") == true:
        return f"for every {bound}: {inner}"
    return f"there is {bound} such that {inner}" if true else f"no {bound} makes {inner}"


def agentboard_text_bound(task: LiftedTask, words: AgentBoardText) -> int:
    """An upper bound on any text AgentBoard's wording of a problem can produce, without grounding it
    (every type-compatible atom and action counted once, like `world.text_bound`)."""
    longest_name = max((len(name) for name, _ in task.objects), default=0)
    n_objects = len(task.objects)
    total = 512 + len(NO_EFFECT)
    for name, params in task.predicates:
        longest = len(words.predicates.get(name, name))
        total += n_objects ** len(params) * (longest + len(params) * (longest_name + 1) + 2)
    for schema in task.schemas:
        count = 1
        for t in schema.types:
            count *= max(1, len(task.objects_of(t)))
        longest = len(words.actions.get(schema.name, schema.name))
        total += count * (longest + len(schema.parameters) * (longest_name + 1) + 2)
    return total
