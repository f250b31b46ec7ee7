"""PDDL as text: reading files safely and normalising them before unified-planning sees them.

Everything that works on the characters of a PDDL file lives here: reading it (present, within a size
limit, UTF-8, no NUL byte), a minimal s-expression layer (nesting limit; a missing `)` blamed on the form
left open), the normalisations unified-planning's strict reader needs (section order, names declared both
as constants and objects), and the structural checks it does not make (an action without `:effect`, an
empty goal). `pddl.py` turns the result into a `LiftedTask`.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from .pddl_corners import normalise_domain_lists, normalise_problem_lists
from .pddl_features import (
    KNOWN_REQUIREMENTS,
    SUPPORTED,
    UNSUPPORTED_CONDITIONS,
    UNSUPPORTED_EFFECTS,
    UNSUPPORTED_REQUIREMENTS,
    UNSUPPORTED_SECTIONS,
)
from .sexpr import (
    MAX_NESTING,
    Node,
    PDDLError,
    SizeLimitError,
    line_of_form,
    lowered,
    read_sexpr,
    section_name,
    typed_names,
    write_sexpr,
)

__all__ = [
    "MAX_NESTING",
    "MAX_PDDL_BYTES",
    "MAX_UP_BYTES",
    "PDDLError",
    "PDDLNormalisationWarning",
    "SizeLimitError",
    "check_domain_features",
    "check_domain_structure",
    "check_problem_structure",
    "domain_constants",
    "domain_name",
    "line_of_form",
    "normalise_domain",
    "normalise_problem",
    "normalised_texts",
    "parsed_domain",
    "parsed_problem",
    "read_pddl_bytes",
    "read_pddl_text",
]

#: Largest PDDL file a world reads, in bytes (4 MiB; the largest shipped file is under 5 kB, the largest
#: first problem of the IPC collections 454 kB). Pass a larger `max_file_bytes` to read one anyway.
MAX_PDDL_BYTES = 4 * 1024 * 1024
#: Largest file handed to unified-planning (the planner's reader), 128 KiB: it is slow on large input (44 s
#: for 0.5 MB, about 30 min for 20 MB, measured), so bigger files are refused before it sees them.
MAX_UP_BYTES = 128 * 1024
def read_pddl_bytes(path: str | Path, max_bytes: int = MAX_PDDL_BYTES) -> bytes:
    """The bytes of a PDDL file, checked to exist, to fit `max_bytes` and to be UTF-8 text.

    Every reader of PDDL goes through here so that a missing, oversized, binary or non-UTF-8 file gives one
    `PDDLError` naming the file (and, for bad bytes, the line and column) instead of a bare OS or codec error.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise PDDLError("not a file", path)
        if size > max_bytes:
            raise SizeLimitError(
                f"file is {size:,} bytes, over the limit of {max_bytes:,} bytes (max_file_bytes); "
                "pass a larger max_file_bytes to read it anyway",
                path,
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise PDDLError("cannot read file: no such file", path) from None
    except OSError as exc:
        raise PDDLError(f"cannot read file: {exc.strerror or exc}", path) from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise PDDLError(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line}, column {column} "
            "(PDDL files are read as UTF-8; re-save the file as UTF-8)",
            path,
            line,
        ) from None
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise PDDLError("not a text file: it contains a NUL byte (a binary file?)", path, line)
    return data


def read_pddl_text(path: str | Path, max_bytes: int = MAX_PDDL_BYTES) -> str:
    """`read_pddl_bytes` decoded (a leading UTF-8 byte-order mark is dropped)."""
    return read_pddl_bytes(path, max_bytes).decode("utf-8").removeprefix("\ufeff")


class PDDLNormalisationWarning(UserWarning):
    """Input was accepted after rewriting it into the form unified-planning reads."""


# --------------------------------------------------------------------------------------------------
# A minimal s-expression layer, used only to normalise input before unified-planning parses it.


_DOMAIN_ORDER = [":requirements", ":types", ":constants", ":predicates", ":functions"]


def normalise_domain(text: str, path: str | Path = "<domain>") -> tuple[str, list[str]]:
    """Put the domain's sections in the order unified-planning requires; return (text, changes)."""
    path = Path(path)
    define = read_sexpr(text, path)
    head = [e for e in define if section_name(e) is None]
    sections = [e for e in define if section_name(e) is not None]
    ordered_known = sorted(
        (s for s in sections if section_name(s) in _DOMAIN_ORDER),
        key=lambda s: _DOMAIN_ORDER.index(section_name(s)),
    )
    rest = [s for s in sections if section_name(s) not in _DOMAIN_ORDER]
    new_sections = ordered_known + rest
    # Only the relative order of the declaration sections matters; actions keep their order.
    old_known = [s for s in sections if section_name(s) in _DOMAIN_ORDER]
    first_action = next((i for i, s in enumerate(sections) if section_name(s) not in _DOMAIN_ORDER), len(sections))
    declarations_first = all(section_name(s) in _DOMAIN_ORDER for s in sections[:first_action]) and all(
        section_name(s) not in _DOMAIN_ORDER for s in sections[first_action:]
    )
    if old_known == ordered_known and declarations_first:
        return text, []
    change = "reordered sections to " + " ".join(section_name(s) for s in ordered_known) + " before the actions"
    return write_sexpr(head + new_sections), [change]


def domain_constants(text: str, path: str | Path = "<domain>") -> dict[str, str]:
    define = read_sexpr(text, Path(path))
    for section in define:
        if section_name(section) == ":constants":
            return dict(typed_names(section[1:]))
    return {}


def normalise_problem(
    text: str, constants: dict[str, str], path: str | Path = "<problem>"
) -> tuple[str, list[str]]:
    """Drop problem objects that repeat a domain constant or an earlier object; return (text, changes)."""
    path = Path(path)
    define = read_sexpr(text, path)
    changes: list[str] = []
    for idx, section in enumerate(define):
        if section_name(section) != ":objects":
            continue
        seen: dict[str, str] = {}
        kept: list = [":objects"]
        for name, type_name in typed_names(section[1:]):
            earlier = constants.get(name) or seen.get(name)
            if earlier is not None:
                if earlier != type_name and type_name != "object":
                    raise PDDLError(
                        f"object {name!r} declared as {type_name!r} but already declared as {earlier!r}",
                        path,
                    )
                where = "a domain constant" if name in constants else "declared twice"
                changes.append(f"dropped object {name!r} ({where})")
                continue
            seen[name] = type_name
            kept.extend([name, "-", type_name])
        define[idx] = kept
    if not changes:
        return text, []
    return write_sexpr(define), changes


def _refuse_forms(expr, unsupported: dict[str, str], where: str, path: Path) -> None:
    for item in expr:
        if isinstance(item, list):
            head = str(item[0]).lower() if item and isinstance(item[0], str) else ""
            if head in unsupported:
                raise PDDLError(f"not STRIPS: {where} uses {unsupported[head]}, which is not supported; "
                                f"{SUPPORTED}", path, getattr(item, "line", None))
            _refuse_forms(item, unsupported, where, path)


def _refuse_type_cycle(section: list, path: Path) -> None:
    """Refuse a type declared, through its parents, as its own ancestor (`a - b b - a`), naming the types."""
    parent = {name: kind for name, kind in typed_names(section[1:]) if (name, kind) != ("object", "object")}
    for start, first in parent.items():
        chain, kind = [start], first
        while kind in parent and kind not in chain:
            chain.append(kind)
            kind = parent[kind]
        if kind in chain:
            cycle = " - ".join(chain[chain.index(kind):] + [kind])
            raise PDDLError(f"the types form a cycle ({cycle}): a type cannot be its own ancestor", path,
                            getattr(section, "line", None))


def _refuse_numeric_effects(expr, where: str, path: Path) -> None:
    """`increase` is action costs only: `(increase (total-cost) N)` or by a function; anything else that
    changes a number is numeric state."""
    for item in expr:
        if not isinstance(item, list) or not item:
            continue
        head = str(item[0]).lower() if isinstance(item[0], str) else ""
        if head == "increase":
            target = item[1] if len(item) > 1 else None
            if not (isinstance(target, list) and len(target) == 1 and str(target[0]).lower() == "total-cost"):
                raise PDDLError(f"{where} increases {write_sexpr(target) if target is not None else 'nothing'}: "
                                f"numeric state is not supported (only (increase (total-cost) ...)); {SUPPORTED}",
                                path, getattr(item, "line", None))
            continue
        _refuse_numeric_effects(item, where, path)


def check_domain_features(define: list, path: Path) -> None:
    """Refuse, by name and with the line, the PDDL features outside classical planning (numeric state,
    durative actions, PDDL+, constraints, preferences) before the parser meets them."""
    for section in define:
        name = section_name(section)
        line = getattr(section, "line", None)
        if name == ":requirements":
            for flag in section[1:]:
                what = UNSUPPORTED_REQUIREMENTS.get(str(flag).lower())
                if what:
                    raise PDDLError(f"requirement {flag} ({what}) is not supported; {SUPPORTED}", path, line)
                if str(flag).lower() not in KNOWN_REQUIREMENTS:
                    raise PDDLError(f"unknown requirement {write_sexpr(flag) if isinstance(flag, list) else flag}: "
                                    f"PDDL has no such requirement", path, line)
        elif name == ":types":
            _refuse_type_cycle(section, path)
        elif name in UNSUPPORTED_SECTIONS:
            raise PDDLError(f"{UNSUPPORTED_SECTIONS[name]} are not supported; {SUPPORTED}", path, line)
        elif name == ":derived":
            _refuse_forms(section[2:], UNSUPPORTED_CONDITIONS, "a derived predicate", path)
        elif name == ":action":
            action = section[1] if len(section) > 1 and isinstance(section[1], str) else "?"
            keys = [str(e).lower() if isinstance(e, str) else None for e in section]
            for key, unsupported in ((":effect", UNSUPPORTED_EFFECTS), (":precondition", UNSUPPORTED_CONDITIONS)):
                if key in keys and keys.index(key) + 1 < len(section):
                    body = section[keys.index(key) + 1]
                    _refuse_forms([body], unsupported, f"the {key[1:]} of action {action!r}", path)
                    if key == ":effect":
                        _refuse_numeric_effects([body], f"the effect of action {action!r}", path)


def check_domain_structure(text: str, path: str | Path = "<domain>") -> None:
    """Refuse what unified-planning accepts but the planner chokes on (an action without `:effect`) and
    the features it does not handle (`check_domain_features`)."""
    path = Path(path)
    define = read_sexpr(text, path)
    check_domain_features(define, path)
    _check_effects_present(define, path)


def _check_effects_present(define: list, path: Path) -> None:
    for section in define:
        if section_name(section) != ":action":
            continue
        name = section[1] if len(section) > 1 and isinstance(section[1], str) else "?"
        keys = [str(e).lower() if isinstance(e, str) else None for e in section]
        if ":effect" not in keys or keys.index(":effect") + 1 >= len(section):
            raise PDDLError(f"action {name!r} has no :effect", path, getattr(section, "line", None))


def check_problem_structure(text: str, path: str | Path = "<problem>") -> None:
    """Refuse a problem without a goal (no `(:goal ...)`, or `(:goal)` with nothing in it), a domain file
    given as the problem, and, by name, a goal or a section outside classical planning (preferences, a
    numeric goal, `:constraints`, a metric other than total cost)."""
    path = Path(path)
    define = read_sexpr(text, path)
    goals = [s for s in define if section_name(s) == ":goal"]
    head = define[1] if len(define) > 1 and isinstance(define[1], list) else []
    if not goals and head and str(head[0]).lower() == "domain":
        raise PDDLError(f"this is a domain file ((define (domain {' '.join(map(str, head[1:]))}) ...)), not a problem",
                        path, getattr(define, "line", None))
    if not goals:
        raise PDDLError("the problem has no (:goal ...)", path, getattr(define, "line", None))
    body = goals[0][1:]
    if not body:  # `(:goal (and))` is a goal (true in every state, as Fast Downward reads it); `(:goal)` is not
        raise PDDLError("the goal is empty: (:goal) names no condition", path, getattr(goals[0], "line", None))
    _refuse_forms(body, UNSUPPORTED_CONDITIONS, "the goal", path)
    for section in define:
        kind = section_name(section)
        line = getattr(section, "line", None)
        if kind == ":constraints":
            raise PDDLError(f"constraints (:constraints) are not supported; {SUPPORTED}", path, line)
        if kind == ":metric":
            metric = [e.lower() if isinstance(e, str) else e for e in section[1:]]
            if not (len(metric) == 2 and metric[0] == "minimize" and isinstance(metric[1], list)
                    and [str(x).lower() for x in metric[1]] == ["total-cost"]):
                raise PDDLError(f"the metric {write_sexpr(section)} is not supported: only (:metric minimize "
                                "(total-cost)) is (action costs)", path, line)


def parsed_domain(text: str, path: str | Path = "<domain>") -> list:
    """The domain as nested lists, checked (`check_domain_structure`), lower-cased, in the form the
    translator's parser takes: declarations before actions (PDDL does not fix their order), requirement
    flags it lists only (it validates them and uses none: what a domain uses is read from its text), and
    the corners of legal PDDL it reads wrongly settled (`pddl_corners`: implied parent types, `either`
    anywhere, summed costs, names declared twice, undeclared types)."""
    path = Path(path)
    define = read_sexpr(text, path)
    check_domain_features(define, path)
    _check_effects_present(define, path)
    define = lowered(define)
    head = [e for e in define if section_name(e) is None]
    sections = [e for e in define if section_name(e) is not None]
    declarations = sorted((e for e in sections if section_name(e) in _DOMAIN_ORDER),
                          key=lambda e: _DOMAIN_ORDER.index(section_name(e)))
    rest = [e for e in sections if section_name(e) not in _DOMAIN_ORDER]
    for section in declarations:
        if section_name(section) == ":requirements":
            section[1:] = [flag for flag in section[1:] if flag in _TRANSLATOR_FLAGS]
    out = Node(head + declarations + rest)
    out.line = getattr(define, "line", 0)
    normalise_domain_lists(out, path)
    return out


#: The requirement flags the translator's parser accepts (it refuses any other, numeric ones included).
_TRANSLATOR_FLAGS = frozenset({
    ":strips", ":adl", ":typing", ":negation", ":equality", ":negative-preconditions",
    ":disjunctive-preconditions", ":existential-preconditions", ":universal-preconditions",
    ":quantified-preconditions", ":conditional-effects", ":derived-predicates", ":action-costs",
})


def parsed_problem(
    text: str, constants: dict[str, str], path: str | Path = "<problem>", types: dict[str, str] | None = None
) -> list:
    """The problem as nested lists, checked (`check_problem_structure`), lower-cased, with objects that
    repeat a domain constant (or an earlier object) of the same type dropped: that is one object. With the
    domain's `types` (`pddl_corners.declared_types`), its objects' types are checked to be declared and
    `either` in its goal rewritten (`pddl_corners.normalise_problem_lists`)."""
    text, _ = normalise_problem(text, constants, path)
    check_problem_structure(text, path)
    define = lowered(read_sexpr(text, Path(path)))
    if types is not None:
        normalise_problem_lists(define, types, Path(path))
    return define


def normalised_texts(
    domain_path: Path, problem_path: Path, max_file_bytes: int = MAX_PDDL_BYTES
) -> tuple[str, str]:
    """Both files read, checked and normalised (with a `PDDLNormalisationWarning` per file changed)."""
    domain_text = read_pddl_text(domain_path, max_file_bytes)
    problem_text = read_pddl_text(problem_path, max_file_bytes)
    check_domain_structure(domain_text, domain_path)
    check_problem_structure(problem_text, problem_path)
    domain_text, changes = normalise_domain(domain_text, domain_path)
    if changes:
        warnings.warn(f"{domain_path}: {'; '.join(changes)}", PDDLNormalisationWarning, stacklevel=4)
    problem_text, changes = normalise_problem(
        problem_text, domain_constants(domain_text, domain_path), problem_path
    )
    if changes:
        warnings.warn(f"{problem_path}: {'; '.join(changes)}", PDDLNormalisationWarning, stacklevel=4)
    return domain_text, problem_text


def domain_name(domain_path: Path, max_file_bytes: int = MAX_PDDL_BYTES) -> str:
    define = read_sexpr(read_pddl_text(domain_path, max_file_bytes), domain_path)
    head = next((e for e in define if isinstance(e, list) and e and str(e[0]).lower() == "domain"), None)
    if head is None or len(head) < 2:
        raise PDDLError("missing (domain NAME)", domain_path)
    return str(head[1]).lower()
