"""The .dockerignore matcher: which context paths an ignore file leaves out, by moby/patternmatcher's rules.

A line starting with ``#`` is a comment (a ``#`` anywhere else is part of the pattern); lines
are trimmed, blank ones skipped, a leading ``!`` makes an exception, patterns are cleaned like
Go's ``filepath.Clean`` and lose a leading ``/``. ``*`` and ``?`` never match a ``/``, ``[...]``
is a class, ``\\`` escapes, ``**`` matches any number of folders. A path is ignored when it or
one of its parent folders matches; the last pattern that matches decides, so ``!dir/keep``
re-includes a file inside an ignored ``dir``. Which file is read, and what an ignored path
means for COPY, is the build context's business (:mod:`.context`).
"""

from __future__ import annotations

import re
from pathlib import Path

from pytest_termrl.errors import TaskFormatError

from .paths import class_regex, glob_regex, go_clean

__all__ = ["DockerIgnore"]


class _IgnorePattern:
    """One .dockerignore line, compiled the way moby/patternmatcher compiles it."""

    __slots__ = ("text", "exclusion", "kind", "regex")

    def __init__(self, text: str, exclusion: bool) -> None:
        self.text = text
        self.exclusion = exclusion
        glob_regex(text)  # the syntax check New() makes with filepath.Match; raises ValueError
        kind = "exact"
        out: list[str] = []
        pos, n, step = 0, len(text), 0
        while pos < n:
            ch = text[pos]
            pos += 1
            if ch == "*":
                if pos < n and text[pos] == "*":
                    pos += 1
                    if pos < n and text[pos] == "/":
                        pos += 1
                    if pos >= n:
                        if kind == "exact":
                            kind = "prefix"
                        else:
                            out.append(".*")
                            kind = "regex"
                    else:
                        out.append("(?:.*/)?")
                        kind = "regex"
                    if step == 0:
                        kind = "suffix"
                else:
                    out.append("[^/]*")
                    kind = "regex"
            elif ch == "?":
                out.append("[^/]")
                kind = "regex"
            elif ch == "\\":
                if pos < n:
                    out.append(re.escape(text[pos]))
                    pos += 1
                    kind = "regex"
                else:
                    out.append(re.escape("\\"))
            elif ch == "[":
                cls, pos = class_regex(text, pos - 1)
                out.append(cls)
                kind = "regex"
            else:
                out.append(re.escape(ch))
            step += 1
        self.kind = kind
        self.regex = re.compile("".join(out), re.DOTALL) if kind == "regex" else None

    def match(self, path: str) -> bool:
        if self.kind == "exact":
            return path == self.text
        if self.kind == "prefix":
            return path.startswith(self.text[:-2])
        if self.kind == "suffix":
            suffix = self.text[2:]
            return path.endswith(suffix) or (suffix.startswith("/") and path == suffix[1:])
        assert self.regex is not None
        return self.regex.fullmatch(path) is not None


def _read_ignore_lines(text: str) -> list[str]:
    """The patterns of an ignore file, as moby/patternmatcher/ignorefile.ReadAll reads them."""
    out: list[str] = []
    for number, line in enumerate(text.splitlines()):
        if number == 0:
            line = line.removeprefix("\ufeff")
        if line.startswith("#"):
            continue
        line = line.strip()
        if not line:
            continue
        invert = line.startswith("!")
        if invert:
            line = line[1:].strip()
        if line:
            line = go_clean(line)
            if len(line) > 1 and line.startswith("/"):
                line = line[1:]
        out.append("!" + line if invert else line)
    return out


class DockerIgnore:
    """The patterns of one ignore file, in order (none without a file): what the engine leaves out."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._patterns: list[_IgnorePattern] = []
        if path is not None:
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
            for line in _read_ignore_lines(text):
                cleaned = go_clean(line)
                exclusion = cleaned.startswith("!")
                if exclusion:
                    if len(cleaned) == 1:
                        raise TaskFormatError(path, None, 'illegal exclusion pattern: "!"')
                    cleaned = cleaned[1:]
                try:
                    self._patterns.append(_IgnorePattern(cleaned, exclusion))
                except ValueError as err:
                    raise TaskFormatError(path, None, f"bad pattern {line!r}: {err}") from None
        self.exceptions = any(p.exclusion for p in self._patterns)
        """Whether a ``!`` line may bring a path back inside an ignored folder."""

    def ignored(self, rel: str) -> bool:
        """Whether ``rel`` (a posix path relative to the context root) is left out."""
        path = go_clean(rel.lstrip("/")) if rel.strip("/") else "."
        if path == "." or not self._patterns:
            return False
        parents: list[str] = []
        if "/" in path:
            elems = path.split("/")[:-1]
            parents = ["/".join(elems[: i + 1]) for i in range(len(elems))]
        matched = False
        for pattern in self._patterns:
            if pattern.exclusion != matched:
                continue
            hit = pattern.match(path) or any(pattern.match(p) for p in parents)
            if hit:
                matched = not pattern.exclusion
        return matched
