"""One registry idiom: a lazy table from a name to the module and attribute that make it.

Agents, sandbox backends, importers, graders, parsers, fault families and run modes are each
one such table. An entry names its module as text, so nothing is imported until the name is
chosen; a module that needs an optional extra says which, and the error of a missing one
names the ``pip install`` that brings it. Third parties add an object directly with
:meth:`Registry.register`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar, cast

from .errors import TermrlError

T = TypeVar("T")


@dataclass(frozen=True)
class Entry:
    """Where a registered thing lives: ``module`` (absolute, dotted) and its ``attr``; ``extra`` it needs.

    ``attr`` may name several attributes (a tuple): the table's ``make`` builds one object of them.
    """

    module: str
    attr: str | tuple[str, ...]
    extra: str | None = None


class UnknownName(TermrlError, KeyError):
    """A name no entry of the table has; the message lists the known ones."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class MissingExtra(TermrlError, ImportError):
    """The module of an entry needs packages of an optional extra that are not installed."""


_REQUIRED: Any = object()


class Registry(Mapping[str, T], Generic[T]):
    """A table from name to :class:`Entry` (loaded when asked for) or to an object registered directly.

    An entry may also be the object itself, where its module is imported anyway; ``make``
    turns what an :class:`Entry` names into the table's object (a class into its instance).

    It reads as a mapping (``table[name]``, ``name in table``, iteration, ``items()``,
    ``values()``), in the order its entries were written and then registered; reading a
    value loads its module. :meth:`names` is the sorted list a message shows.
    """

    def __init__(self, kind: str, entries: Mapping[str, Entry | T], aliases: Mapping[str, str] | None = None, *,
                 make: Callable[..., T] | None = None) -> None:
        self.kind = kind
        self._entries: dict[str, Entry | Any] = dict(entries)
        self.aliases = dict(aliases or {})
        self._make = make

    def register(self, name: str, obj: T) -> None:
        """Add (or replace) ``name`` with an object already made: a plugin's factory, a test's stand-in."""
        self._entries[name] = obj

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.aliases.get(name, name) in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def resolve(self, name: str) -> str:
        """The table's own name for ``name`` (an alias resolved); :class:`UnknownName` when there is none."""
        key = self.aliases.get(name, name)
        if key not in self._entries:
            raise UnknownName(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")
        return key

    def get(self, name: str, default: Any = _REQUIRED) -> T:  # type: ignore[override]
        """The object ``name`` stands for, importing its module now if it was not loaded yet.

        An unknown name raises :class:`UnknownName`, unless a ``default`` is given (returned instead).
        """
        if default is not _REQUIRED and name not in self:
            return default
        key = self.resolve(name)
        entry = self._entries[key]
        if not isinstance(entry, Entry):
            return entry
        try:
            module = importlib.import_module(entry.module)
        except ImportError as exc:
            if entry.extra is None or (exc.name or "").startswith("pytest_termrl"):
                raise
            raise MissingExtra(
                f"the {self.kind} {key!r} needs the extra [{entry.extra}] ({exc.name or exc} is not installed): "
                f"pip install 'pytest-termrl[{entry.extra}]'"
            ) from exc
        if isinstance(entry.attr, tuple):
            parts = [getattr(module, attr) for attr in entry.attr]
            # Without ``make``, an entry naming several attributes stands for their tuple (T is a tuple type).
            obj = self._make(*parts) if self._make is not None else cast(T, tuple(parts))
        else:
            obj = getattr(module, entry.attr)
            obj = self._make(obj) if self._make is not None else obj
        self._entries[key] = obj
        return obj
