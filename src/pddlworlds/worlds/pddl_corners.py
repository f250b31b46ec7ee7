"""The corners of legal PDDL that Fast Downward's translator reads wrongly or not at all, settled on the lists
before it reads them: rewritten to what they mean, or refused in one line naming the file, the line and what.

- A type named only as a parent (`car truck - vehicle`, `vehicle` declared nowhere) is a type whose parent
  is `object`, as PDDL implies; the translator would leave `car` outside `object` and lose every action
  typed `object` (or `either`) for its objects.
- `either` anywhere a variable is typed: an action's parameters, `forall`/`exists` in conditions, goals and
  effects (the translator takes it in predicate declarations only): the variable becomes an `object`
  bound by a condition that it is one of the types.
- Several `(increase (total-cost) N)` of one action are summed (the translator keeps the last one); a cost
  increase inside `when` or `forall` (a conditional cost) is refused, as is more than one where one is by
  a function (no single cost effect the planner reads says their sum).
- Names: each action, predicate, type and action parameter is declared once (the translator keeps one of
  two actions of a name, or both, silently).
- A type given to an object, a constant, an action parameter or a quantified variable must be declared
  (or be `object`): the translator crashes on an object's, and silently drops what a parameter's or a
  quantifier's undeclared type ranges over.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .sexpr import Node, PDDLError, section_name, write_sexpr

__all__ = ["declared_types", "normalise_domain_lists", "normalise_problem_lists"]

#: Heads of the condition forms whose parts are conditions.
_CONNECTIVES = frozenset({"and", "or", "not", "imply"})


def _node(items: list, line: int) -> Node:
    node = Node(items)
    node.line = line
    return node


def _line(form: object, default: int | None = None) -> int | None:
    return getattr(form, "line", None) or default


def _typed(items: list) -> list[tuple[list[str], object]]:
    """A typed list as (names, type) groups, the type a word or an `(either ...)` form; untyped: object."""
    groups: list[tuple[list[str], object]] = []
    pending: list[str] = []
    i = 0
    while i < len(items):
        if items[i] == "-" and i + 1 < len(items):
            groups.append((pending, items[i + 1]))
            pending = []
            i += 2
            continue
        pending.append(items[i])
        i += 1
    if pending:
        groups.append((pending, "object"))
    return groups


def _named_groups(items: list, what: str, path: Path, line: int | None) -> list[tuple[list[str], object]]:
    """`_typed(items)`, refusing a `- type` with no name before it (`x - c - c`) in one line."""
    groups = _typed(items)
    for names, kind in groups:
        if not names:
            raise PDDLError(f"{what}: '- {write_sexpr(kind)}' follows no name (each '- type' types the names "
                            "just before it)", path, line)
    return groups


def _untyped(groups: list[tuple[list[str], object]]) -> list:
    out: list = []
    for names, kind in groups:
        out += [*names, "-", kind]
    return out


def _either(kind: object) -> list[str] | None:
    """The types of an `(either a b)` form, else None."""
    if isinstance(kind, list) and kind and kind[0] == "either":
        return [str(t) for t in kind[1:]]
    return None


def _member(variable: str, types: list[str], line: int) -> Node:
    """`variable` is of one of `types`: `(or (exists (?e - a) (= ?e variable)) ...)`."""
    bound = f"?either-{variable.lstrip('?')}"
    return _node(["or", *(_node(["exists", _node([bound, "-", t], line), _node(["=", bound, variable], line)], line)
                          for t in types)], line)


def _retyped(variables: list) -> tuple[list, list[Node]]:
    """A variable list with each `either` made `object`, and the conditions that say their types."""
    groups, members = _typed(variables), []
    line = _line(variables, 0) or 0
    for i, (names, kind) in enumerate(groups):
        types = _either(kind)
        if types is not None:
            groups[i] = (names, "object")
            members += [_member(name, types, line) for name in names]
    return _untyped(groups), members


def _condition(form: object) -> object:
    """A condition with `either` in its quantifiers rewritten (`forall`: an `imply`, `exists`: an `and`)."""
    if not isinstance(form, list) or not form:
        return form
    head, line = form[0], _line(form, 0) or 0
    if head in ("forall", "exists") and len(form) == 3 and isinstance(form[1], list):
        variables, members = _retyped(form[1])
        body = _condition(form[2])
        if members:
            guard = members[0] if len(members) == 1 else _node(["and", *members], line)
            body = _node(["imply", guard, body] if head == "forall" else ["and", guard, body], line)
        return _node([head, _node(variables, _line(form[1], line) or line), body], line)
    if head in _CONNECTIVES:
        return _node([head, *(_condition(part) for part in form[1:])], line)
    return form


def _effect(form: object) -> object:
    """An effect with `either` in its `forall`s rewritten (a `when` of their types), conditions too."""
    if not isinstance(form, list) or not form:
        return form
    head, line = form[0], _line(form, 0) or 0
    if head == "and":
        return _node(["and", *(_effect(part) for part in form[1:])], line)
    if head == "when" and len(form) == 3:
        return _node(["when", _condition(form[1]), _effect(form[2])], line)
    if head == "forall" and len(form) == 3 and isinstance(form[1], list):
        variables, members = _retyped(form[1])
        body = _effect(form[2])
        if members:
            guard = members[0] if len(members) == 1 else _node(["and", *members], line)
            body = _node(["when", guard, body], line)
        return _node(["forall", _node(variables, _line(form[1], line) or line), body], line)
    return form


def _keyed(action: list, key: str) -> int | None:
    """The index of the form after `key` in an action, None without one."""
    for i, item in enumerate(action[:-1]):
        if item == key:
            return i + 1
    return None


def _either_parameters(action: list) -> None:
    """`?x - (either a b)` among an action's parameters becomes `?x - object` and, in its precondition,
    that `?x` is an `a` or a `b`: the translator takes `either` in predicate declarations only."""
    at = _keyed(action, ":parameters")
    if at is None or not isinstance(action[at], list):
        return
    variables, members = _retyped(action[at])
    if not members:
        return
    line = _line(action, 0) or 0
    action[at] = _node(variables, _line(action[at], line) or line)
    pre = _keyed(action, ":precondition")
    if pre is not None:
        action[pre] = _node(["and", action[pre], *members], line)
    else:
        action[at + 1:at + 1] = [":precondition", _node(["and", *members], line)]


def _costs(effect: object, name: str, path: Path) -> object:
    """The effect with its top-level cost increases summed into one; refused in one line: a cost inside
    `when` or `forall`, and several where one is by a function."""
    found: list[list] = []

    def walk(form: object, inside: str | None) -> None:
        if not isinstance(form, list) or not form:
            return
        head = form[0]
        if head == "increase":
            if inside is not None:
                raise PDDLError(f"action {name!r} increases total-cost inside ({inside} ...): a conditional or "
                                "quantified cost is not supported (Fast Downward's translator cannot read it); "
                                "give the action one unconditional cost", path, _line(form))
            found.append(form)
            return
        nested = head if head in ("when", "forall") else inside
        for part in form[1:]:
            walk(part, nested)

    walk(effect, None)
    if len(found) < 2:
        return effect
    amounts = [form[2] if len(form) == 3 else None for form in found]
    if not all(isinstance(a, str) and a.isdigit() for a in amounts):
        shown = ", ".join(write_sexpr(form) for form in found)
        raise PDDLError(f"action {name!r} has {len(found)} cost effects ({shown}), one by a function: their sum "
                        "cannot be written as the one cost effect a planner reads; write a single "
                        "(increase (total-cost) ...)", path, _line(found[1]))
    total = sum(int(str(a)) for a in amounts)
    first = found[0]

    def rebuilt(form: object) -> object:
        if not isinstance(form, list):
            return form
        if form is first:
            return _node(["increase", first[1], str(total)], _line(first, 0) or 0)
        if any(form is other for other in found):
            return None
        return _node([p for p in (rebuilt(part) for part in form) if p is not None], _line(form, 0) or 0)

    return rebuilt(effect)


def declared_types(define: list) -> dict[str, str]:
    """Each type of the domain's `:types` and its parent (a word; `object` for none)."""
    out: dict[str, str] = {"object": "object"}
    for section in define:
        if section_name(section) == ":types":
            for names, kind in _typed(list(section[1:])):
                for name in names:
                    out[str(name)] = kind if isinstance(kind, str) else write_sexpr(kind)
    return out


def _implied_parents(define: list) -> None:
    """Declare each type named only as a parent, as a type of `object` (what PDDL implies)."""
    for section in define:
        if section_name(section) != ":types":
            continue
        groups = _typed(list(section[1:]))
        declared = {name for names, _ in groups for name in names} | {"object"}
        implied = [kind for _, kind in groups if isinstance(kind, str) and kind not in declared]
        if implied:
            section.extend([*dict.fromkeys(implied), "-", "object"])


def _merge_repeated_types(define: list) -> None:
    """A type declared both under `object` and under another type is of the other (IPC 2006's Storage
    declares `area - object` and `area - surface`): the first says nothing the second does not, so only the
    second is kept. A type given two parents other than `object` stays for `_refuse_duplicates`."""
    for section in define:
        if section_name(section) != ":types":
            continue
        groups = _typed(list(section[1:]))
        parents: dict[str, set[str]] = {}
        for names, kind in groups:
            for name in names:
                parents.setdefault(str(name), set()).add(kind if isinstance(kind, str) else write_sexpr(kind))
        implied = {name for name, kinds in parents.items() if "object" in kinds and len(kinds) == 2}
        if not implied:
            continue
        kept = [([n for n in names if not (n in implied and kind == "object")], kind) for names, kind in groups]
        rebuilt = [section[0], *_untyped([(names, kind) for names, kind in kept if names])]
        section[:] = rebuilt  # in place: the section keeps its line for errors


def _refuse_duplicates(define: list, path: Path) -> None:
    seen: dict[tuple[str, str], int | None] = {}

    def once(kind: str, name: str, line: int | None) -> None:
        if (kind, name) in seen:
            first = seen[(kind, name)]
            raise PDDLError(f"the {kind} {name!r} is declared twice" + (f" (first on line {first})" if first else "")
                            + ": each name may be declared once", path, line)
        seen[(kind, name)] = line

    for section in define:
        kind = section_name(section)
        line = _line(section)
        if kind == ":action" and len(section) > 1 and isinstance(section[1], str):
            once("action", section[1], line)
            at = _keyed(section, ":parameters")
            params = _typed(list(section[at])) if at is not None and isinstance(section[at], list) else []
            flat = [n for names, _ in params for n in names]
            for name in {n for n in flat if flat.count(n) > 1}:
                raise PDDLError(f"action {section[1]!r} names the parameter {name} twice", path, line)
        elif kind == ":predicates":
            for predicate in section[1:]:
                if isinstance(predicate, list) and predicate and isinstance(predicate[0], str):
                    once("predicate", predicate[0], _line(predicate, line))
        elif kind == ":types":
            for names, parent in _named_groups(list(section[1:]), "the types", path, line):
                if not isinstance(parent, str):
                    raise PDDLError(f"the type {names[0]} is given the parent {write_sexpr(parent)}: a type has one "
                                    "parent (Fast Downward's translator reads no other)", path, line)
                for name in names:
                    if name != "object":
                        once("type", name, line)


def _variable_types(form: object) -> Iterator[tuple[str, int | None]]:
    """Every type a quantified variable is given in `form` (the words of an `either` each)."""
    if not isinstance(form, list) or not form:
        return
    if form[0] in ("forall", "exists") and len(form) == 3 and isinstance(form[1], list):
        for _, kind in _typed(list(form[1])):
            for t in _either(kind) or [kind]:
                yield str(t), _line(form)
    for part in form[1:]:
        yield from _variable_types(part)


def _check_types(where: str, kind: object, types: dict[str, str], path: Path, line: int | None,
                 one: bool = False) -> None:
    """`kind` (a word, or an `either` where `one` is false) names declared types only."""
    if one and not isinstance(kind, str):
        raise PDDLError(f"{where} is given the type {write_sexpr(kind)}: an object or a constant has one type "
                        "(declare a type for it)", path, line)
    for name in _either(kind) or [kind]:
        if isinstance(name, str) and name not in types:
            declared = ", ".join(t for t in types if t != "object") or "none"
            raise PDDLError(f"{where} has the type {name!r}, which the domain does not declare (its types: "
                            f"{declared})", path, line)


def _check_domain_types(define: list, types: dict[str, str], path: Path) -> None:
    for section in define:
        kind, line = section_name(section), _line(section)
        if kind == ":constants":
            for names, t in _named_groups(list(section[1:]), "the constants", path, line):
                _check_types(f"the constant {names[0]}", t, types, path, line, one=True)
        elif kind == ":action" and len(section) > 1:
            at = _keyed(section, ":parameters")
            if at is not None and isinstance(section[at], list):
                for names, t in _named_groups(list(section[at]), f"the parameters of action {section[1]!r}", path, line):
                    _check_types(f"parameter {names[0]} of action {section[1]!r}", t, types, path, line)
            for body in (_keyed(section, ":precondition"), _keyed(section, ":effect")):
                if body is not None:
                    for t, where in _variable_types(section[body]):
                        _check_types(f"a quantified variable of action {section[1]!r}", t, types, path, where)
        elif kind == ":derived" and len(section) > 2:
            for t, where in _variable_types(section[2]):
                _check_types("a quantified variable of a derived predicate", t, types, path, where)


def normalise_domain_lists(define: list, path: Path) -> None:
    """Settle the corners above in the domain's lower-cased lists, in place (one `PDDLError` if refused)."""
    _merge_repeated_types(define)
    _refuse_duplicates(define, path)
    _implied_parents(define)
    _check_domain_types(define, declared_types(define), path)
    for section in define:
        kind = section_name(section)
        if kind == ":action":
            name = str(section[1]) if len(section) > 1 else "?"
            _either_parameters(section)
            pre, eff = _keyed(section, ":precondition"), _keyed(section, ":effect")
            if pre is not None:
                section[pre] = _condition(section[pre])
            if eff is not None:
                section[eff] = _costs(_effect(section[eff]), name, path)
        elif kind == ":derived" and len(section) > 2:
            section[2] = _condition(section[2])


def normalise_problem_lists(define: list, types: dict[str, str], path: Path) -> None:
    """The problem's objects' types declared in the domain (`types`), `either` in its goal's quantifiers
    rewritten; in place."""
    for section in define:
        kind = section_name(section)
        if kind == ":objects":
            for names, t in _named_groups(list(section[1:]), "the objects", path, _line(section)):
                _check_types(f"the object {names[0]}", t, types, path, _line(section), one=True)
        elif kind == ":goal":
            for t, where in _variable_types(section):
                _check_types("a quantified variable of the goal", t, types, path, where)
            section[1:] = [_condition(part) for part in section[1:]]
