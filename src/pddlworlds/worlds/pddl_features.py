"""Which PDDL a world reads: STRIPS with types and negative preconditions. The requirement flags PDDL
defines, and the features outside that subset (requirements, sections, forms inside an action), each with
the words `pddl_text`'s checks name it by when they refuse it before unified-planning reads it.
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

#: Requirements of PDDL features outside STRIPS with types: refused by name (the flag alone is enough).
UNSUPPORTED_REQUIREMENTS = {
    ":action-costs": "action costs", ":numeric-fluents": "numeric fluents", ":fluents": "numeric fluents",
    ":durative-actions": "durative actions", ":duration-inequalities": "durative actions",
    ":continuous-effects": "continuous effects", ":timed-initial-literals": "timed initial literals",
    ":derived-predicates": "derived predicates", ":preferences": "preferences", ":constraints": "constraints",
}
#: Every requirement flag PDDL defines (the flags unified-planning reads, and those refused above): any other
#: is a typo, named as such instead of unified-planning's "Expected ')'".
KNOWN_REQUIREMENTS = frozenset({
    ":strips", ":typing", ":negative-preconditions", ":disjunctive-preconditions", ":equality",
    ":existential-preconditions", ":universal-preconditions", ":quantified-preconditions", ":conditional-effects",
    ":adl", ":timed-initial-effects", ":hierarchy", ":method-preconditions", ":contingent", ":time", ":object-fluents",
}) | frozenset(UNSUPPORTED_REQUIREMENTS)
#: Sections of such features.
UNSUPPORTED_SECTIONS = {
    ":derived": "derived predicates (:derived)", ":durative-action": "durative actions (:durative-action)",
    ":functions": "numeric functions (:functions)", ":constraints": "constraints (:constraints)",
}
#: Forms inside an action: in its effect, or in its precondition.
UNSUPPORTED_EFFECTS = {
    "forall": "universally quantified effects (forall)", "when": "conditional effects (when)",
    "increase": "numeric effects (increase)", "decrease": "numeric effects (decrease)",
    "assign": "numeric effects (assign)", "scale-up": "numeric effects (scale-up)",
    "scale-down": "numeric effects (scale-down)",
}
UNSUPPORTED_CONDITIONS = {
    "forall": "universal quantification (forall)", "exists": "existential quantification (exists)",
    "or": "disjunction (or)", "imply": "implication (imply)", "=": "equality (=)",
}
SUPPORTED = "pddlworlds reads STRIPS with types and negative preconditions"
