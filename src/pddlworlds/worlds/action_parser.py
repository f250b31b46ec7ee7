"""Free text into an action: the tolerant parser every world reads an agent's text with.

A schema is recognised by the words of its phrasings (`text.TextTemplates`) or its PDDL name, filler words
weighing little; objects are the words that name objects, mapped onto the phrase's slots in text order. The
bare PDDL form `stack b1 b2` or `(stack b1 b2)` always works; a negated instruction is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from .grounding import natural_key
from .pddl import LiftedTask, Schema
from .text import META_ACTIONS, Phrase, TextTemplates
from .wording import SLOT, quoted, tokens

__all__ = ["FILLER_WORDS", "NEGATION_WORDS", "ActionParser", "ParseError", "ParsedAction"]

#: Words that carry no meaning of their own in an action phrase; they weigh little when matching.
FILLER_WORDS = frozenset(
    ["a", "an", "the", "to", "from", "on", "in", "into", "of", "at", "with", "and", "by", "for", "using", "use", "i", "will", "now", "then", "please", "action", "it", "its", "is", "while"]
)
#: Words that turn an instruction into its opposite ("do not unstack b2 from b3"); such text is refused.
NEGATION_WORDS = frozenset({
    "not", "never", "dont", "don", "doesnt", "doesn", "cannot", "shouldnt", "shouldn", "mustnt", "mustn",
})


@dataclass(frozen=True)
class ParsedAction:
    """A parsed command: a meta-action (`meta` set) or a schema with its arguments."""

    schema: str | None = None
    args: tuple[str, ...] = ()
    meta: str | None = None


@dataclass(frozen=True)
class ParseError:
    """Why a text is not an action, in words the agent can act on."""

    kind: str  # "empty" | "unknown_verb" | "unknown_object" | "wrong_arity" | "ambiguous" | "negated"
    message: str


class ActionParser:
    """Turn free text into a (schema, args) pair, tolerating case, punctuation and filler words.

    A schema is recognised by the words of its phrasings (or its PDDL name), weighed so that filler words
    count little; objects are the words that name objects, taken in text order and mapped onto the
    phrase's slots. The bare PDDL form `stack b1 b2` or `(stack b1 b2)` always works.
    """

    def __init__(self, task: LiftedTask, templates: TextTemplates):
        self.task = task
        self.templates = templates
        self.objects = {name: t for name, t in task.objects}
        self.schemas = {s.name: s for s in task.schemas}
        self._keywords: dict[str, list[tuple[Phrase, frozenset[str]]]] = {}
        for schema in task.schemas:
            name_words = frozenset(w for w in schema.name.lower().split("-") if w)
            self._keywords[schema.name] = [
                (p, frozenset(p.words) | name_words) for p in templates.actions[schema.name]
            ]
        # Each phrasing, and the bare PDDL form, as words and parameter indices in text order.
        self._patterns: list[tuple[str, tuple[str | int, ...]]] = []
        for schema in task.schemas:
            bare = [schema.name.lower(), *(i for i in range(len(schema.parameters)))]
            self._patterns.append((schema.name, tuple(t for item in bare for t in _split(item))))
            for phrase in templates.actions[schema.name]:
                pieces = SLOT.split(phrase.template)  # literal, slot name, literal, ...
                pattern: list[str | int] = []
                for i, piece in enumerate(pieces):
                    pattern.extend([schema.parameters.index(piece)] if i % 2 else tokens(piece))
                self._patterns.append((schema.name, tuple(pattern)))
        self._phrase_words = {w for phrasings in self._keywords.values() for _, words in phrasings for w in words}

    @staticmethod
    def _weight(word: str) -> int:
        # Integers, so that the score does not depend on the (hash-seeded) order a set is summed in:
        # float sums of 0.1s did, and tied phrasings then split differently from run to run.
        return 1 if word in FILLER_WORDS else 10

    def parse(self, text: str) -> ParsedAction | ParseError:
        words = tokens(text)
        if not words:
            return ParseError("empty", "The action is empty. " + self.verbs_hint())
        joined = " ".join(words)
        shown = quoted(joined)
        negation = self._negation(words)
        if negation is not None:
            return ParseError(
                "negated",
                f"The action {shown} is negated ({negation!r}): write the one action to take, "
                "not one to avoid. Nothing was done.",
            )
        exact = self._exact_phrase(words)
        if exact is not None:  # an action written exactly as listed wins over a meta-action it contains
            return exact
        for meta in META_ACTIONS:
            # "check", "check actions", "check valid action": AgentBoard's prompts and models write these too.
            checking = meta == "check valid actions" and ("valid actions" in joined or words[0] == "check")
            if meta in joined or checking:
                return ParsedAction(meta=meta)
        # Bare PDDL: the first word is an action name, then the objects in parameter order. A phrasing
        # that starts with the action's name ("grasp shot1 with left") is read as a phrasing instead when
        # the bare reading gets the types wrong.
        by_name = {s.lower(): s for s in self.schemas}
        if words[0] in by_name:
            schema = self.schemas[by_name[words[0]]]
            rest = [w for w in words[1:] if w not in FILLER_WORDS or w in self.objects]
            bare = self._with_args(schema, tuple(range(len(schema.parameters))), rest, words[1:], shown)
            if not isinstance(bare, ParsedAction) or self.types_fit(bare.schema, bare.args):
                return bare
        # AgentBoard's phrasings name the PDDL action anywhere ("use hand right to empty-shot glass shot1 with
        # beverage ingredient3") with the objects in parameter order; a hyphenated name that is no word of a
        # phrasing decides at once, any other only where the phrasings read worse (below).
        named = self._named_reading(words)
        phrase_words = {w for phrasings in self._keywords.values() for phrase, _ in phrasings for w in phrase.words}
        if named is not None and "-" in named.schema and named.schema.lower() not in phrase_words:
            return named
        reading = self._phrase_reading(words, shown)
        fits = isinstance(reading, ParsedAction) and self.types_fit(reading.schema, reading.args)
        if named is not None and not fits:
            return named
        return reading

    def _named_reading(self, words: list[str]) -> ParsedAction | None:
        """The first word naming an action schema, then the objects in the order written, if they fit."""
        by_name = {s.lower(): s for s in self.schemas}
        name = next((by_name[w] for w in words if w in by_name), None)
        if name is None:
            return None
        objects = tuple(w for w in words if w in self.objects)
        if len(objects) != len(self.schemas[name].parameters) or not self.types_fit(name, objects):
            return None
        return ParsedAction(schema=name, args=objects)

    def _phrase_reading(self, words: list[str], shown: str) -> ParsedAction | ParseError:
        """The action whose phrasing's words the text shares most, objects mapped onto its slots."""
        present = set(words)
        best: list[tuple[float, int, str, Phrase]] = []
        for name, phrasings in self._keywords.items():
            for phrase, keywords in phrasings:
                # An object may share its name with a phrase word ("jack up the-hub1"): it counts as both.
                matched = sum(self._weight(w) for w in keywords if w in present)
                if matched < 10:
                    continue
                unmatched = sum(1 for w in keywords if w not in present and w not in FILLER_WORDS)
                best.append((matched, -unmatched, name, phrase))
        if not best:
            return ParseError("unknown_verb", f"Unknown action {shown}. " + self.verbs_hint())
        best.sort(key=lambda b: (b[0], b[1]), reverse=True)
        top = [b for b in best if (b[0], b[1]) == (best[0][0], best[0][1])]
        if len(top) > 1:
            # Equal words: prefer phrasings whose objects fit in number, then in type.
            fit = {id(b): self._fit(words, b[3], b[2]) for b in top}
            best_fit = max(fit.values())
            top = [b for b in top if fit[id(b)] == best_fit]
        if len({b[2] for b in top}) > 1:
            names = sorted({b[2] for b in top})
            options = " or ".join(self.templates.signature(n) for n in names)
            return ParseError("ambiguous", f"The action {shown} is ambiguous: did you mean {options}?")
        _, _, name, phrase = top[0]
        schema = self.schemas[name]
        keywords = dict(self._keywords[name])[phrase]
        leftovers = [w for w in words if w not in self.objects and w not in keywords and w not in FILLER_WORDS]
        return self._with_args(schema, phrase.slots, self._objects_for(words, phrase, name), leftovers, shown)

    def _exact_phrase(self, words: list[str]) -> ParsedAction | None:
        """The action whose phrasing `words` spell exactly, word for word, objects of the right types in
        the slots; None when no phrasing or more than one reading does."""
        if words[0] in self.objects and len(words) == 1:
            return None
        found = None
        for name, pattern in self._patterns:
            if len(pattern) != len(words):
                continue
            args = [""] * len(self.schemas[name].parameters)
            for item, word in zip(pattern, words):
                if isinstance(item, int) and word in self.objects:
                    args[item] = word
                elif item != word:
                    break
            else:
                if not self.types_fit(name, tuple(args)):
                    continue  # "grasp shot1 left" may still be a phrasing's reading, scored below
                if found is not None and found != (name, tuple(args)):
                    return None  # two readings: leave it to the scoring below
                found = (name, tuple(args))
        return None if found is None else ParsedAction(schema=found[0], args=found[1])

    def _negation(self, words: list[str]) -> str | None:
        """The first negating word that is neither an object's name nor a word of an action phrasing."""
        for word in words:
            if word in NEGATION_WORDS and word not in self.objects and word not in self._phrase_words:
                return word
        return None

    def _fit(self, words: list[str], phrase: Phrase, name: str) -> tuple[bool, bool]:
        """(right number of objects, every object of the right type) for reading `words` with `phrase`."""
        schema = self.schemas[name]
        objects = self._objects_for(words, phrase, name)
        if len(objects) != len(schema.parameters):
            return (False, False)
        args = [""] * len(objects)
        for obj, slot in zip(objects, phrase.slots):
            args[slot] = obj
        return (True, self.types_fit(name, tuple(args)))

    def types_fit(self, name: str, args: tuple[str, ...]) -> bool:
        supertypes = self.task.supertypes
        types = self.schemas[name].types
        return all(t in supertypes.get(self.objects[a], (self.objects[a],)) for a, t in zip(args, types))

    def _objects_for(self, words: list[str], phrase: Phrase, name: str) -> list[str]:
        """Object words in text order, minus those that serve as this phrase's words when too many."""
        objects = [w for w in words if w in self.objects]
        keywords = dict(self._keywords[name])[phrase]
        extra = len(objects) - len(self.schemas[name].parameters)
        for word in [w for w in objects if w in keywords]:
            if extra <= 0:
                break
            objects.remove(word)
            extra -= 1
        return objects

    def _with_args(self, schema: Schema, slots, object_words, leftovers, shown: str) -> ParsedAction | ParseError:
        arity = len(schema.parameters)
        names = [w for w in object_words if w in self.objects]
        unknown = [w for w in leftovers if w not in self.objects and w not in FILLER_WORDS]
        if len(names) < arity and unknown:
            return ParseError(
                "unknown_object",
                f"Unknown object {quoted(unknown[0], 50)} in {shown}. Objects are: "
                + ", ".join(sorted(self.objects, key=natural_key)) + ".",
            )
        if len(names) != arity:
            return ParseError(
                "wrong_arity",
                f"The action '{schema.name}' takes {arity} object{'s' if arity != 1 else ''} "
                f"({self.templates.signature(schema.name)}), but {len(names)} "
                f"{'were' if len(names) != 1 else 'was'} given in {shown}.",
            )
        args = [""] * arity
        for obj, slot in zip(names, slots):
            args[slot] = obj
        return ParsedAction(schema=schema.name, args=tuple(args))

    def verbs_hint(self) -> str:
        verbs = [self.templates.signature(s.name) for s in self.task.schemas]
        return "Actions are: " + ", ".join(verbs) + ", " + ", ".join(META_ACTIONS) + "."


def _split(item: str | int) -> list[str | int]:
    return [item] if isinstance(item, int) else tokens(item)
