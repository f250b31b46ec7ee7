"""Which PDDL a world reads: classical PDDL as Fast Downward reads it (PDDL 2.2 level 1 without numeric
state): typing with `either`, constants, negative preconditions, equality, `and`/`or`/`not`/`imply`,
`exists`/`forall` in preconditions and goals, conditional and universally quantified effects, derived
predicates, and action costs (`increase (total-cost)` by a constant or a static function).

What stays outside, each with the words `pddl_text`'s checks name it by when they refuse it: numeric state,
durative actions, PDDL+ (processes, events), timed initial literals, preferences and `:constraints`.
"""

from __future__ import annotations

__all__ = [
    "KNOWN_REQUIREMENTS",
    "SUPPORTED",
    "UNSUPPORTED_CONDITIONS",
    "UNSUPPORTED_EFFECTS",
    "UNSUPPORTED_REQUIREMENTS",
    "UNSUPPORTED_SECTIONS",
]

#: Requirements of features outside classical PDDL: refused by name (the flag alone is enough, as a domain
#: that declares them is written for them). `:fluents` and `:numeric-fluents` are not here: many IPC domains
#: declare them for `total-cost` alone, so numeric state is refused where it is used, not where it is named.
UNSUPPORTED_REQUIREMENTS = {
    ":durative-actions": "durative actions", ":duration-inequalities": "durative actions",
    ":continuous-effects": "continuous effects", ":timed-initial-literals": "timed initial literals",
    ":preferences": "preferences", ":constraints": "constraints", ":time": "PDDL+ time",
}
#: Every requirement flag PDDL 1.2 to 3.1 and PDDL+ define: any other is a typo, named as such.
KNOWN_REQUIREMENTS = frozenset({
    ":strips", ":typing", ":negative-preconditions", ":disjunctive-preconditions", ":equality",
    ":existential-preconditions", ":universal-preconditions", ":quantified-preconditions", ":conditional-effects",
    ":adl", ":timed-initial-effects", ":hierarchy", ":method-preconditions", ":contingent", ":object-fluents",
    ":action-costs", ":numeric-fluents", ":fluents", ":derived-predicates", ":domain-axioms",
    ":expression-evaluation", ":safety-constraints", ":open-world", ":true-negation", ":ucpop",
    ":foreach-expansions", ":dag-expansions", ":subgoals-through-axioms", ":processes", ":events",
}) | frozenset(UNSUPPORTED_REQUIREMENTS)
#: Sections of such features.
UNSUPPORTED_SECTIONS = {
    ":durative-action": "durative actions (:durative-action)", ":process": "PDDL+ processes (:process)",
    ":event": "PDDL+ events (:event)", ":constraints": "constraints (:constraints)",
}
#: Forms inside an action's effect that change numeric state (`increase (total-cost) ...` is allowed).
UNSUPPORTED_EFFECTS = {
    "decrease": "numeric effects (decrease)", "assign": "numeric effects (assign)",
    "scale-up": "numeric effects (scale-up)", "scale-down": "numeric effects (scale-down)",
}
#: Forms inside a precondition, a derived predicate or a goal that read numeric state or time.
UNSUPPORTED_CONDITIONS = {
    "<": "numeric comparisons (<)", ">": "numeric comparisons (>)", "<=": "numeric comparisons (<=)",
    ">=": "numeric comparisons (>=)", "preference": "preferences (preference)",
}
SUPPORTED = ("pddlworlds reads classical PDDL as Fast Downward does: ADL, derived predicates and action "
             "costs, without numeric state, durative actions, PDDL+ or constraints")
