"""When a new `Subgoal:` line restates the current subgoal, and when it names another one.

HiAgent folds a finished subgoal into a summary when the model states a new one, so this rule decides how
much of the prompt stays. Merging two distinct subgoals keeps pairs in the prompt that should have left it
(and summarises two subgoals as one); splitting a restatement costs one early summary. The rule therefore
refuses to merge whenever the two statements could mean different things, and accepts other wordings:

1. **Names must agree, in order.** The names a statement mentions (words with a digit, such as `b1`,
   `ball3`, `the-hub1`, `shot2`; single letters, such as the `b` of "room b", the article `a` only where no
   noun follows it; number words and ordinals, such as `two` or `second`; `left` and `right`), in order of
   first mention, must be the same sequence. So "move every ball to room b" is not "... to room a". So "change the wheel on the first hub"
   is not "... on the second hub", "stack b1 on b2" is not "stack b2 on b1", "pick up ball3" is not
   "pick up ball4". A leading discourse word ("First, ...", "Next ...") is not an ordinal.
2. **Names without digits must not clash.** Two other words that differ only in their last letter
   (`rooma` / `roomb`) are two objects, so statements that use one each are different.
3. **Negation must agree** ("b1 is not clear" is not "b1 is clear").
4. **The rest must say the same thing.** The remaining words, lower case, filler words dropped and common
   verbs and prepositions mapped to one word each, endings such as `-ed` cut (`grab`/`take`/`fetch` -> `pick`, `stack`/`place` -> `put`, `onto` -> `on`),
   must overlap with a Jaccard index of at least `SAME_SUBGOAL`: "clear b1" ~ "make b1 clear",
   "open the boot" ~ "Open boot.", "move ball1 to roomb" ~ "carry ball1 into roomb"; "fetch the tools" is
   not "get the jack".

The rule is symmetric, so the order in which two statements arrive does not matter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SAME_SUBGOAL", "SubgoalStatement", "read_statement", "same_subgoal"]

#: Minimum Jaccard index of the two statements' remaining words (rule 4).
SAME_SUBGOAL = 0.5

_FILLER = frozenset(
    ["a", "an", "the", "to", "of", "and", "then", "now", "so", "that", "is", "are", "be", "been", "being", "it", "its", "this", "these", "those", "all", "both", "each", "make", "sure", "ensure", "get", "have", "has", "having", "will", "should", "must", "can", "we", "i", "you", "my", "our", "by", "using", "use", "with"]
)
# Words that open a statement as a discourse marker rather than as an ordinal of an object.
_DISCOURSE = frozenset(["first", "next", "then", "now", "finally", "lastly", "afterwards"])
_NUMBERS = {
    w: str(i)
    for i, w in enumerate(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
    )
}
_ORDINALS = frozenset(
    ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth", "last", "1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th", "9th", "10th"]
)
_SIDES = frozenset({"left", "right"})
_NEGATIONS = frozenset({"not", "no", "never", "without", "nothing", "none", "isn't", "aren't", "don't"})
# Other words for one thing, mapped to one of them (verbs of the four domains' actions, and prepositions).
_CANONICAL = {
    **dict.fromkeys(["grab", "take", "fetch", "lift", "picking", "picked", "pick"], "pick"),
    **dict.fromkeys(["place", "set", "putting", "put", "stacked", "stacking", "stack"], "put"),
    **dict.fromkeys(["release", "dropping", "dropped", "drop"], "drop"),
    **dict.fromkeys(["go", "walk", "moving", "moved", "move"], "move"),
    **dict.fromkeys(["carry", "bring", "transport", "deliver"], "move"),
    **dict.fromkeys(["onto", "upon", "atop"], "on"),
    **dict.fromkeys(["into", "inside", "within"], "in"),
    **dict.fromkeys(["towards", "toward"], "to"),
    **dict.fromkeys(["unscrew", "undo"], "undo"),
    **dict.fromkeys(["mount"], "put"),
    **dict.fromkeys(["lower"], "down"),
    **dict.fromkeys(["wash", "cleaning", "cleaned", "clean"], "clean"),
    **dict.fromkeys(["filled", "filling", "fill"], "fill"),
    **dict.fromkeys(["poured", "pouring", "pour"], "pour"),
    **dict.fromkeys(["opened", "opening", "open"], "open"),
    **dict.fromkeys(["closed", "closing", "close", "shut"], "close"),
    **dict.fromkeys(["unstacked", "unstacking", "unstack"], "unstack"),
    **dict.fromkeys(["cleared", "clearing", "clear", "free"], "clear"),
}
_WORD = re.compile(r"[a-z0-9_'\-]+")


@dataclass(frozen=True)
class SubgoalStatement:
    """A subgoal line read for comparison: its names in order, its negation, and its other words."""

    names: tuple[str, ...]
    negated: bool
    words: frozenset[str]


def _stem(word: str) -> str:
    """`inflated`, `inflates` and `inflate` as one word (a crude suffix cut is enough to compare two
    statements with each other)."""
    for suffix in ("ing", "ed", "es", "e", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


def _is_name(word: str) -> bool:
    return any(c.isdigit() for c in word) or word in _ORDINALS or word in _SIDES


# Words after which a lone `a` is a name ("room a, then ..."), not the article: an article has a noun next.
_NOT_A_NOUN = _FILLER | _NEGATIONS | _DISCOURSE | frozenset({"on", "in", "at", "from", "into", "onto"})


def _is_letter_name(token: str, following: str | None) -> bool:
    """Whether a single letter names an object (`room b`): any letter but the pronoun `i`, and the article
    `a` only where it ends the statement or no noun follows it."""
    if len(token) != 1 or not token.isalpha() or token == "i":
        return False
    return token != "a" or following is None or following in _NOT_A_NOUN


def read_statement(text: str) -> SubgoalStatement:
    tokens = [t.strip("'-") for t in _WORD.findall(text.lower())]
    tokens = [t for t in tokens if t]
    if tokens and tokens[0] in _DISCOURSE:
        tokens = tokens[1:]
    names: list[str] = []
    words: set[str] = set()
    negated = False
    for i, token in enumerate(tokens):
        token = _NUMBERS.get(token, token)
        if token in _NEGATIONS:
            negated = True
        elif _is_name(token) or _is_letter_name(token, tokens[i + 1] if i + 1 < len(tokens) else None):
            if token not in names:
                names.append(token)
        elif token not in _FILLER:
            words.add(_stem(_CANONICAL.get(token, token)))
    return SubgoalStatement(tuple(names), negated, frozenset(words))


def _clashing_names(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether a word of `a` and a word of `b` differ only in their last letter (`rooma`, `roomb`): two
    objects of one kind. A plural `s` is not a different object."""
    stems_a = {w[:-1]: w[-1] for w in a - b if len(w) >= 3 and w[-1] != "s"}
    return any(len(w) >= 3 and w[-1] != "s" and stems_a.get(w[:-1], w[-1]) != w[-1] for w in b - a)


def same_subgoal(a: str, b: str) -> bool:
    """Whether `b` restates subgoal `a` (the rules of this module's docstring; symmetric)."""
    sa, sb = read_statement(a), read_statement(b)
    if sa.names != sb.names or sa.negated != sb.negated:
        return False
    if _clashing_names(sa.words, sb.words):
        return False
    if not sa.words or not sb.words:
        return sa.words == sb.words
    return len(sa.words & sb.words) / len(sa.words | sb.words) >= SAME_SUBGOAL
