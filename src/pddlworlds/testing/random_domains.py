"""Random small PDDL tasks with every feature the engine reads, each in two spellings of one task.

`random_task(seed)` writes a domain and problem drawn from `random.Random(seed)`: typing (a parent type
named only as a parent, objects of every type, `either` in parameters and quantifiers), negative
preconditions, equality, `or`/`imply`/`exists`/`forall` in preconditions, goals and derived predicates
(recursive ones too), conditional and universally quantified effects, and action costs (constants, two
cost effects in one action, a static function whose value some objects lack). Ours is the task as a user
writes it; the plain spelling is the same task for the other readers (`differential`), where the
generator itself says what `either`, an implied parent type and two cost effects mean (static `in-A-B`
facts it computes from its own type tree; the parent declared; the sum), since pymimir reads no `either`
nor an undeclared parent and Fast Downward's translator keeps one cost effect; and where pymimir 0.13
reads a legal form wrongly, the plain spelling is one it reads right (each disjunction a derived predicate
of its own, each derived rule's variables bound by a static `obj` fact, a negated derived atom its
complement's atom, a quantified goal a derived atom).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

__all__ = ["RandomTask", "random_task"]


@dataclass(frozen=True)
class RandomTask:
    """One random task in two spellings (see the module docstring) and the features it uses."""

    seed: int
    domain: str
    problem: str
    plain_domain: str
    plain_problem: str
    features: frozenset[str]


class _Writer:
    """Draws one task: the type tree, objects, predicates, derived predicates, actions, problem."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.features: set[str] = set()
        rng = self.rng
        # types: a parent named only as a parent (`vehicle`) and a declared one (`place`)
        self.parent = {"car": "vehicle", "truck": "vehicle", "place": "object"}
        if rng.random() < 0.5:
            self.parent["van"] = "car"
        self.types = ["car", "truck", "place", "vehicle", *(["van"] if "van" in self.parent else [])]
        kinds = ["car", "truck", "vehicle", "place", "place", *(["van"] if "van" in self.parent else [])]
        count = rng.randint(3, 6)
        self.objects = {f"o{i}": kinds[i] if i < len(kinds) and i < 2 else rng.choice(kinds) for i in range(count)}
        if "vehicle" in self.objects.values():
            self.features.add("object of a parent-only type")
        self.costs = rng.random() < 0.5
        # p0 takes no argument, so that a condition over no variable has an atom to use
        self.predicates = {"p0": 0, **{f"p{i}": rng.randint(1, 2) for i in range(1, rng.randint(2, 4))}}
        self.derived: dict[str, tuple[int, str]] = {}
        self.function = None
        self.pairs: set[tuple[str, str]] = set()  # the `either`s used, as (type, type)
        self.disjunctions: list[tuple[str, int, str]] = []  # the plain spelling's (name, arity, rule) of each `or`

    # ---- types -------------------------------------------------------------------------------

    def is_a(self, obj: str, kind: str) -> bool:
        t = self.objects[obj]
        while t != "object":
            if t == kind:
                return True
            t = self.parent.get(t, "object")
        return kind == "object"

    def var_type(self) -> tuple[str, str]:
        """(ours, plain) of a variable's type: a type, or `either` of two (plain: object, with a guard)."""
        if self.rng.random() < 0.25:
            a, b = self.rng.sample(self.types, 2)
            self.features.add("either")
            return f"(either {a} {b})", f"either:{a}:{b}"
        kind = self.rng.choice([*self.types, "object"])
        return kind, kind

    def guard(self, plain: str, var: str) -> str | None:
        """The plain spelling's condition that `var` is of an `either`'s types: a static fact of the pair's own
        (`(in-car-truck ?x)`), the generator's membership, no disjunction (pymimir 0.13 mis-reads a
        disjunction of static facts in a precondition)."""
        if not plain.startswith("either:"):
            return None
        _, a, b = plain.split(":")
        self.pairs.add((a, b))
        return f"(in-{a}-{b} {var})"

    @staticmethod
    def plain_type(plain: str) -> str:
        return "object" if plain.startswith("either:") else plain

    # ---- conditions and effects --------------------------------------------------------------

    def atom(self, names: list[str], *, derived: bool = True) -> str:
        pool = [(p, n) for p, n in self.predicates.items()]
        if derived:
            pool += [(d, n) for d, (n, _) in self.derived.items()]
        pool = [(p, n) for p, n in pool if n == 0 or names]
        name, n = self.rng.choice(pool)
        if name in self.derived:
            self.features.add("derived predicate")
        return "(" + " ".join([name, *(self.rng.choice(names) for _ in range(n))]) + ")"

    def literal(self, names: list[str], derived: bool = True) -> str:
        atom = self.atom(names, derived=derived)
        if self.rng.random() < 0.3:
            self.features.add("negative precondition")
            return f"(not {atom})"
        return atom

    def condition(self, names: list[str], depth: int = 0) -> tuple[str, str]:
        """(ours, plain) of a condition over the variables `names`."""
        r = self.rng.random()
        if depth < 2 and r < 0.15 and len(names) >= 2:
            self.features.add("equality")
            a, b = self.rng.sample(names, 2)
            text = f"(= {a} {b})" if self.rng.random() < 0.4 else f"(not (= {a} {b}))"
            return text, text
        if depth < 2 and r < 0.35:
            op = self.rng.choice(["exists", "forall"])
            self.features.add(op)
            var = f"?q{depth}{self.rng.randint(0, 99)}"
            ours_t, plain_t = self.var_type()
            inner_o, inner_p = self.condition([*names, var], depth + 1)
            scope = [*names, var]
            if op == "forall" and self.rng.random() < 0.5:
                self.features.add("imply")
                lit = self.literal(scope)
                inner_o, inner_p = f"(imply {lit} {inner_o})", self.disjunction(f"(or (not {lit}) {inner_p})", scope)
            guard = self.guard(plain_t, var)
            if guard is not None:
                inner_p = (self.disjunction(f"(or (not {guard}) {inner_p})", scope) if op == "forall"
                           else f"(and {guard} {inner_p})")
            return (f"({op} ({var} - {ours_t}) {inner_o})",
                    f"({op} ({var} - {self.plain_type(plain_t)}) {inner_p})")
        if depth < 2 and r < 0.45:
            self.features.add("or")
            a, b = self.condition(names, depth + 1), self.condition(names, depth + 1)
            return f"(or {a[0]} {b[0]})", self.disjunction(f"(or {a[1]} {b[1]})", names)
        lit = self.literal(names)
        return lit, lit

    def disjunction(self, body: str, names: list[str]) -> str:
        """The plain spelling of a disjunction: an atom of a derived predicate of its own whose rule is the
        disjunction, over the variables of `names` it uses (pymimir 0.13 mis-reads two disjunctions in one
        precondition; it reads a derived predicate's rule right)."""
        used = [v for v in names if re.search(re.escape(v) + r"(?![\w-])", body)]
        name = f"or-{len(self.disjunctions)}"
        self.disjunctions.append((name, len(used), f"(:derived ({name} {' '.join(used)}) {_safe(used, body)})"))
        return f"({' '.join([name, *used])})"

    def effect(self, names: list[str]) -> tuple[list[str], list[str]]:
        """(ours, plain) effect parts (costs aside)."""
        ours: list[str] = []
        plain: list[str] = []
        for _ in range(self.rng.randint(1, 3)):
            atom = self.atom(names, derived=False)
            lit = f"(not {atom})" if self.rng.random() < 0.4 else atom
            ours.append(lit)
            plain.append(lit)
        if self.rng.random() < 0.3:
            self.features.add("conditional effect")
            cond = self.literal(names)
            atom = self.atom(names, derived=False)
            eff = f"(when {cond} {atom if self.rng.random() < 0.6 else f'(not {atom})'})"
            ours.append(eff)
            plain.append(eff)
        if self.rng.random() < 0.25:
            self.features.add("forall effect")
            var = f"?e{self.rng.randint(0, 99)}"
            ours_t, plain_t = self.var_type()
            cond = self.literal([*names, var])
            atom = self.atom([*names, var], derived=False)
            body = f"(when {cond} {atom})" if self.rng.random() < 0.6 else atom
            ours.append(f"(forall ({var} - {ours_t}) {body})")
            guard = self.guard(plain_t, var)
            plain_body = body if guard is None else (
                f"(when (and {guard} {cond}) {atom})" if body.startswith("(when") else f"(when {guard} {atom})")
            plain.append(f"(forall ({var} - {self.plain_type(plain_t)}) {plain_body})")
        return ours, plain

    def costs_of(self, params: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
        """(ours, plain) cost effects: a constant, two constants (plain: their sum), or the function."""
        r = self.rng.random()
        if r < 0.2:
            return [], []  # an action without a cost effect costs 0
        if r < 0.4:
            a, b = self.rng.randint(0, 4), self.rng.randint(1, 4)
            self.features.add("two cost effects")
            return [f"(increase (total-cost) {a})", f"(increase (total-cost) {b})"], [f"(increase (total-cost) {a + b})"]
        typed = [name for name, plain_t in params if not plain_t.startswith("either:")]
        if r < 0.6 and typed:
            self.function = self.function or "w"
            self.features.add("cost by a function")
            text = f"(increase (total-cost) (w {self.rng.choice(typed)}))"
            return [text], [text]
        n = self.rng.randint(0, 5)
        return [f"(increase (total-cost) {n})"], [f"(increase (total-cost) {n})"]

    # ---- the task ------------------------------------------------------------------------------

    def derived_rules(self) -> tuple[list[str], list[str]]:
        ours: list[str] = []
        plain: list[str] = []
        for i in range(self.rng.choice([0, 0, 1, 2])):
            name, n = f"d{i}", self.rng.randint(1, 2)
            args = ["?x", "?y"][:n]
            if n == 2 and self.rng.random() < 0.5:  # recursive: a closure of a binary basic predicate
                binary = [p for p, k in self.predicates.items() if k == 2]
                if binary:
                    base = self.rng.choice(binary)
                    self.features.add("recursive derived predicate")
                    body = f"(or ({base} ?x ?y) (exists (?z - object) (and ({base} ?x ?z) ({name} ?z ?y))))"
                    self.derived[name] = (n, body)
                    ours.append(f"(:derived ({name} ?x ?y) {body})")
                    plain.append(f"(:derived ({name} ?x ?y) {_safe(['?x', '?y'], body)})")
                    continue
            body_o, body_p = self.condition(args, depth=1) if self.rng.random() < 0.5 else (self.literal(args, derived=False),) * 2
            self.derived[name] = (n, body_o)
            ours.append(f"(:derived ({name} {' '.join(args)}) {body_o})")
            plain.append(f"(:derived ({name} {' '.join(args)}) {_safe(args, body_p)})")
        return ours, plain

    def action(self, index: int) -> tuple[str, str]:
        params = []
        for i in range(self.rng.randint(0, 3)):
            ours_t, plain_t = self.var_type()
            params.append((f"?a{i}", ours_t, plain_t))
        names = [p for p, _, _ in params]
        parts_o, parts_p = [], []
        for _ in range(self.rng.randint(1, 3)):
            o, p = self.condition(names) if names else (self.literal([]),) * 2
            parts_o.append(o)
            parts_p.append(p)
        guards = [g for name, _, plain_t in params if (g := self.guard(plain_t, name)) is not None]
        eff_o, eff_p = self.effect(names or [])
        if self.costs:
            cost_o, cost_p = self.costs_of([(p, t) for p, _, t in params])
            eff_o, eff_p = eff_o + cost_o, eff_p + cost_p
        ours = (f"(:action act{index} :parameters ({' '.join(f'{p} - {t}' for p, t, _ in params)})\n"
                f"  :precondition (and {' '.join(parts_o)})\n  :effect (and {' '.join(eff_o)}))")
        plain = (f"(:action act{index} :parameters ({' '.join(f'{p} - {self.plain_type(t)}' for p, _, t in params)})\n"
                 f"  :precondition (and {' '.join(parts_p + guards)})\n  :effect (and {' '.join(eff_p)}))")
        return ours, plain

    def write(self) -> RandomTask:
        derived_o, derived_p = self.derived_rules()
        actions = [self.action(i) for i in range(self.rng.randint(2, 4))]
        objects = list(self.objects)
        declared = " ".join(f"({p} {' '.join(f'?v{i}' for i in range(n))})" for p, n in self.predicates.items())
        declared += "".join(f" ({d} {' '.join(f'?v{i}' for i in range(n))})" for d, (n, _) in self.derived.items())
        types = "car truck - vehicle" + (" van - car" if "van" in self.parent else "") + " place"
        functions = "(:functions (total-cost) - number" + (" (w ?x) - number" if self.function else "") + ")"
        requirements = "(:requirements :adl :typing :derived-predicates :action-costs)"

        def domain(predicates: str, derived: list[str], acts: list[str], types: str) -> str:
            return (f"(define (domain rand{self.seed}) {requirements}\n (:types {types})\n (:predicates {predicates})\n"
                    + (f" {functions}\n" if self.costs else "") + "".join(f" {d}\n" for d in derived)
                    + "".join(f" {a}\n" for a in acts) + ")")

        init = []
        for p, n in self.predicates.items():
            for args in _tuples(objects, n):
                if self.rng.random() < 0.35:
                    init.append(f"({p} {' '.join(args)})".replace(" )", ")"))
        if self.function:
            init += [f"(= (w {o}) {self.rng.randint(0, 6)})" for o in objects if self.rng.random() < 0.85]
        if self.costs:
            init.append("(= (total-cost) 0)")
        goal_parts_o, goal_parts_p, goal_atoms = [], [], []
        for _ in range(self.rng.randint(1, 3)):
            if self.rng.random() < 0.25:  # plain: a derived atom of its own (pymimir reads no quantified goal)
                self.features.add("quantified goal")
                o, body = self._quantified_goal()
                p = f"(goal-q{len(goal_parts_p)})"
                derived_p.append(f"(:derived {p} {body})")
                goal_atoms.append(p)
            else:
                o = p = self.literal(objects)
            goal_parts_o.append(o)
            goal_parts_p.append(p)
        typed = " ".join(f"{o} - {t}" for o, t in self.objects.items())
        facts = [f"(in-{a}-{b} {o})" for o in objects for a, b in sorted(self.pairs) if self.is_a(o, a) or self.is_a(o, b)]
        membership = " ".join(f"(in-{a}-{b} ?x)" for a, b in sorted(self.pairs))
        metric = " (:metric minimize (total-cost))" if self.costs else ""

        def problem(extra: list[str], goal: list[str]) -> str:
            return (f"(define (problem r{self.seed}) (:domain rand{self.seed})\n (:objects {typed})\n"
                    f" (:init {' '.join(init + extra)})\n (:goal (and {' '.join(goal)})){metric})")

        if self.costs:
            self.features.add("action costs")
        # plain: a negated derived atom is an atom of the complement's own rule (pymimir 0.13 mis-reads some)
        complements = []
        for d, (n, _) in self.derived.items():
            variables = [f"?x{i}" for i in range(n)]
            atom = "(" + " ".join([d, *variables]) + ")"
            complements.append((f"not-{d}", n, f"(:derived (not-{atom[1:]} {_safe(variables, f'(not {atom})')})"))
        extra = [*self.disjunctions, *complements]
        declared_plain = " ".join([declared, membership, "(obj ?x)", *goal_atoms,
                                   *(f"({name} {' '.join(f'?v{i}' for i in range(n))})" for name, n, _ in extra)])
        rules = [_complemented(rule) for _, _, rule in self.disjunctions] + [_complemented(r) for r in derived_p]
        plain_domain = domain(declared_plain, rules + [rule for _, _, rule in complements],
                              [_complemented(p) for _, p in actions], f"{types} vehicle - object")
        plain_problem = _complemented(problem([*facts, *(f"(obj {o})" for o in objects)], goal_parts_p))
        return RandomTask(
            self.seed, domain(declared, derived_o, [a for a, _ in actions], types), problem([], goal_parts_o),
            plain_domain, plain_problem, frozenset(self.features),
        )

    def _quantified_goal(self) -> tuple[str, str]:
        op = self.rng.choice(["exists", "forall"])
        ours_t, plain_t = self.var_type()
        lit = self.literal(["?g"])
        guard = self.guard(plain_t, "?g")
        inner = lit if guard is None else (self.disjunction(f"(or (not {guard}) {lit})", ["?g"]) if op == "forall"
                                           else f"(and {guard} {lit})")
        return f"({op} (?g - {ours_t}) {lit})", f"({op} (?g - {self.plain_type(plain_t)}) {inner})"


def _complemented(text: str) -> str:
    """`(not (dK args))` of a generated derived predicate written `(not-dK args)`, its complement's atom."""
    return re.sub(r"\(not \((d\d+)((?: [^()\s]+)*)\)\)", r"(not-\1\2)", text)


def _safe(variables: list[str], body: str) -> str:
    """A plain derived rule's body with each head variable bound by a static `(obj ?x)` fact: pymimir 0.13
    drops a rule whose disjunct leaves a head variable unbound (`(or (not (d ?x)) (e ?y))`)."""
    return f"(and {' '.join(f'(obj {v})' for v in variables)} {body})" if variables else body


def _tuples(objects: list[str], n: int) -> list[tuple[str, ...]]:
    if n == 0:
        return [()]
    return [(o, *rest) for o in objects for rest in _tuples(objects, n - 1)]


def random_task(seed: int) -> RandomTask:
    """The random task of `seed` (the same seed, the same files)."""
    return _Writer(seed).write()
