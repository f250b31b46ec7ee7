"""Natural language out: sentence templates, action phrasings, and the character set (the parser that reads
text back is `action_parser`).

Each domain folder may hold a `text.toml` with one sentence pair per predicate (how it reads when true, and
when false) and one or more phrasings per action; the first phrasing is how the environment writes the
action, the others are also accepted. Placeholders are the PDDL parameter names: `stack {ob} on {underob}`.
Whatever a domain leaves out falls back to the bare PDDL form, so any STRIPS domain works without text.

A domain may also choose the compact layout (`layout = "compact"`, what the catalogue's worlds use): the
objects are named once by kind (`[types]`: a noun pair per type, or per unary predicate that never changes,
as untyped domains declare kinds), the facts no action changes are said once in their own paragraph, and
many facts of one predicate read as one sentence (`[lists]`: "At depot1: truck1, crate2 and crate3.") rather
than one sentence each; the values of numeric functions (road lengths an action costs) are said with the
fixed facts (`[functions]`, list sentences whose items may use `{value}`). See `ListForm` and docs/catalogue.md ("Writing a world's text").
"""

from __future__ import annotations

import re
import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .compact import ListForm, read_list, read_types
from .grounding import Atom
from .names import generic_sentences, starter_text
from .pddl import Formula, LiftedTask, PDDLError, read_pddl_text
from .sexpr import line_of_form
from .wording import SLOT, article, fill, join_and, quoted, tokens

__all__ = [
    "CHARSET",
    "LAYOUTS",
    "META_ACTIONS",
    "OBSERVATION_MODES",
    "ListForm",
    "TextTemplates",
    "article",
    "fill",
    "generic_sentences",
    "join_and",
    "load_templates",
    "quoted",
    "starter_text",
    "tokens",
]

#: Every character the environments read or write. Object names, templates and messages must stay inside it.
CHARSET = string.ascii_letters + string.digits + " \n.,:;!?'\"()[]{}<>-_/+=*#&%$@|~^`"

#: What an observation after an action shows: every true fact, every true fact an action can change (those
#: that never change were in the first observation), or what the action changed.
OBSERVATION_MODES = ("full", "fluents", "changes")
META_ACTIONS = ("check valid actions", "look around")
#: How a state reads: a sentence per true fact ("sentences", the four public worlds'), or objects by kind,
#: fixed facts once and facts grouped into list sentences ("compact"; see the module docstring).
LAYOUTS = ("sentences", "compact")



@dataclass(frozen=True)
class Phrase:
    """One phrasing of an action: literal words and the parameter index of each slot, in text order."""

    template: str
    words: tuple[str, ...]
    slots: tuple[int, ...]


@dataclass
class TextTemplates:
    """The text of one domain: sentences for predicates, phrases for actions."""

    predicates: dict[str, tuple[str, str]]
    actions: dict[str, tuple[Phrase, ...]]
    after_action: str = "full"
    source: str = "<generic>"
    _param_names: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    #: "sentences" or "compact" (`LAYOUTS`).
    layout: str = "sentences"
    #: The compact layout's kinds: a type's (or a unary predicate's) name -> (singular, plural) noun.
    types: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: The compact layout's list sentences, by predicate.
    lists: dict[str, ListForm] = field(default_factory=dict)
    #: The compact layout's sentences of numeric functions' values (road lengths...), by function; their
    #: items may use `{value}`. A function left out is said in a plain form.
    functions: dict[str, ListForm] = field(default_factory=dict)

    def params(self, predicate: str) -> tuple[str, ...]:
        """A predicate's parameter names, as its templates name their slots."""
        return self._param_names[predicate]

    def sentence(self, atom: Atom, true: bool = True) -> str:
        name, args = atom
        if name not in self.predicates:  # a helper atom of the translator's: no text of its own
            bare = " ".join((name, *args))
            return bare + (" holds" if true else " does not hold")
        template = self.predicates[name][0 if true else 1]
        return fill(template, dict(zip(self._param_names[name], args)))

    def condition(self, formula: Formula, binding: dict[str, str] | None = None, true: bool = True) -> str:
        """A non-literal condition in words, atoms in their sentences: "for every ball ?b: ?b is not ..."."""
        binding = binding or {}
        op = formula.op
        if op == "atom":
            args = tuple(binding.get(a, a) for a in formula.args)
            if formula.predicate == "=":
                return f"{args[0]} is {'' if true else 'not '}{args[1]}"
            return self.sentence((formula.predicate, args), true=true)
        if op == "not":
            return self.condition(formula.parts[0], binding, not true)
        if op in ("true", "false"):
            return "nothing is required" if (op == "true") == true else "it is impossible"
        if op in ("and", "or"):
            word = ("and" if op == "and" else "or") if true else ("or" if op == "and" else "and")
            inner = [self.condition(p, binding, true) for p in formula.parts]
            return "(" + f" {word} ".join(inner) + ")" if len(inner) > 1 else "".join(inner)
        bound = ", ".join(f"{type_name} {name}" for name, type_name in formula.variables)
        inner = " and ".join(self.condition(p, binding) for p in formula.parts)
        if (op == "forall") == true:
            return f"for every {bound}: {inner}"
        return f"there is {article(bound)} {bound} such that {inner}" if true else f"no {bound} makes {inner}"

    def action_text(self, schema: str, args: tuple[str, ...]) -> str:
        phrase = self.actions[schema][0]
        out = phrase.template
        names = self._param_names["action:" + schema]
        return fill(out, dict(zip(names, args)))

    def signature(self, schema: str) -> str:
        """The canonical phrase with its placeholders, e.g. `stack <ob> on <underob>`."""
        return re.sub(r"\{([^{}]+)\}", r"<\1>", self.actions[schema][0].template)


def _phrase(template: str, params: tuple[str, ...], where: str) -> Phrase:
    names = SLOT.findall(template)
    if sorted(names) != sorted(params):
        raise PDDLError(f"{where}: template {template!r} must use each of {{{'}, {'.join(params)}}} once")
    if "," in template:
        raise PDDLError(f"{where}: action templates may not contain ',' (it separates listed actions)")
    words = tuple(w for w in tokens(SLOT.sub(" ", template)))
    return Phrase(template, words, tuple(params.index(n) for n in names))


def load_templates(task: LiftedTask, path: str | Path | None = None) -> TextTemplates:
    """Templates for `task` from `path` (TOML), with the bare PDDL form for anything not given."""
    data: dict = {}
    source = "<generic>"
    if path is not None:
        source = str(path)
        if not Path(path).is_file():
            raise PDDLError("text file not found (text_file must name an existing text.toml)", path)
        try:
            data = tomllib.loads(read_pddl_text(path))
        except tomllib.TOMLDecodeError as exc:
            raise PDDLError(f"invalid TOML: {exc}", path) from exc
    pred_text = data.get("predicates", {})
    action_text = data.get("actions", {})
    layout = data.get("layout", "sentences")
    if layout not in LAYOUTS:
        raise PDDLError(f"layout must be one of {LAYOUTS}, not {layout!r}", path)
    after = data.get("after_action", "changes" if layout == "compact" else "full")
    if after not in OBSERVATION_MODES:
        raise PDDLError(f"after_action must be one of {OBSERVATION_MODES}, not {after!r}", path)
    unknown_keys = set(data) - {"layout", "after_action", "predicates", "actions", "types", "lists", "functions"}
    if unknown_keys:
        raise PDDLError(f"unknown key(s) {', '.join(sorted(unknown_keys))}; a text file holds layout, "
                        "after_action, [predicates], [actions], [types], [lists] and [functions]", path)
    if layout != "compact" and (data.get("types") or data.get("lists") or data.get("functions")):
        raise PDDLError('[types], [lists] and [functions] are read in the compact layout only: add '
                        'layout = "compact"', path)
    known_preds = {name for name, _ in task.predicates}
    known_actions = {s.name for s in task.schemas}
    for name in pred_text:
        if name not in known_preds:
            raise PDDLError(f"[predicates] names unknown predicate {name!r}", path)
    for name in action_text:
        if name not in known_actions:
            raise PDDLError(f"[actions] names unknown action {name!r}", path)

    param_names: dict[str, tuple[str, ...]] = {}
    predicates: dict[str, tuple[str, str]] = {}
    for name, params in task.predicates:
        param_names[name] = params
        if name in pred_text:
            pair = pred_text[name]
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) for s in pair)):
                raise PDDLError(f"[predicates] {name}: expected [true sentence, false sentence]", path)
            for sentence in pair:
                if sorted(SLOT.findall(sentence)) != sorted(params):
                    raise PDDLError(f"[predicates] {name}: {sentence!r} must use each of {params} once", path)
            predicates[name] = (pair[0], pair[1])
        else:
            predicates[name] = generic_sentences(name, params)

    actions: dict[str, tuple[Phrase, ...]] = {}
    for schema in task.schemas:
        param_names["action:" + schema.name] = schema.parameters
        given = action_text.get(schema.name, [])
        given = [given] if isinstance(given, str) else list(given)
        bare = " ".join([schema.name, *("{" + p + "}" for p in schema.parameters)])
        where = f"{path}: [actions] {schema.name}"
        actions[schema.name] = tuple(_phrase(t, schema.parameters, where) for t in (given or [bare]))
    types = read_types(data.get("types", {}), task, path)
    unknown = [name for name in data.get("lists", {}) if name not in known_preds]
    if unknown:
        raise PDDLError(f"[lists] names unknown predicate {unknown[0]!r}", path)
    lists = {name: read_list(name, spec, param_names[name], path) for name, spec in data.get("lists", {}).items()}
    function_params = dict(task.functions)
    functions = {}
    for name, spec in data.get("functions", {}).items():
        if name not in function_params:
            raise PDDLError(f"[functions] names unknown function {name!r}; functions: "
                            f"{', '.join(function_params) or 'none (total-cost is never said)'}", path)
        functions[name] = read_list(name, spec, (*function_params[name], "value"), path, "[functions]")
    templates = TextTemplates(predicates, actions, after, source, param_names, layout, types, lists, functions)
    _check_charset(templates, task, path)
    return templates


def _check_names(task: LiftedTask) -> None:
    """The PDDL names a text shows (objects, predicates, actions) written in `CHARSET` and without `,` (which
    separates listed actions); refused naming the PDDL file and line, not the text file."""
    allowed = set(CHARSET) - {","}
    names = [("object", name) for name, _ in task.objects] + [("predicate", name) for name, _ in task.predicates]
    names += [("action", schema.name) for schema in task.schemas]
    for what, name in names:
        bad = set(name) - allowed
        if not bad:
            continue
        path, line = None, None
        for side in (1, 0):  # an object is the problem's, else a constant of the domain's
            tree = task.source[side] if len(task.source) > side else None
            line = line_of_form(tree, name) if tree else None
            if line is not None or (side == 0 and task.files[side]):
                path = task.files[side] or None
                break
        raise PDDLError(f"the {what} name {name!r} uses {', '.join(map(repr, sorted(bad)))}: names are written in "
                        "ASCII letters, digits and punctuation, without ',' (which separates listed actions)",
                        path, line)


def _check_charset(templates: TextTemplates, task: LiftedTask, path) -> None:
    _check_names(task)
    allowed = set(CHARSET)
    texts = [("object name", name) for name, _ in task.objects]
    texts += [("sentence", s) for pair in templates.predicates.values() for s in pair]
    texts += [("action phrase", p.template) for phrases in templates.actions.values() for p in phrases]
    texts += [("type noun", noun) for pair in templates.types.values() for noun in pair]
    texts += [("list sentence", t) for form in (*templates.lists.values(), *templates.functions.values())
              for t in (form.one, form.many, form.item)]
    for what, text in texts:
        bad = set(text) - allowed
        if bad:
            raise PDDLError(f"{what} {text!r} uses characters outside the charset: {sorted(bad)}", path)


