"""Go's path rules as BuildKit applies them: ``path.Clean``, ``filepath.Match`` patterns, the link limit.

Written once for both sides: the context (.dockerignore patterns, COPY sources) and the layer
writers (destinations, archive link targets).
"""

from __future__ import annotations

import re

__all__ = ["MAX_LINKS", "class_regex", "glob_regex", "go_clean", "has_wildcard", "unescape"]

MAX_LINKS = 40
"""Symlinks followed while resolving one path before giving up (Linux's own limit)."""


def go_clean(path: str) -> str:
    """Go's ``path.Clean``: one slash between elements, no ``.``, ``..`` folded (and stopped at
    ``/`` for a rooted path); ``.`` for an empty result."""
    rooted = path.startswith("/")
    parts: list[str] = []
    for seg in path.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not rooted:
                parts.append("..")
            continue
        parts.append(seg)
    out = "/".join(parts)
    if rooted:
        return "/" + out
    return out or "."


def class_regex(pattern: str, i: int) -> tuple[str, int]:
    """The ``[...]`` class starting at ``pattern[i] == '['`` as a Python regex, and the index
    after its ``]``; ValueError where Go's ``filepath.Match`` reports ErrBadPattern."""
    n = len(pattern)
    i += 1
    negate = i < n and pattern[i] == "^"
    if negate:
        i += 1

    def char() -> str:
        nonlocal i
        if i >= n or pattern[i] in "-]":
            raise ValueError("bad character class")
        if pattern[i] == "\\":
            i += 1
            if i >= n:
                raise ValueError("bad escape in character class")
        c = pattern[i]
        i += 1
        return c

    items: list[str] = []
    while True:
        if i >= n:
            raise ValueError("unclosed character class")
        if pattern[i] == "]" and items:
            break
        lo = char()
        hi = lo
        if i < n and pattern[i] == "-":
            i += 1
            hi = char()
            if hi < lo:
                raise ValueError("bad range in character class")
        items.append(re.escape(lo) if lo == hi else f"{re.escape(lo)}-{re.escape(hi)}")
    # A class never matches the separator (filepath.Match); the negation excludes it explicitly.
    body = "".join(items)
    return ("[^/" + body + "]" if negate else "(?!/)[" + body + "]"), i + 1


def glob_regex(pattern: str) -> re.Pattern[str]:
    """One path element of a Go ``filepath.Match`` pattern, as an anchored regex."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            cls, i = class_regex(pattern, i)
            out.append(cls)
            continue
        elif c == "\\":
            i += 1
            if i >= n:
                raise ValueError("trailing backslash")
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def has_wildcard(element: str) -> bool:
    """Whether a path element holds an unescaped ``*``, ``?`` or ``[`` (BuildKit's containsWildcards)."""
    i = 0
    while i < len(element):
        if element[i] == "\\":
            i += 2
            continue
        if element[i] in "*?[":
            return True
        i += 1
    return False


def unescape(element: str) -> str:
    """A pattern element with its ``\\`` escapes removed: the name it stands for literally."""
    return re.sub(r"\\(.)", r"\1", element, flags=re.DOTALL)
