"""The compact layout's parts: kinds (`[types]`) and list sentences (`[lists]`, `[functions]`).

`text.load_templates` reads a world's `text.toml`; the parts here say many facts of one predicate (or the
values of one function) as one sentence per group, and name an object's kind, so a first observation reads
"At depot1: truck1, crate2 and crate3." rather than a sentence a fact.
"""

from __future__ import annotations

from dataclasses import dataclass

from .grounding import natural_key
from .pddl import LiftedTask, PDDLError
from .wording import SLOT, fill, join_and

__all__ = ["ListForm", "read_list", "read_types"]


@dataclass(frozen=True)
class ListForm:
    """Many true facts of one predicate as one sentence per group: `[lists]` in text.toml.

    The facts are grouped by the values of the `by` parameters (none: one group); a group reads `one` when
    it has one item and `many` otherwise, with `{items}` the items joined ("a, b and c") and the `by` slots
    filled; groups come in the natural order of their values (b2 before b10). Each fact's item is `item`
    with its other parameters filled, in the order the facts are given. With `symmetric`, a binary fact
    whose reverse also holds (with the same value, for a function) is listed once (roads both ways: "l1 to
    l2", not also "l2 to l1").
    """

    one: str
    many: str
    item: str
    by: tuple[str, ...] = ()
    symmetric: bool = False

    def sentences(self, params: tuple[str, ...], facts: list[tuple[str, ...]]) -> list[str]:
        """The sentences of `facts` (argument tuples of this predicate, in the order to say them)."""
        positions = [params.index(name) for name in self.by]
        groups: dict[tuple[str, ...], list[str]] = {}
        present = set(facts) if self.symmetric else set()
        said: set[tuple[str, ...]] = set()
        for args in facts:
            reverse = (args[1], args[0], *args[2:]) if self.symmetric else args
            if self.symmetric and reverse in present and reverse in said:
                continue
            said.add(args)
            values = dict(zip(params, args))
            key = tuple(args[i] for i in positions)
            groups.setdefault(key, []).append(fill(self.item, values))
        out = []
        for key, items in sorted(groups.items(), key=lambda group: [natural_key(v) for v in group[0]]):
            template = self.one if len(items) == 1 else self.many
            out.append(fill(template, {"items": join_and(items), **dict(zip(self.by, key))}))
        return out


def _noun_pair(value, where: str, path) -> tuple[str, str]:
    if isinstance(value, str):
        return value, value + "s"
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) and v for v in value):
        return value[0], value[1]
    raise PDDLError(f"{where}: expected a noun or [singular, plural], not {value!r}", path)


def read_types(table: dict, task: LiftedTask, path) -> dict[str, tuple[str, str]]:
    """`[types]`: a declared type, or a unary predicate (an untyped domain's kinds), -> its noun pair."""
    declared = set(task.supertypes) | {t for _, t in task.objects}
    unary = {name for name, params in task.predicates if len(params) == 1}
    out = {}
    for name, value in table.items():
        if name not in declared and name not in unary:
            raise PDDLError(f"[types] {name!r} is neither a type nor a one-place predicate of the domain", path)
        out[name] = _noun_pair(value, f"[types] {name}", path)
    return out


def read_list(name: str, spec, params: tuple[str, ...], path, section: str = "[lists]") -> ListForm:
    """`[lists] name = {one, many | text, item, by, symmetric}`, every slot checked against the predicate
    (in `[functions]`, against the function's parameters and `value`)."""
    where = f"{section} {name}"
    if isinstance(spec, str):
        spec = {"text": spec}
    if not isinstance(spec, dict):
        raise PDDLError(f"{where}: expected a table such as {{text = \"Clear: {{items}}\"}}, not {spec!r}", path)
    unknown = set(spec) - {"text", "one", "many", "item", "by", "symmetric"}
    if unknown:
        raise PDDLError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (text, one, many, item, by, "
                        "symmetric)", path)
    by = spec.get("by", [])
    by = [by] if isinstance(by, str) else by
    if not isinstance(by, list) or any(b not in params for b in by):
        raise PDDLError(f"{where}: by must name parameters of {name} ({', '.join(params)}), not {by!r}", path)
    rest = [p for p in params if p not in by]
    item = spec.get("item", "{" + rest[0] + "}" if len(rest) == 1 else None)
    if not isinstance(item, str):
        raise PDDLError(f"{where}: give item, the text of one fact using {{{'}, {'.join(rest)}}}", path)
    if sorted(SLOT.findall(item)) != sorted(rest):
        raise PDDLError(f"{where}: item {item!r} must use each of {{{'}, {'.join(rest)}}} once", path)
    text = spec.get("text")
    one, many = spec.get("one", text), spec.get("many", text)
    for label, template in (("one", one), ("many", many)):
        if not isinstance(template, str):
            raise PDDLError(f"{where}: give text (or one and many), a sentence with {{items}}", path)
        if sorted(SLOT.findall(template)) != sorted([*by, "items"]):
            raise PDDLError(f"{where}: {label} {template!r} must use {{items}} and each of {by} once", path)
    symmetric = spec.get("symmetric", False)
    two_place = len(params) == 2 or (section == "[functions]" and len(params) == 3)
    if not isinstance(symmetric, bool) or (symmetric and (not two_place or by)):
        raise PDDLError(f"{where}: symmetric = true is for a two-place predicate or function listed without by",
                        path)
    return ListForm(one, many, item, tuple(by), symmetric)
