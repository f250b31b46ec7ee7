"""One problem in words: the pure text-level transition the environment wraps.

`World.step(state, text)` parses the text, checks it, applies it and says what happened, without any
state of its own; the environment only keeps the current state, the step count and the best progress.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from .action_parser import ActionParser, ParsedAction, ParseError
from .catalogue import load_task
from .goal_orders import GoalOrders, goal_orders
from .ground_task import ByteTable, Memo
from .grounding import (
    MAX_ATOMS,
    MAX_EXPLORED,
    MAX_GROUND_ACTIONS,
    GroundTask,
    bind,
    ground,
    holds,
    natural_key,
    set_bits,
)
from .pddl import LiftedTask, PDDLError, SizeLimitError
from .text import META_ACTIONS, TextTemplates, article, join_and, load_templates, tokens

__all__ = ["Outcome", "World"]

GOAL_REACHED = "The goal is reached."
#: Characters of full state descriptions a world keeps written (about 8 MB of text at most).
DESCRIBED_CHARS = 4_000_000
#: Action texts of the valid-action listings a world keeps, by state (references to texts it holds anyway).
LISTED_TEXTS = 1_000_000
#: Outcomes of listed actions a world keeps, by (state, action, observation mode), counted in characters of
#: their observations plus `KEPT_OUTCOME_OVERHEAD` each: a walk that comes back to a state steps by a look-up.
KEPT_OUTCOME_CHARS = 4_000_000
KEPT_OUTCOME_OVERHEAD = 100
#: The goal's text when the problem's goal is `(and)`: true in every state, so every episode is over at reset.
EMPTY_GOAL_TEXT = "The goal is empty: it holds in every state."


@dataclass(slots=True, frozen=True)  # shared: a listed action's outcome is kept and handed out again
class Outcome:
    state: int
    observation: str
    kind: str  # "action" | "check valid actions" | "look around" | "invalid"
    action: str | None  # canonical text of the action taken, if any
    valid: bool
    error: str | None = None  # parse error kind, "type" or "precondition" when invalid
    valid_actions: tuple[str, ...] | None = None
    cost: int = 0  # what the applied action cost (its `total-cost` increase, or 1 without action costs)


class World:
    """A grounded problem with its text: observations, goal, valid actions and the text transition."""

    def __init__(
        self,
        task: LiftedTask,
        templates: TextTemplates,
        name: str | None = None,
        *,
        max_ground_actions: int = MAX_GROUND_ACTIONS,
        max_atoms: int = MAX_ATOMS,
        max_explored: int = MAX_EXPLORED,
    ):
        self.lifted = task
        self.task: GroundTask = ground(task, max_ground_actions=max_ground_actions, max_atoms=max_atoms,
                                       max_explored=max_explored)
        self.templates = templates
        self.parser = ActionParser(task, templates)
        self.name = name or task.problem_name
        self._action_texts = tuple(templates.action_text(a.schema, a.args) for a in self.task.actions)
        # Written once: the sentences of every atom (true, false) and the goal.
        self._said = tuple(templates.sentence(atom) for atom in self.task.atoms)
        self._said_dot = tuple(sentence + "." for sentence in self._said)
        # False-form sentences are written to follow "Cannot ...:", so they may start in lower case; as a
        # sentence of their own they start with a capital unless they start with an object's name.
        names = {name for name, _ in task.objects} | {name for name, _ in task.predicates}
        self._unsaid = tuple(
            _capitalised(templates.sentence(atom, true=False), names) for atom in self.task.atoms
        )
        conditions = [templates.sentence((n, args), true=positive) for n, args, positive in task.goal] + [
            templates.condition(formula) for formula in task.goal_conditions
        ]
        self._goal_text = (
            "The goal is to satisfy the following conditions: " + ", ".join(conditions) + "."
            if conditions else EMPTY_GOAL_TEXT
        )
        self._shown = ~self.task.hidden
        # A state's sentences joined one byte of the state at a time (`ByteTable`): a few look-ups.
        self._unsaid_dot = tuple(sentence + "." for sentence in self._unsaid)
        self._said_table = ByteTable(self._said_dot, " ".join)
        #: Full descriptions by state, up to `DESCRIBED_CHARS` characters in all; listings, `LISTED_TEXTS`.
        self._described = Memo(DESCRIBED_CHARS)
        self._listed = Memo(LISTED_TEXTS)
        self._stepped: dict[tuple[int, int, str], Outcome] = {}
        self._stepped_left = KEPT_OUTCOME_CHARS
        # The words of each action's own text -> the action, so the texts `valid_actions` lists skip the
        # fuzzy parser (which sees only these words, so the result is the same). A listed action wins over
        # a meta-action its words contain ("stack look around" with objects look and around); texts that
        # are exactly a meta-action, or read as more than one action, are left to the parser.
        canonical: dict[str, int | None] = {}
        for index, text in enumerate(self._action_texts):
            words = " ".join(tokens(text))
            canonical[words] = None if words in canonical else index
        self._canonical = {
            words: index
            for words, index in canonical.items()
            if index is not None and words not in (*META_ACTIONS, "valid actions")
        }
        self._exact = {self._action_texts[index]: index for index in self._canonical.values()}

    @classmethod
    def load(cls, domain_file: str | Path, problem_file: str | Path, text_file: str | Path | None = None) -> World:
        task = load_task(domain_file, problem_file)
        if text_file is None:
            candidate = Path(domain_file).with_name("text.toml")
            text_file = candidate if candidate.is_file() else None
        return cls(task, load_templates(task, text_file), Path(problem_file).stem)

    # ---- text of states ----------------------------------------------------------------------

    @property
    def after_action(self) -> str:
        """What an observation after an action shows by default: "full" or "changes"."""
        return self.templates.after_action

    @property
    def initial_state(self) -> int:
        return self.task.init

    @cached_property
    def goal_orders(self) -> GoalOrders:
        """Which goal conditions come before which (`goal_orders.py`): a chosen subgoal's candidates leave
        out the ones not yet worth making true. Found once a world, on first use."""
        return goal_orders(self.task)

    def describe(self, state: int) -> str:
        """The full state: one sentence per true atom, in atom order; in the compact layout the objects by
        kind, the fixed facts and the current state, each a paragraph."""
        if self.templates.layout == "compact":
            return "\n".join(part for part in (*self._introduction, self.describe_current(state)) if part)
        text = self._described.get(state)
        if text is None:  # states recur (an agent's detours, a walk's): each is written once
            sentences = self._said_table.parts(state & self._shown)
            text = " ".join(sentences) if sentences else "Nothing is true."
            self._described.keep(state, text)
        return text

    def describe_current(self, state: int) -> str:
        """The facts of `state` an action can change (compact layout: grouped into list sentences)."""
        text = self._grouped(state & self.fluent_mask)
        return "Current state: " + (text or "none of the facts that can change holds.")

    @cached_property
    def _kinds(self) -> dict[str, list[str]]:
        """Kind noun (plural) -> objects, for the compact layout's first paragraph: each object under its
        own type's nouns, or under a unary predicate of `[types]` that holds of it at the start."""
        kinds: dict[str, tuple[tuple[str, str], list[str]]] = {}
        by_predicate = {name: nouns for name, nouns in self.templates.types.items() if name in self._kind_predicates}
        for obj, type_name in self.lifted.objects:
            nouns = next((n for pred, n in by_predicate.items() if (pred, (obj,)) in self.lifted.init), None)
            if nouns is None:
                if type_name == "object" and "object" not in self.templates.types and by_predicate:
                    nouns = ("other object", "other objects")
                else:
                    nouns = self.templates.types.get(type_name, (type_name, type_name + "s"))
            kinds.setdefault(nouns[1], (nouns, []))[1].append(obj)
        # kinds in the order `[types]` gives them, objects by name (b2 before b10)
        rank = {nouns[1]: i for i, nouns in enumerate(self.templates.types.values())}
        ordered = sorted(kinds.items(), key=lambda item: rank.get(item[0], len(rank)))
        return {(nouns[0] if len(objs) == 1 else nouns[1]): sorted(objs, key=natural_key)
                for _, (nouns, objs) in ordered}

    @cached_property
    def _introduction(self) -> tuple[str, str]:
        """The compact layout's first two paragraphs: the objects by kind and the facts no action changes."""
        kinds = [f"{noun} {join_and(objs)}" for noun, objs in self._kinds.items()]
        objects = "Objects: " + "; ".join(kinds) + "." if kinds else ""
        fixed_mask = self.task.init & ~self.fluent_mask & self._shown
        for i in set_bits(fixed_mask):
            if self.task.atoms[i][0] in self._kind_predicates:
                fixed_mask &= ~(1 << i)
        fixed = " ".join(part for part in (self._grouped(fixed_mask), self._function_values(), self._action_costs())
                         if part)
        return objects, ("Fixed facts: " + fixed if fixed else "")

    def _action_costs(self) -> str:
        """What each kind of action costs, where the domain has action costs and every action of the kind
        costs the same ("What actions cost: move 1, push-to-goal 1 and push-to-nongoal 1."); a kind whose
        cost varies is priced by its function's values, said beside."""
        if not self.task.costs:
            return ""
        costs: dict[str, set[int]] = {}
        for action in self.task.actions:
            costs.setdefault(action.schema, set()).add(action.cost)
        fixed = [f"{schema} {next(iter(found))}" for schema, found in costs.items() if len(found) == 1]
        return f"What actions cost: {join_and(fixed)}." if fixed else ""

    def _function_values(self) -> str:
        """The numeric functions' values (they never change in classical PDDL), function by function: as
        `[functions]` words them, else plainly ("road-length of a and b is 3")."""
        by_function: dict[str, list[tuple[str, ...]]] = {}
        for name, args, value in self.lifted.values:
            shown = str(int(value)) if float(value).is_integer() else str(value)
            by_function.setdefault(name, []).append((*args, shown))
        parts: list[str] = []
        for name, params in self.lifted.functions:
            facts = by_function.get(name)
            if not facts:
                continue
            form = self.templates.functions.get(name)
            if form is None:
                items = [f"{join_and(list(f[:-1])) or name} is {f[-1]}" for f in facts]
                parts.append(f"Values of {name}: {'; '.join(items)}.")
            else:
                parts.extend(_capitalised(t, self._names) + "." for t in form.sentences((*params, "value"), facts))
        return " ".join(parts)

    def _grouped(self, mask: int) -> str:
        """The atoms of `mask` in words, predicate by predicate in the domain's order: a `[lists]` predicate's
        facts as its list sentences, any other's a sentence each."""
        by_predicate: dict[str, list[int]] = {}
        for i in set_bits(mask):
            by_predicate.setdefault(self.task.atoms[i][0], []).append(i)
        parts: list[str] = []
        for name in self._predicate_order:
            indices = by_predicate.get(name)
            if not indices:
                continue
            form = self.templates.lists.get(name)
            if form is None:
                parts.extend(self._said_cap[i] for i in indices)
            else:
                facts = [self.task.atoms[i][1] for i in indices]
                parts.extend(_capitalised(t, self._names) + "." for t in form.sentences(self.templates.params(name), facts))
        return " ".join(parts)

    @cached_property
    def _said_cap(self) -> tuple[str, ...]:
        """The compact layout's sentences of true atoms as sentences of their own: a capital first letter
        unless they start with a name (the public four's text keeps its sentences as written)."""
        return tuple(_capitalised(sentence, self._names) for sentence in self._said_dot)

    @cached_property
    def _kind_predicates(self) -> frozenset[str]:
        """The one-place predicates `[types]` reads as kinds (an untyped domain's `(truck ?t)`): an object
        is listed under the first that holds of it, and their facts are not said again. A kind must never
        change, or the first paragraph would go stale."""
        types = {t for _, t in self.lifted.objects} | set(self.lifted.supertypes)
        names = frozenset(n for n in self.templates.types if n not in types)
        for i in set_bits(self.fluent_mask):
            if self.task.atoms[i][0] in names:
                raise PDDLError(f"[types] reads {self.task.atoms[i][0]!r} as a kind, but an action changes it",
                                self.templates.source)
        return names

    @cached_property
    def _predicate_order(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.lifted.predicates)

    @cached_property
    def _names(self) -> set[str]:
        return {name for name, _ in self.lifted.objects} | {name for name, _ in self.lifted.predicates}

    def describe_changes(self, before: int, after: int) -> str:
        added = after & ~before & self._shown
        removed = before & ~after & self._shown
        # an action changes a few atoms: their bits are fewer than the state's bytes, so no table here
        said = self._said_cap if self.templates.layout == "compact" else self._said_dot
        parts = [said[i] for i in set_bits(added)]
        parts += [self._unsaid_dot[i] for i in set_bits(removed)]
        return " ".join(parts) if parts else "Nothing changed."

    def goal_text(self) -> str:
        return self._goal_text

    def action_text(self, index: int) -> str:
        return self._action_texts[index]

    def action_of(self, schema: str, args: tuple[str, ...] | list[str]) -> int | None:
        """The ground action `(schema args)`, matched without case as PDDL names are; None if there is none.

        Planners and plan files write names in lower case while the task keeps the case of the file.
        """
        index = self.task.action_index.get((schema, tuple(args)))
        if index is None:
            index = self._folded_action_index.get((schema.lower(), tuple(a.lower() for a in args)))
        return index

    @cached_property
    def _folded_action_index(self) -> dict[tuple[str, tuple[str, ...]], int]:
        """Built on the first lookup that misses the exact index (most plans never need it)."""
        return {(s.lower(), tuple(a.lower() for a in args)): i for (s, args), i in self.task.action_index.items()}

    def valid_actions(self, state: int) -> list[str]:
        """Executable actions in the task's fixed action order, each in the form the parser accepts."""
        listed = self._listed.get(state)
        if listed is None:  # each state's listing is written once (up to `LISTED_TEXTS` texts in all)
            listed = tuple(self._action_texts[i] for i in self.task.applicable(state))
            self._listed.keep(state, listed)
        return list(listed)

    @cached_property
    def fluent_mask(self) -> int:
        """The atoms some action adds or deletes, or derived atoms (the rest, such as "ball1 is a ball", never
        change)."""
        mask = self.task.derived
        for action in self.task.actions:
            mask |= action.add | action.delete
            for effect in action.conditional:
                mask |= effect.add | effect.delete
        return mask & self._shown

    def observe(self, state: int, mode: str, before: int | None = None) -> str:
        """The observation of `state`: everything at reset (`before` None); after an action, by `mode`,
        everything ("full"), every fact an action can change ("fluents": the facts that never change were
        in the first observation), or what changed ("changes")."""
        if before is None:
            text = self.describe(state)
        elif self.templates.layout == "compact" and mode != "changes":  # objects and fixed facts were said
            text = self.describe_current(state)
        elif mode == "full":
            text = self.describe(state)
        elif mode == "fluents":
            text = self.describe(state & self.fluent_mask)
        else:
            text = self.describe_changes(before, state)
        return text + (" " + GOAL_REACHED if self.task.is_goal(state) else "")

    # ---- the transition ----------------------------------------------------------------------

    def step(self, state: int, text: str, mode: str) -> Outcome:
        """Parse and apply `text`; an invalid text leaves `state` unchanged and explains why."""
        text = text if isinstance(text, str) else str(text)
        known = self._exact.get(text)
        if known is None:
            known = self._canonical.get(" ".join(tokens(text)))
        if known is not None:
            kept = self._stepped.get((state, known, mode))
            if kept is not None:
                return kept
            if self.task.is_applicable(state, known):  # a listed action's text: no parsing to do
                after = self.task.apply(state, known)
                outcome = Outcome(after, self.observe(after, mode, before=state), "action",
                                  self._action_texts[known], True, cost=self.task.actions[known].cost)
                cost = len(outcome.observation) + KEPT_OUTCOME_OVERHEAD
                if cost <= self._stepped_left:
                    self._stepped[(state, known, mode)] = outcome
                    self._stepped_left -= cost
                return outcome
            parsed = ParsedAction(self.task.actions[known].schema, self.task.actions[known].args)
        else:
            parsed = self.parser.parse(text)
        if isinstance(parsed, ParseError):
            return Outcome(state, parsed.message, "invalid", None, False, parsed.kind)
        if parsed.meta == "check valid actions":
            actions = tuple(self.valid_actions(state))
            message = "Valid actions are: " + ", ".join(actions) + "." if actions else "No action is executable."
            return Outcome(state, message, parsed.meta, None, True, valid_actions=actions)
        if parsed.meta == "look around":
            return Outcome(state, self.observe(state, "full"), parsed.meta, None, True)
        index = known if known is not None else self.task.action_index.get((parsed.schema, parsed.args))
        canonical = self._action_texts[index] if index is not None else self.templates.action_text(
            parsed.schema, parsed.args
        )
        if index is None or not self.task.is_applicable(state, index):
            message = explain_inapplicable(self.task, self.templates, parsed.schema, parsed.args, state)
            wrong_type = index is None and not self.parser.types_fit(parsed.schema, parsed.args)
            kind = "type" if wrong_type else "precondition"
            return Outcome(state, message, "invalid", canonical, False, kind)
        after = self.task.apply(state, index)
        return Outcome(after, self.observe(after, mode, before=state), "action", canonical, True,
                       cost=self.task.actions[index].cost)


def explain_inapplicable(
    task: GroundTask, templates: TextTemplates, schema_name: str, args: tuple[str, ...], state: int
) -> str:
    """'Cannot stack b1 on b2: b2 is not clear.' Type mismatches are reported before preconditions."""
    schema = next(s for s in task.lifted.schemas if s.name == schema_name)
    action = templates.action_text(schema_name, args)
    types = dict(task.lifted.objects)
    problems: list[str] = []
    for obj, type_name in zip(args, schema.types):
        if type_name not in task.lifted.supertypes.get(types[obj], (types[obj],)):
            problems.append(f"{obj} is {article(types[obj])} {types[obj]}, not {article(type_name)} {type_name}")
    unchecked: list[str] = []  # conditions over too many bindings to test one by one (`MAX_QUANTIFIED`)
    if not problems:
        for lit in schema.preconditions:
            atom = bind(lit, args)
            if task.holds(state, atom) != lit.positive:
                problems.append(templates.sentence(atom, true=not lit.positive))
        binding = {"?" + name: value for name, value in zip(schema.parameters, args)}
        for formula in schema.conditions:
            try:
                if not holds(task, formula, state, binding):
                    problems.append("it is not true that " + templates.condition(formula, binding))
            except SizeLimitError:
                unchecked.append(templates.condition(formula, binding))
        if task.costs and schema.cost_function is not None:
            name, slots = schema.cost_function
            term = (name, tuple(args[a] if isinstance(a, int) else a for a in slots))
            if term not in {(function, given) for function, given, _ in task.lifted.values}:
                problems.append(f"the problem gives ({' '.join((term[0], *term[1]))}), this action's cost, no value")
    if not problems and unchecked:  # the action is not applicable, so one of these fails
        problems.append("it is not true that " + unchecked[0] if len(unchecked) == 1
                        else "one of these does not hold: " + "; ".join(unchecked))
    if not problems:  # cannot happen for a well-formed task; say something true rather than nothing
        problems.append("its preconditions do not hold")
    return f"Cannot {action}: {join_and(problems)}."


def text_bound(task: LiftedTask, templates: TextTemplates) -> int:
    """An upper bound on the length of any text a problem can produce, computed without grounding.

    Counts every type-compatible atom and action, so it is loose but cheap: it sizes the observation
    space from the largest problem of a split without grounding them all.
    """
    longest_name = max((len(name) for name, _ in task.objects), default=0)
    n_objects = len(task.objects)
    total = 512
    for name, params in task.predicates:
        longest = max(len(s) for s in templates.predicates[name])
        total += n_objects ** len(params) * (longest + len(params) * longest_name + 2)
    for schema in task.schemas:
        count = 1
        for t in schema.types:
            count *= max(1, len(task.objects_of(t)))
        longest = max(len(p.template) for p in templates.actions[schema.name])
        total += count * (longest + len(schema.parameters) * longest_name + 2)
    total += 2 * n_objects * (longest_name + 2) + sum(len(p[0].template) + 2 for p in templates.actions.values())
    return total


def _capitalised(text: str, names: set[str]) -> str:
    """Capital first letter, unless the sentence starts with a PDDL name (an object or a predicate)."""
    first = text.split(" ", 1)[0].rstrip(",.;:!?")  # "hoist0, hoist1 and hoist2 are free": hoist0
    return text if not text or first in names else text[0].upper() + text[1:]
