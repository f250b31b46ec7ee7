"""Named extension points (agents, model backends, planners, profiles, generators...): one registry type.

A `Registry` maps names to entries in registration order. A name is registered once (a second entry under
it is refused, so a plugin cannot silently replace a built-in); `remove` takes one out. An entry may be a
lazy "package.module:attr" string, imported the first time it is looked up, so a registry can name code
that needs optional dependencies without importing them. An unknown name raises `UnknownNameError` (a
`KeyError` and a `ValueError`, so the CLI prints it as one line) listing the names and the closest match,
as Gymnasium's registry does.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Generic, TypeVar

__all__ = ["Registry", "UnknownNameError", "load_attribute"]

T = TypeVar("T")


class UnknownNameError(KeyError, ValueError):
    """A name no registry entry has; the message lists the known names."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def load_attribute(path: str) -> object:
    """The object a "package.module:attr" path names (attr may be dotted)."""
    module_name, colon, attr = path.partition(":")
    if not colon or not module_name or not attr:
        raise ValueError(f"not a 'package.module:attr' path: {path!r}")
    try:
        value: object = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load {path!r}: {exc}") from exc
    return value


class Registry(MutableMapping[str, T], Generic[T]):
    """Entries of one kind by name; `kind` and `plural` word the errors ("unknown planner 'x'; planners: ...")."""

    def __init__(self, kind: str, entries: Mapping[str, T | str] | None = None, *, plural: str | None = None):
        self.kind = kind
        self.plural = plural or f"{kind}s"
        self._entries: dict[str, T | str] = {}
        for name, entry in (entries or {}).items():
            self.register(name, entry)

    def register(self, name: str, entry: T | str) -> None:
        """Add `entry` under `name`; refused when the name is taken."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered; remove it first to replace it")
        self._entries[name] = entry

    def remove(self, name: str) -> None:
        if name not in self._entries:
            raise self.unknown(name)
        del self._entries[name]

    def unknown(self, name: str) -> UnknownNameError:
        """The error for a name this registry lacks: the closest names, and all of them."""
        close = difflib.get_close_matches(str(name), list(self._entries), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return UnknownNameError(f"unknown {self.kind} {name!r}{hint}; {self.plural}: {', '.join(self._entries)}")

    def __getitem__(self, name: str) -> T:
        try:
            entry = self._entries[name]
        except (KeyError, TypeError):
            raise self.unknown(name) from None
        if isinstance(entry, str):  # a lazy "module:attr" entry: imported once, on first use
            entry = load_attribute(entry)  # type: ignore[assignment]
            self._entries[name] = entry
        return entry  # type: ignore[return-value]

    def __setitem__(self, name: str, entry: T | str) -> None:
        self.register(name, entry)

    def __delitem__(self, name: str) -> None:
        self.remove(name)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self._entries)})"
