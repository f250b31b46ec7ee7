"""PDDL as text: reading files safely and normalising them before unified-planning sees them.

Everything that works on the characters of a PDDL file lives here: reading it (present, within a size
limit, UTF-8, no NUL byte), a minimal s-expression layer (nesting limit; a missing `)` blamed on the form
left open), the normalisations unified-planning's strict reader needs (section order, names declared both
as constants and objects), and the structural checks it does not make (an action without `:effect`, an
empty goal). `pddl.py` turns the result into a `LiftedTask`.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from .pddl_features import (
    KNOWN_REQUIREMENTS,
    SUPPORTED,
    UNSUPPORTED_CONDITIONS,
    UNSUPPORTED_EFFECTS,
    UNSUPPORTED_REQUIREMENTS,
    UNSUPPORTED_SECTIONS,
)

__all__ = [
    "PDDLError",
    "SizeLimitError",
    "MAX_PDDL_BYTES",
    "MAX_NESTING",
    "read_pddl_bytes",
    "read_pddl_text",
    "PDDLNormalisationWarning",
    "normalise_domain",
    "normalise_problem",
    "domain_constants",
    "domain_name",
    "check_domain_features",
    "check_domain_structure",
    "check_problem_structure",
    "normalised_texts",
    "parsed_domain",
    "parsed_problem",
    "line_of_form",
    "MAX_UP_BYTES",
]

class PDDLError(ValueError):
    """A PDDL file that cannot be read, with its path and (where known) line."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None):
        self.path = None if path is None else str(path)
        self.line = line
        where = "" if path is None else f"{path}" + (f":{line}" if line else "") + ": "
        super().__init__(where + message)


class SizeLimitError(PDDLError):
    """Input refused because it is larger than a documented limit (the message names the parameter)."""


#: Largest PDDL file a world reads, in bytes (4 MiB; the largest shipped file is under 5 kB, the largest
#: first problem of the IPC collections 454 kB). Pass a larger `max_file_bytes` to read one anyway.
MAX_PDDL_BYTES = 4 * 1024 * 1024
#: Largest file handed to unified-planning (the planner's reader), 128 KiB: it is slow on large input (44 s
#: for 0.5 MB, about 30 min for 20 MB, measured), so bigger files are refused before it sees them.
MAX_UP_BYTES = 128 * 1024
#: Deepest parenthesis nesting accepted. Shipped files reach 5; unified-planning's recursive reader
#: raises RecursionError at about 50 levels, so deeper input is refused before it gets there.
MAX_NESTING = 32


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


@dataclass
class _Token:
    text: str
    line: int
    column: int
    first_on_line: bool


class _Node(list):
    """A parenthesised form: a list of strings and forms, with the line its '(' is on."""

    line: int = 0


def _tokenise(text: str, path: Path) -> list[_Token]:
    tokens: list[_Token] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        line = line.split(";", 1)[0]
        for i, match in enumerate(re.finditer(r"[()]|[^\s()]+", line)):
            tokens.append(_Token(match.group(0), line_no, match.start(), i == 0))
    return tokens


_SECTIONS = frozenset({
    ":domain", ":requirements", ":types", ":constants", ":predicates", ":functions", ":action",
    ":durative-action", ":derived", ":objects", ":init", ":goal", ":metric",
})
_ACTIONS = frozenset({":action", ":durative-action"})
_ACTION_KEYS = frozenset({":parameters", ":precondition", ":effect", ":duration", ":condition"})


def _left_open(opened: list[_Token], tok: _Token) -> bool:
    """Whether the innermost open form looks unclosed, judged by indentation (the only trace of intent).

    It does when `tok`, a '(' starting its own line, sits at or left of that form's column, and the form
    was itself indented under its parent (or sits directly inside the outermost `define`), so flush-left
    writing does not count. The outermost form is never blamed this way: it is open by design.
    """
    if len(opened) < 2:
        return False
    inner, parent = opened[-1], opened[-2]
    return (
        inner.first_on_line
        and inner.line < tok.line
        and tok.column <= inner.column
        and (inner.column > parent.column or len(opened) == 2)
    )


def _read_sexpr(text: str, path: Path) -> list:
    """Nested lists of strings; raises PDDLError with the line of an unbalanced parenthesis.

    Iterative, with a nesting limit, so hostile input cannot exhaust the stack here or in unified-planning.
    A missing ')' is blamed on the form most likely left open: the first one found holding what belongs
    elsewhere (a section such as `(:goal` belongs directly in `define`, `:effect` directly in an action),
    else the first one that indentation says was left open (`_left_open`), else the innermost one.
    """
    stack: list[_Node] = [_Node()]
    opened: list[_Token] = []
    suspect: _Token | None = None  # from the structure: a section or action keyword nested too deep
    by_indent: _Token | None = None  # from the indentation
    for tok in _tokenise(text, path):
        if tok.text == "(":
            if by_indent is None and tok.first_on_line and _left_open(opened, tok):
                by_indent = opened[-1]
            if len(opened) >= MAX_NESTING:
                raise PDDLError(
                    f"parentheses nested deeper than {MAX_NESTING} levels (MAX_NESTING); "
                    "no PDDL construct needs that many",
                    path,
                    tok.line,
                )
            node = _Node()
            node.line = tok.line
            stack.append(node)
            opened.append(tok)
        elif tok.text == ")":
            if len(stack) == 1:
                raise PDDLError("unexpected ')'", path, tok.line)
            done = stack.pop()
            opened.pop()
            stack[-1].append(done)
        else:
            if suspect is None and len(opened) >= 2:
                word = tok.text.lower()
                if not stack[-1] and word in _SECTIONS and len(opened) > 2:
                    suspect = opened[-2]  # a section belongs directly inside (define ...)
                elif word in _ACTION_KEYS and str(stack[-1][0] if stack[-1] else "").lower() not in _ACTIONS:
                    suspect = opened[-1]  # :effect and the like belong directly inside (:action ...)
            stack[-1].append(tok.text)
    if len(stack) > 1:
        blamed = suspect or by_indent or opened[-1]
        raise PDDLError("unclosed '(' opened here: a ')' is missing", path, blamed.line)
    top = [x for x in stack[0] if isinstance(x, list)]
    if len(top) != 1 or not top[0] or str(top[0][0]).lower() != "define":
        raise PDDLError("expected one (define ...) form", path, 1)
    return top[0]


def _write_sexpr(expr) -> str:
    if isinstance(expr, list):
        return "(" + " ".join(_write_sexpr(e) for e in expr) + ")"
    return expr


def _section(expr) -> str | None:
    if isinstance(expr, list) and expr and isinstance(expr[0], str) and expr[0].startswith(":"):
        return expr[0].lower()
    return None


_DOMAIN_ORDER = [":requirements", ":types", ":constants", ":predicates", ":functions"]


def _typed_names(items: list) -> list[tuple[str, str]]:
    """(name, type) pairs of a typed list such as `a b - t c`; untyped names get type 'object'."""
    out: list[tuple[str, str]] = []
    pending: list[str] = []
    i = 0
    while i < len(items):
        item = items[i]
        if item == "-" and i + 1 < len(items):
            type_name = items[i + 1]
            type_name = _write_sexpr(type_name) if isinstance(type_name, list) else type_name
            out.extend((name, type_name.lower()) for name in pending)
            pending = []
            i += 2
            continue
        pending.append(str(item).lower())
        i += 1
    out.extend((name, "object") for name in pending)
    return out


def normalise_domain(text: str, path: str | Path = "<domain>") -> tuple[str, list[str]]:
    """Put the domain's sections in the order unified-planning requires; return (text, changes)."""
    path = Path(path)
    define = _read_sexpr(text, path)
    head = [e for e in define if _section(e) is None]
    sections = [e for e in define if _section(e) is not None]
    ordered_known = sorted(
        (s for s in sections if _section(s) in _DOMAIN_ORDER),
        key=lambda s: _DOMAIN_ORDER.index(_section(s)),
    )
    rest = [s for s in sections if _section(s) not in _DOMAIN_ORDER]
    new_sections = ordered_known + rest
    # Only the relative order of the declaration sections matters; actions keep their order.
    old_known = [s for s in sections if _section(s) in _DOMAIN_ORDER]
    first_action = next((i for i, s in enumerate(sections) if _section(s) not in _DOMAIN_ORDER), len(sections))
    declarations_first = all(_section(s) in _DOMAIN_ORDER for s in sections[:first_action]) and all(
        _section(s) not in _DOMAIN_ORDER for s in sections[first_action:]
    )
    if old_known == ordered_known and declarations_first:
        return text, []
    change = "reordered sections to " + " ".join(_section(s) for s in ordered_known) + " before the actions"
    return _write_sexpr(head + new_sections), [change]


def domain_constants(text: str, path: str | Path = "<domain>") -> dict[str, str]:
    define = _read_sexpr(text, Path(path))
    for section in define:
        if _section(section) == ":constants":
            return dict(_typed_names(section[1:]))
    return {}


def normalise_problem(
    text: str, constants: dict[str, str], path: str | Path = "<problem>"
) -> tuple[str, list[str]]:
    """Drop problem objects that repeat a domain constant or an earlier object; return (text, changes)."""
    path = Path(path)
    define = _read_sexpr(text, path)
    changes: list[str] = []
    for idx, section in enumerate(define):
        if _section(section) != ":objects":
            continue
        seen: dict[str, str] = {}
        kept: list = [":objects"]
        for name, type_name in _typed_names(section[1:]):
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
    return _write_sexpr(define), changes



def _is_empty_condition(expr) -> bool:
    """`()`, `(and)` or conjunctions of those: a condition with no literal in it."""
    return isinstance(expr, list) and (
        not expr or (str(expr[0]).lower() == "and" and all(_is_empty_condition(e) for e in expr[1:]))
    )




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
    parent = {name: kind for name, kind in _typed_names(section[1:]) if (name, kind) != ("object", "object")}
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
                raise PDDLError(f"{where} increases {_write_sexpr(target) if target is not None else 'nothing'}: "
                                f"numeric state is not supported (only (increase (total-cost) ...)); {SUPPORTED}",
                                path, getattr(item, "line", None))
            continue
        _refuse_numeric_effects(item, where, path)


def check_domain_features(define: list, path: Path) -> None:
    """Refuse, by name and with the line, the PDDL features outside classical planning (numeric state,
    durative actions, PDDL+, constraints, preferences) before the parser meets them."""
    for section in define:
        name = _section(section)
        line = getattr(section, "line", None)
        if name == ":requirements":
            for flag in section[1:]:
                what = UNSUPPORTED_REQUIREMENTS.get(str(flag).lower())
                if what:
                    raise PDDLError(f"requirement {flag} ({what}) is not supported; {SUPPORTED}", path, line)
                if str(flag).lower() not in KNOWN_REQUIREMENTS:
                    raise PDDLError(f"unknown requirement {_write_sexpr(flag) if isinstance(flag, list) else flag}: "
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
    define = _read_sexpr(text, path)
    check_domain_features(define, path)
    _check_effects_present(define, path)


def _check_effects_present(define: list, path: Path) -> None:
    for section in define:
        if _section(section) != ":action":
            continue
        name = section[1] if len(section) > 1 and isinstance(section[1], str) else "?"
        keys = [str(e).lower() if isinstance(e, str) else None for e in section]
        if ":effect" not in keys or keys.index(":effect") + 1 >= len(section):
            raise PDDLError(f"action {name!r} has no :effect", path, getattr(section, "line", None))


def check_problem_structure(text: str, path: str | Path = "<problem>") -> None:
    """Refuse a problem without a goal, or with an empty one (`(:goal (and))`): nothing to play or plan;
    and, by name, a goal or a section outside classical planning (preferences, a numeric goal,
    `:constraints`, a metric other than total cost)."""
    path = Path(path)
    define = _read_sexpr(text, path)
    goals = [s for s in define if _section(s) == ":goal"]
    if not goals:
        raise PDDLError("the problem has no (:goal ...)", path, getattr(define, "line", None))
    body = goals[0][1:]
    if not body or all(_is_empty_condition(e) for e in body):
        raise PDDLError("the goal is empty: it names no condition", path, getattr(goals[0], "line", None))
    _refuse_forms(body, UNSUPPORTED_CONDITIONS, "the goal", path)
    for section in define:
        kind = _section(section)
        line = getattr(section, "line", None)
        if kind == ":constraints":
            raise PDDLError(f"constraints (:constraints) are not supported; {SUPPORTED}", path, line)
        if kind == ":metric":
            metric = [e.lower() if isinstance(e, str) else e for e in section[1:]]
            if not (len(metric) == 2 and metric[0] == "minimize" and isinstance(metric[1], list)
                    and [str(x).lower() for x in metric[1]] == ["total-cost"]):
                raise PDDLError(f"the metric {_write_sexpr(section)} is not supported: only (:metric minimize "
                                "(total-cost)) is (action costs)", path, line)


def _lowered(expr):
    """Nested lists of lower-case strings, each list keeping its line: PDDL names are case-insensitive, and
    the parser downstream (Fast Downward's) compares keywords in lower case."""
    if isinstance(expr, list):
        node = _Node(_lowered(e) for e in expr)
        node.line = getattr(expr, "line", 0)
        return node
    return expr.lower()


def line_of_form(tree: list, text: str) -> int | None:
    """The line of the first form in `tree` written as `text` (or holding the word `text`): where a parser
    that names only what it got found it."""
    stack = [tree]
    while stack:
        node = stack.pop(0)
        if _write_sexpr(node) == text or text in node:
            return getattr(node, "line", None) or None
        stack[:0] = [e for e in node if isinstance(e, list)]
    return None


def parsed_domain(text: str, path: str | Path = "<domain>") -> list:
    """The domain as nested lists, checked (`check_domain_structure`), lower-cased."""
    path = Path(path)
    define = _read_sexpr(text, path)
    check_domain_features(define, path)
    _check_effects_present(define, path)
    return _lowered(define)


def parsed_problem(text: str, constants: dict[str, str], path: str | Path = "<problem>") -> list:
    """The problem as nested lists, checked (`check_problem_structure`), lower-cased, with objects that
    repeat a domain constant (or an earlier object) of the same type dropped: that is one object."""
    text, _ = normalise_problem(text, constants, path)
    check_problem_structure(text, path)
    return _lowered(_read_sexpr(text, Path(path)))


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
    define = _read_sexpr(read_pddl_text(domain_path, max_file_bytes), domain_path)
    head = next((e for e in define if isinstance(e, list) and e and str(e[0]).lower() == "domain"), None)
    if head is None or len(head) < 2:
        raise PDDLError("missing (domain NAME)", domain_path)
    return str(head[1]).lower()
