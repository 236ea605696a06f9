"""What ``COPY`` and ``ADD`` put into an image layer from a build context, and nothing else.

The rules followed (BuildKit's, unless said otherwise):

.dockerignore (moby/patternmatcher and its ignorefile reader)
    A line starting with ``#`` is a comment (a ``#`` anywhere else is part of the pattern);
    lines are trimmed, blank ones skipped, a leading ``!`` makes an exception, patterns are
    cleaned like Go's ``filepath.Clean`` and lose a leading ``/``. ``*`` and ``?`` never match
    a ``/``, ``[...]`` is a class, ``\\`` escapes, ``**`` matches any number of folders. A path
    is ignored when it or one of its parent folders matches; the last pattern that matches
    decides, so ``!dir/keep`` re-includes a file inside an ignored ``dir``. The ignore file is
    ``<Dockerfile name>.dockerignore`` beside the Dockerfile when there is one, else the
    context's ``.dockerignore``. Ignored paths do not exist for COPY: a source that is only
    ignored paths is "not found", and an ignored folder is made only to hold what an exception
    brings back inside it.

Sources
    Relative to the context root (a leading ``/`` too); trailing slashes do not matter; each
    path element may hold Go ``filepath.Match`` wildcards; matches come in name order. Stricter
    than the engine, which silently clamps ``../`` to the root: a source that climbs out, or
    that reaches through a symlink leading out of the context (an absolute link target counts
    as out), is refused, and so is one that matches nothing. A source named directly is
    followed if it is a symlink (the engine's FollowSymlinks); symlinks inside a copied folder
    are copied as symlinks.

Destination
    Relative to WORKDIR unless absolute; ``..`` stops at ``/``. A destination ending in ``/``
    (or ``.``, or empty), or a folder the image already has, means "into". Several source
    paths (after wildcards) need a trailing ``/``. A folder source copies its contents.
    Missing folders on the way are made 0755 and owned by the ``--chown`` owner (root without
    it); a file never replaces a folder, nor a folder a file. A symlink the layer already holds
    on the destination's path is followed inside the layer, never out of it.

Metadata
    Owner: ``--chown`` or 0:0, then shifted by ``host_id`` (the layer sits in a user
    namespace). Mode: the source's (setuid bits included) unless ``--chmod`` is given, octal
    (exact) or symbolic (chmod(1), Dockerfile 1.14; no umask), for files and folders alike.
    Times: kept. Hard links between copied files stay hard links.

ADD of a local archive
    Detected by content (gzip, bzip2, xz or plain tar whose first header reads), never by
    name; unpacked into the destination as a folder. Members keep their mode and times and
    their own numeric owners unless ``--chown`` is given (BuildKit v0.23 and later apply it to
    every member); folders implied by a member are made 0755 root. Refused, with the member
    named: absolute names, ``..``, device files, unknown member types, a symlink or hard link
    whose target leaves the destination, and anything that would be written through a link to
    outside it. zstd archives are not unpacked here (no standard-library decoder).

Remote sources (``http(s)://``, ``git://``, ``ssh://``, ``user@host:path``) are for the
builder to refuse: there is no network.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import posixpath
import re
import shutil
import stat
import tarfile
import zlib
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Iterator, cast

from pytest_termrl.errors import TaskFormatError

__all__ = [
    "Owner", "SymbolicMode", "BuildContext", "copy_into", "add_archive", "is_archive", "is_remote",
    "parse_chown", "parse_chmod",
]

_MAX_LINKS = 40
"""Symlinks followed while resolving one path before giving up (Linux's own limit)."""


@dataclass(frozen=True)
class Owner:
    """The owner ``--chown`` names, as numbers inside the image."""

    uid: int
    gid: int


# ---------------------------------------------------------------------------------------------
# Go path and pattern semantics


def _go_clean(path: str) -> str:
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


def _class_regex(pattern: str, i: int) -> tuple[str, int]:
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


def _glob_regex(pattern: str) -> re.Pattern[str]:
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
            cls, i = _class_regex(pattern, i)
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


def _has_wildcard(element: str) -> bool:
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


def _unescape(element: str) -> str:
    return re.sub(r"\\(.)", r"\1", element, flags=re.DOTALL)


# ---------------------------------------------------------------------------------------------
# .dockerignore


class _IgnorePattern:
    """One .dockerignore line, compiled the way moby/patternmatcher compiles it."""

    __slots__ = ("text", "exclusion", "kind", "regex")

    def __init__(self, text: str, exclusion: bool) -> None:
        self.text = text
        self.exclusion = exclusion
        _glob_regex(text)  # the syntax check New() makes with filepath.Match; raises ValueError
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
                cls, pos = _class_regex(text, pos - 1)
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
            line = _go_clean(line)
            if len(line) > 1 and line.startswith("/"):
                line = line[1:]
        out.append("!" + line if invert else line)
    return out


# ---------------------------------------------------------------------------------------------
# The build context


def _within(path: str, base: str) -> bool:
    """Whether the image path ``path`` is ``base`` or below it."""
    return base == "/" or path == base or path.startswith(base.rstrip("/") + "/")


class _NotFound(Exception):
    """A context path that the engine would not see (missing, or behind .dockerignore)."""

    def __init__(self, ignored: bool) -> None:
        super().__init__()
        self.ignored = ignored


class _Escapes(Exception):
    """A context path that climbs out of the context, or is reached through a link that does."""

    def __init__(self, how: str) -> None:
        super().__init__(how)
        self.how = how


class BuildContext:
    """A context folder and its .dockerignore: what COPY can see and what its sources name."""

    def __init__(self, root: Path, dockerignore: Path | None = None) -> None:
        self.root = Path(os.path.realpath(os.fspath(root)))
        if not self.root.is_dir():
            raise TaskFormatError(root, None, "the build context must be a folder")
        if dockerignore is None:
            default = self.root / ".dockerignore"
            dockerignore = default if default.is_file() else None
        elif not Path(dockerignore).is_file():
            raise TaskFormatError(dockerignore, None, "the ignore file does not exist")
        self.dockerignore = Path(dockerignore) if dockerignore is not None else None
        self._patterns: list[_IgnorePattern] = []
        if self.dockerignore is not None:
            text = self.dockerignore.read_text(encoding="utf-8", errors="surrogateescape")
            for line in _read_ignore_lines(text):
                cleaned = _go_clean(line)
                exclusion = cleaned.startswith("!")
                if exclusion:
                    if len(cleaned) == 1:
                        raise TaskFormatError(self.dockerignore, None, 'illegal exclusion pattern: "!"')
                    cleaned = cleaned[1:]
                try:
                    self._patterns.append(_IgnorePattern(cleaned, exclusion))
                except ValueError as err:
                    raise TaskFormatError(self.dockerignore, None, f"bad pattern {line!r}: {err}") from None
        self._exceptions = any(p.exclusion for p in self._patterns)

    @classmethod
    def for_dockerfile(cls, root: Path, dockerfile: Path) -> BuildContext:
        """The context of a build of ``dockerfile``: ``<Dockerfile name>.dockerignore`` beside the
        Dockerfile wins over the context's ``.dockerignore``, as BuildKit picks it."""
        dockerfile = Path(dockerfile)
        specific = dockerfile.with_name(dockerfile.name + ".dockerignore")
        if specific.is_file():
            return cls(root, specific)
        return cls(root)

    def __repr__(self) -> str:
        return f"BuildContext({str(self.root)!r}, dockerignore={str(self.dockerignore) if self.dockerignore else None!r})"

    # -- ignore rules --------------------------------------------------------------------------

    def ignored(self, rel: str) -> bool:
        """Whether .dockerignore leaves out ``rel`` (a posix path relative to the root)."""
        path = _go_clean(rel.lstrip("/")) if rel.strip("/") else "."
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

    def _brings_back(self, rel: str) -> bool:
        """Whether an ignored folder holds something an exception pattern re-includes."""
        if not self._exceptions:
            return False
        host = self.root / rel
        try:
            names = sorted(os.listdir(host))
        except OSError:
            return False
        for name in names:
            child = f"{rel}/{name}" if rel else name
            if not self.ignored(child):
                return True
            st = os.lstat(host / name)
            if stat.S_ISDIR(st.st_mode) and self._brings_back(child):
                return True
        return False

    def _visible(self, rel: str, is_dir: bool) -> bool:
        """Whether the engine's copy of the context has ``rel``."""
        if not rel or not self.ignored(rel):
            return True
        return is_dir and self._brings_back(rel)

    # -- resolving -----------------------------------------------------------------------------

    def _resolve(self, parts: list[str], follow_leaf: bool = True) -> tuple[list[str], os.stat_result]:
        """The real path (elements under the root) that ``parts`` reaches, following symlinks in
        the context; _Escapes where it leaves the context, _NotFound where the engine would not
        see it."""
        todo = [p for p in parts if p not in ("", ".")]
        resolved: list[str] = []
        hops = 0
        via = ""
        st = os.lstat(self.root)
        while todo:
            part = todo.pop(0)
            if part == "..":
                if not resolved:
                    raise _Escapes(f"the symlink {via} points outside the context" if via else "it climbs above the context root")
                resolved.pop()
                st = os.lstat(self.root.joinpath(*resolved))
                continue
            if not stat.S_ISDIR(st.st_mode):
                raise _NotFound(False)
            candidate = resolved + [part]
            try:
                st = os.lstat(self.root.joinpath(*candidate))
            except (FileNotFoundError, NotADirectoryError):
                raise _NotFound(False) from None
            rel = "/".join(candidate)
            if stat.S_ISLNK(st.st_mode) and (todo or follow_leaf):
                if self.ignored(rel):
                    raise _NotFound(True)
                hops += 1
                if hops > _MAX_LINKS:
                    raise _NotFound(False)
                target = os.readlink(self.root.joinpath(*candidate))
                if target.startswith("/"):
                    raise _Escapes(f"the symlink {rel} points to the absolute path {target}")
                via = f"{rel} (-> {target})"
                todo = [p for p in target.split("/") if p not in ("", ".")] + todo
                st = os.lstat(self.root.joinpath(*resolved))
                continue
            resolved = candidate
        rel = "/".join(resolved)
        if not self._visible(rel, stat.S_ISDIR(st.st_mode)):
            raise _NotFound(True)
        return resolved, st

    def _rel_of(self, path: Path | str, where: str, field: str) -> list[str]:
        """The elements, under the root, of a path that ``sources`` returned."""
        absolute = os.path.abspath(os.fspath(path))
        rel = os.path.relpath(absolute, self.root)
        if rel == ".":
            return []
        if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
            raise TaskFormatError(where, field, f"{path} is not inside the build context {self.root}")
        return rel.split(os.sep)

    def _real(self, path: Path | str, where: str, field: str) -> tuple[str, os.stat_result]:
        """The real relative path (posix, "" for the root) and stat of a source path, followed."""
        parts = self._rel_of(path, where, field)
        try:
            resolved, st = self._resolve(parts)
        except _Escapes as esc:
            raise TaskFormatError(where, field, f"source {'/'.join(parts) or '.'} leaves the build context: {esc.how}") from None
        except _NotFound as nf:
            why = " (excluded by .dockerignore)" if nf.ignored else ""
            raise TaskFormatError(where, field, f"source {'/'.join(parts) or '.'} not found in the build context {self.root}{why}") from None
        return "/".join(resolved), st

    def sources(self, pattern: str, where: str) -> list[Path]:
        """The context paths a COPY/ADD source names (not followed: the builder copies a link
        named here as what it points to, under the link's name)."""
        field = "COPY"
        depth = 0
        for e in pattern.split("/"):
            if e == "..":
                depth -= 1
                if depth < 0:
                    raise TaskFormatError(where, field, f"source {pattern!r} leaves the build context {self.root}")
            elif e not in ("", "."):
                depth += 1
        elements = [e for e in _go_clean("/" + pattern).split("/") if e]
        candidates: list[list[str]] = [[]]
        wildcard_seen = False
        hidden = 0
        for index, element in enumerate(elements):
            last = index == len(elements) - 1
            nxt: list[list[str]] = []
            wild = _has_wildcard(element)
            if wild:
                try:
                    regex = _glob_regex(element)
                except ValueError as err:
                    raise TaskFormatError(where, field, f"bad pattern {pattern!r}: {err}") from None
            for cand in candidates:
                try:
                    real, st = self._resolve(cand)
                except _NotFound as nf:
                    hidden += int(nf.ignored)
                    continue
                except _Escapes as esc:
                    raise TaskFormatError(where, field, f"source {pattern!r} leaves the build context: {esc.how}") from None
                if not stat.S_ISDIR(st.st_mode):
                    continue
                if not wild:
                    nxt.append(cand + [_unescape(element)])
                    continue
                folder = self.root.joinpath(*real)
                for name in sorted(os.listdir(folder)):
                    if not regex.fullmatch(name):
                        continue
                    child_st = os.lstat(folder / name)
                    rel = "/".join(real + [name])
                    if not self._visible(rel, stat.S_ISDIR(child_st.st_mode)):
                        hidden += 1
                        continue
                    # The engine walks (without following links) once a wildcard appeared.
                    if not last and not stat.S_ISDIR(child_st.st_mode):
                        continue
                    nxt.append(cand + [name])
            if wild:
                wildcard_seen = True
            elif wildcard_seen and not last:
                nxt = [c for c in nxt if self._is_real_dir(c)]
            candidates = nxt
        found: list[Path] = []
        ignored_hits = hidden
        for cand in candidates:
            try:
                self._resolve(cand)
            except _Escapes as esc:
                raise TaskFormatError(where, field, f"source {pattern!r} leaves the build context: {esc.how}") from None
            except _NotFound as nf:
                ignored_hits += int(nf.ignored)
                continue
            found.append(self.root.joinpath(*cand))
        if not found:
            why = " (every match is excluded by .dockerignore)" if ignored_hits else ""
            raise TaskFormatError(where, field, f"source {pattern!r} matches nothing in the build context {self.root}{why}")
        return found

    def _is_real_dir(self, parts: list[str]) -> bool:
        try:
            return stat.S_ISDIR(os.lstat(self.root.joinpath(*parts)).st_mode)
        except OSError:
            return False

    # -- walking -------------------------------------------------------------------------------

    def _entries(self, real: str) -> Iterator[tuple[str, str, os.stat_result]]:
        """What copying the folder ``real`` (relative to the root) writes: (path inside the
        folder, host path, lstat) in name order, parents first, ignored paths left out, an
        ignored folder kept only to hold a re-included path."""
        folder = os.path.join(self.root, real) if real else os.fspath(self.root)

        def walk(host: str, rel: str, inner: str) -> Iterator[tuple[str, str, os.stat_result]]:
            for name in sorted(os.listdir(host)):
                child_host = os.path.join(host, name)
                child_rel = f"{rel}/{name}" if rel else name
                child_inner = f"{inner}/{name}" if inner else name
                st = os.lstat(child_host)
                is_dir = stat.S_ISDIR(st.st_mode)
                if self.ignored(child_rel):
                    if is_dir and self._exceptions:
                        inside = list(walk(child_host, child_rel, child_inner))
                        if inside:
                            yield child_inner, child_host, st
                            yield from inside
                    continue
                yield child_inner, child_host, st
                if is_dir:
                    yield from walk(child_host, child_rel, child_inner)

        yield from walk(folder, real, "")

    def digest(self, paths: list[Path]) -> str:
        """sha256 over what COPY of ``paths`` writes: for each source its name, then every entry's
        relative name, kind and mode, a file's bytes, a symlink's target, in name order; ignored
        paths, owners and times left out."""
        h = hashlib.sha256()
        for path in paths:
            named = "/".join(self._rel_of(path, "digest", "COPY"))
            real, st = self._real(path, "digest", "COPY")
            h.update(b"source\0" + named.encode("utf-8", "surrogateescape") + b"\0")
            if stat.S_ISDIR(st.st_mode):
                for inner, host, est in self._entries(real):
                    h.update(_entry_digest(inner, host, est))
            else:
                h.update(_entry_digest("", os.path.join(self.root, real), st))
        return "sha256:" + h.hexdigest()


def _entry_digest(inner: str, host: str, st: os.stat_result) -> bytes:
    head = f"{inner}\0{st.st_mode:o}\0".encode("utf-8", "surrogateescape")
    if stat.S_ISLNK(st.st_mode):
        return head + b"L" + os.fsencode(os.readlink(host)) + b"\0"
    if stat.S_ISREG(st.st_mode):
        fh = hashlib.sha256()
        with open(host, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                fh.update(chunk)
        return head + b"F" + fh.hexdigest().encode() + b"\0"
    if stat.S_ISDIR(st.st_mode):
        return head + b"D\0"
    return head + b"S\0"


# ---------------------------------------------------------------------------------------------
# --chown and --chmod


def _find_line(text: str, name: str) -> list[str] | None:
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split(":")
        if fields[0] == name:
            return fields
    return None


def _number(value: str) -> int | None:
    if value.isdigit() and value.isascii():
        number = int(value)
        if number < 2**32:
            return number
    return None


def parse_chown(value: str, passwd: str, group: str, where: str) -> Owner:
    """``--chown``'s owner: ``user``, ``user:group``, ``uid``, ``uid:gid``, ``:group`` and mixes,
    names looked up in the image's /etc/passwd and /etc/group text. A user alone keeps its
    primary group when named and gives gid = uid when numeric (BuildKit's readUser); a name the
    files lack is an error."""
    field = "--chown"
    if not value.strip():
        raise TaskFormatError(where, field, "an empty --chown names no owner")
    user, sep, grp = value.partition(":")
    uid = gid = 0
    number = _number(user)
    if number is not None:
        uid = gid = number
    elif user:
        fields = _find_line(passwd, user)
        if fields is None:
            raise TaskFormatError(where, field, f"no user {user!r} in the image's /etc/passwd")
        if len(fields) < 4 or _number(fields[2]) is None or _number(fields[3]) is None:
            raise TaskFormatError(where, field, f"the image's /etc/passwd line for {user!r} is malformed")
        uid, gid = int(fields[2]), int(fields[3])
    if sep and grp:
        number = _number(grp)
        if number is not None:
            gid = number
        else:
            fields = _find_line(group, grp)
            if fields is None:
                raise TaskFormatError(where, field, f"no group {grp!r} in the image's /etc/group")
            if len(fields) < 3 or _number(fields[2]) is None:
                raise TaskFormatError(where, field, f"the image's /etc/group line for {grp!r} is malformed")
            gid = int(fields[2])
    return Owner(uid, gid)


_SYMBOLIC = re.compile(r"[ugoa]*(?:[-+=](?:[rwxXst]*|[ugo]))+")


@dataclass(frozen=True)
class SymbolicMode:
    """A symbolic ``--chmod`` (``u+x``, ``go-w``, ``u=rwX,go=rX``, ``g=u``), applied to each
    copied file's own mode as chmod(1) does, with no umask."""

    text: str

    def __str__(self) -> str:
        return self.text

    def apply(self, mode: int, is_dir: bool) -> int:
        original = mode & 0o7777
        cur = original
        any_exec = bool(original & 0o111) or is_dir
        for clause in self.text.split(","):
            m = re.match(r"[ugoa]*", clause)
            assert m is not None
            who = m.group(0)
            rest = clause[len(who):]
            everyone = not who or "a" in who
            rwx = 0o777 if everyone else sum({"u": 0o700, "g": 0o070, "o": 0o007}[w] for w in set(who))
            ids = 0o6000 if everyone else (0o4000 if "u" in who else 0) | (0o2000 if "g" in who else 0)
            sticky_ok = everyone or "u" in who or "g" in who
            for op, perms in re.findall(r"([-+=])([ugo]|[rwxXst]*)", rest):
                if perms in ("u", "g", "o"):
                    shift = {"u": 6, "g": 3, "o": 0}[perms]
                    v = (cur >> shift) & 0o7
                    bits = (v << 6 | v << 3 | v) & rwx
                else:
                    bits = 0
                    for p in perms:
                        if p == "r":
                            bits |= 0o444 & rwx
                        elif p == "w":
                            bits |= 0o222 & rwx
                        elif p == "x" or (p == "X" and any_exec):
                            bits |= 0o111 & rwx
                        elif p == "s":
                            bits |= ids
                        elif p == "t" and sticky_ok:
                            bits |= 0o1000
                if op == "+":
                    cur |= bits
                elif op == "-":
                    cur &= ~bits
                else:
                    cur = (cur & ~(rwx | ids | (0o1000 if "t" in perms else 0))) | bits
        return cur & 0o7777


def parse_chmod(value: str, where: str) -> int | SymbolicMode:
    """``--chmod``: octal (``755``, ``0755``, up to ``7777``) as an int, or, since Dockerfile
    1.14 documents it, a symbolic mode as a SymbolicMode; anything else is an error."""
    text = value.strip()
    if re.fullmatch(r"[0-7]+", text):
        number = int(text, 8)
        if number <= 0o7777:
            return number
        raise TaskFormatError(where, "--chmod", f"{value!r} sets bits beyond 7777")
    if text and all(_SYMBOLIC.fullmatch(c) for c in text.split(",")):
        return SymbolicMode(text)
    raise TaskFormatError(where, "--chmod", f"{value!r} is neither an octal mode (0755) nor a symbolic one (u+x, go-w, u=rwX)")


def _mode_for(src_mode: int, chmod: int | SymbolicMode | None, is_dir: bool) -> int:
    if chmod is None:
        return stat.S_IMODE(src_mode)
    if isinstance(chmod, SymbolicMode):
        return chmod.apply(stat.S_IMODE(src_mode), is_dir)
    return chmod & 0o7777


# ---------------------------------------------------------------------------------------------
# Remote sources and archives


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_SCP_LIKE = re.compile(r"[^@/:]+@[^/:]+:")


def is_remote(source: str) -> bool:
    """Whether ``source`` names something on the network (a URL or a git address): the builder
    refuses those, having none."""
    return bool(_SCHEME.match(source) or _SCP_LIKE.match(source))


_GZIP = b"\x1f\x8b\x08"
_BZIP2 = b"BZh"
_XZ = b"\xfd7zXZ\x00"
_ZSTD = b"\x28\xb5\x2f\xfd"


def _open_decompressed(path: Path, stack: ExitStack) -> IO[bytes] | None:
    """``path``'s bytes, decompressed by content (what the engine's DecompressStream detects),
    closed with ``stack``; None for zstd, which the standard library cannot read."""
    raw = stack.enter_context(open(path, "rb"))
    head = raw.read(6)
    raw.seek(0)
    stream: IO[bytes]
    if head.startswith(_GZIP):
        stream = cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))
    elif head.startswith(_BZIP2):
        stream = bz2.BZ2File(raw, mode="rb")
    elif head.startswith(_XZ):
        stream = lzma.LZMAFile(raw, mode="rb")
    elif head.startswith(_ZSTD):
        return None
    else:
        return raw
    return stack.enter_context(stream)


_READ_ERRORS = (tarfile.TarError, OSError, EOFError, lzma.LZMAError, zlib.error, ValueError)


def is_archive(path: Path) -> bool:
    """Whether ADD unpacks ``path``: a regular file (not a symlink) whose bytes, decompressed if
    gzip, bzip2 or xz, start with a readable tar header. The name plays no part."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    try:
        with ExitStack() as stack:
            stream = _open_decompressed(Path(path), stack)
            if stream is None:
                return False
            with tarfile.open(fileobj=stream, mode="r|") as tf:
                return tf.next() is not None
    except _READ_ERRORS:
        return False


# ---------------------------------------------------------------------------------------------
# Writing into the layer


class _Layer:
    """The folder that stands for the image's ``/``: every write checks each folder on its way
    with lstat, so none goes through a symlink; symlinks the layer holds are only ever followed
    as image paths, inside the layer."""

    def __init__(self, layer: Path, where: str, field: str, host_id: Callable[[int], int],
                 existing: Callable[[str], str | None] | None) -> None:
        self.root = os.path.realpath(os.fspath(layer))
        if not os.path.isdir(self.root):
            raise TaskFormatError(where, field, f"the layer folder {layer} does not exist")
        self.where = where
        self.field = field
        self.host_id = host_id
        self.existing = existing
        self.written: list[str] = []
        self._seen: set[str] = set()

    def fail(self, expected: str) -> TaskFormatError:
        return TaskFormatError(self.where, self.field, expected)

    def host(self, ipath: str) -> str:
        return self.root if ipath == "/" else os.path.join(self.root, ipath.lstrip("/"))

    def note(self, ipath: str) -> None:
        if ipath not in self._seen:
            self._seen.add(ipath)
            self.written.append(ipath)

    def lstat(self, ipath: str) -> os.stat_result | None:
        try:
            return os.lstat(self.host(ipath))
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            raise self.fail(f"{ipath}: a path element on the way is not a folder") from None

    def lower(self, ipath: str) -> str | None:
        """What the image below has at ``ipath``: "dir", "file" or None."""
        if self.existing is None:
            return None
        kind = self.existing(ipath)
        return None if kind is None else ("dir" if kind == "dir" else "file")

    def kind(self, ipath: str) -> str | None:
        """"dir", "file" or None for what the image will have at ``ipath`` (this layer over the lower)."""
        st = self.lstat(ipath)
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                return "dir"
            if _is_whiteout(st):
                return None
            return "file"
        return self.lower(ipath)

    def resolve(self, ipath: str, follow_leaf: bool = True) -> str:
        """``ipath`` with the symlinks this layer holds followed as image paths (``..`` stops at
        ``/``), so the result names a place inside the layer."""
        todo = [p for p in ipath.split("/") if p not in ("", ".")]
        cur: list[str] = []
        hops = 0
        while todo:
            part = todo.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if cur:
                    cur.pop()
                continue
            if not todo and not follow_leaf:
                cur.append(part)
                break
            candidate = "/" + "/".join(cur + [part])
            st = self.lstat(candidate)
            if st is not None and stat.S_ISLNK(st.st_mode):
                hops += 1
                if hops > _MAX_LINKS:
                    raise self.fail(f"{ipath}: too many levels of symbolic links in the layer")
                target = os.readlink(self.host(candidate))
                if target.startswith("/"):
                    cur = []
                todo = [p for p in target.split("/") if p not in ("", ".")] + todo
                continue
            cur.append(part)
        return "/" + "/".join(cur)

    def ensure_dir(self, ipath: str, uid: int, gid: int) -> None:
        """Make ``ipath`` and the folders above it a real folder in the layer. A folder the image
        lacks is made 0755 and owned by ``uid:gid`` (and reported as written); one only the
        lower image has is made 0755 root to hold what goes inside, and not reported."""
        parts = [p for p in ipath.split("/") if p]
        for i in range(len(parts)):
            prefix = "/" + "/".join(parts[: i + 1])
            st = self.lstat(prefix)
            if st is not None:
                if stat.S_ISDIR(st.st_mode):
                    continue
                if stat.S_ISLNK(st.st_mode):
                    raise self.fail(f"{prefix} is a symbolic link in the layer; nothing is written through it")
                if not _is_whiteout(st):
                    raise self.fail(f"{prefix} is not a folder, so {ipath} cannot be made")
                os.unlink(self.host(prefix))
                below = None
            else:
                below = self.lower(prefix)
                if below == "file":
                    raise self.fail(f"{prefix} is a file in the image, so {ipath} cannot be made")
            host = self.host(prefix)
            os.mkdir(host, 0o755)
            if below == "dir":
                os.chown(host, self.host_id(0), self.host_id(0))
            else:
                os.chown(host, self.host_id(uid), self.host_id(gid))
                self.note(prefix)
            os.chmod(host, 0o755)

    def clear(self, ipath: str) -> None:
        """Remove whatever the layer holds at ``ipath`` (a folder with its contents)."""
        st = self.lstat(ipath)
        if st is None:
            return
        host = self.host(ipath)
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(host)
        else:
            os.unlink(host)


def _is_whiteout(st: os.stat_result) -> bool:
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == 0


def _times(host: str, atime_ns: int, mtime_ns: int) -> None:
    os.utime(host, ns=(atime_ns, mtime_ns), follow_symlinks=False)


def _write_file(host: str, data: IO[bytes], uid: int, gid: int, mode: int) -> None:
    fd = os.open(host, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with open(fd, "wb") as out:
        shutil.copyfileobj(data, out, 1 << 20)
        os.fchown(out.fileno(), uid, gid)
        os.fchmod(out.fileno(), mode)


def _dest_path(dest: str, workdir: str) -> tuple[str, bool]:
    """The absolute image path of a destination and whether it means "into" (ends in ``/``,
    or is ``.`` or empty)."""
    into = dest in ("", ".") or dest.endswith("/")
    base = workdir if workdir.startswith("/") else "/" + workdir
    joined = dest if dest.startswith("/") else f"{base}/{dest}"
    return _go_clean("/" + joined), into


def copy_into(layer: Path, context: BuildContext, sources: list[Path], dest: str, *, where: str,
              owner: Owner | None, chmod: int | SymbolicMode | None, host_id: Callable[[int], int], workdir: str,
              existing: Callable[[str], str | None]) -> list[str]:
    """Write into ``layer`` (the image's ``/``) what ``COPY sources... dest`` writes, and return
    the absolute image paths written (folders only the lower image has, made to hold what goes
    inside, are not among them). ``sources`` are paths ``context.sources`` returned."""
    field = "COPY"
    if not sources:
        raise TaskFormatError(where, field, "no source files were specified")
    target_abs, into = _dest_path(dest, workdir)
    if len(sources) > 1 and not into:
        raise TaskFormatError(where, field, f"with more than one source file ({len(sources)}), "
                              f"the destination {dest!r} must be a folder and end with a /")
    out = _Layer(layer, where, field, host_id, existing)
    uid, gid = (owner.uid, owner.gid) if owner is not None else (0, 0)
    huid, hgid = host_id(uid), host_id(gid)
    base = out.resolve(target_abs)
    links: dict[tuple[int, int], str] = {}
    dir_times: list[tuple[str, int, int]] = []

    def put_nondir(ipath: str, host_src: str, st: os.stat_result) -> None:
        if out.kind(ipath) == "dir":
            raise out.fail(f"cannot replace the folder {ipath} with a file")
        out.clear(ipath)
        host = out.host(ipath)
        mode = st.st_mode
        if stat.S_ISLNK(mode):
            os.symlink(os.readlink(host_src), host)
            os.chown(host, huid, hgid, follow_symlinks=False)
        elif stat.S_ISREG(mode):
            key = (st.st_dev, st.st_ino)
            first = links.get(key) if st.st_nlink > 1 else None
            if first is not None and out.lstat(first) is not None:
                os.link(out.host(first), host, follow_symlinks=False)
            else:
                with open(os.open(host_src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb") as data:
                    _write_file(host, data, huid, hgid, _mode_for(mode, chmod, False))
                if st.st_nlink > 1:
                    links[key] = ipath
        else:
            raise out.fail(f"{host_src} is a special file (fifo, socket or device); COPY takes files, folders and symlinks")
        _times(host, st.st_atime_ns, st.st_mtime_ns)
        out.note(ipath)

    def put_dir(ipath: str, st: os.stat_result) -> None:
        cur = out.lstat(ipath)
        host = out.host(ipath)
        if cur is not None and not stat.S_ISDIR(cur.st_mode) and not _is_whiteout(cur):
            raise out.fail(f"cannot copy a folder to {ipath}, which is not a folder")
        if cur is None or _is_whiteout(cur):
            if cur is not None:
                os.unlink(host)
            elif out.lower(ipath) == "file":
                raise out.fail(f"cannot copy a folder to {ipath}, which is a file in the image")
            os.mkdir(host, 0o700)
        os.chown(host, huid, hgid)
        os.chmod(host, _mode_for(st.st_mode, chmod, True))
        dir_times.append((host, st.st_atime_ns, st.st_mtime_ns))
        out.note(ipath)

    for source in sources:
        real, st = context._real(source, where, field)
        named = context._rel_of(source, where, field)
        if stat.S_ISDIR(st.st_mode):
            kind = out.kind(base)
            if kind == "file":
                raise out.fail(f"cannot copy the folder {'/'.join(named) or '.'} onto the file {base}")
            out.ensure_dir(base, uid, gid)
            for inner, host_src, est in context._entries(real):
                ipath = posixpath.join(base, inner)
                if stat.S_ISDIR(est.st_mode):
                    put_dir(ipath, est)
                else:
                    put_nondir(ipath, host_src, est)
        else:
            if not (stat.S_ISREG(st.st_mode)):
                raise out.fail(f"source {'/'.join(named)} is a special file; COPY takes files, folders and symlinks")
            if into or out.kind(base) == "dir":
                target = posixpath.join(base, named[-1]) if named else base
                out.ensure_dir(base, uid, gid)
            else:
                target = base
                out.ensure_dir(posixpath.dirname(base), uid, gid)
            put_nondir(target, os.path.join(context.root, real), st)
    for host, atime_ns, mtime_ns in reversed(dir_times):
        _times(host, atime_ns, mtime_ns)
    return out.written


def add_archive(layer: Path, archive: Path, dest: str, *, where: str, owner: Owner | None,
                host_id: Callable[[int], int], workdir: str,
                existing: Callable[[str], str | None] | None = None) -> list[str]:
    """Unpack the local archive ``archive`` into the folder ``dest`` of ``layer`` (the image's
    ``/``), as ADD does, and return the absolute image paths written. ``existing`` (optional,
    as for copy_into) tells which folders the lower image already has."""
    field = "ADD"
    target_abs, _ = _dest_path(dest, workdir)
    out = _Layer(layer, where, field, host_id, existing)
    base = out.resolve(target_abs)
    if out.kind(base) == "file":
        raise out.fail(f"cannot unpack {Path(archive).name} into {base}, which is a file")
    uid, gid = (owner.uid, owner.gid) if owner is not None else (0, 0)
    out.ensure_dir(base, uid, gid)
    dir_times: list[tuple[str, int]] = []
    try:
        with ExitStack() as stack:
            stream = _open_decompressed(Path(archive), stack)
            if stream is None:
                raise out.fail(f"{archive} is a zstd archive, which this builder cannot unpack")
            with tarfile.open(fileobj=stream, mode="r|") as tf:
                for member in tf:
                    made = _unpack_member(out, tf, member, base, owner)
                    if made is not None:
                        dir_times.append(made)
    except _READ_ERRORS as err:
        raise out.fail(f"cannot unpack the archive {archive}: {err}") from None
    for ipath, mtime_ns in reversed(dir_times):
        _times(out.host(ipath), mtime_ns, mtime_ns)
    return out.written


def _member_parts(out: _Layer, name: str, what: str) -> list[str]:
    if name.startswith("/"):
        raise out.fail(f"archive {what} {name!r} has an absolute name")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise out.fail(f"archive {what} {name!r} climbs with '..'")
    return parts


def _unpack_member(out: _Layer, tf: tarfile.TarFile, member: tarfile.TarInfo, base: str,
                   owner: Owner | None) -> tuple[str, int] | None:
    """Write one member; for a folder, return its image path and mtime (set once its contents are in)."""
    name = member.name
    parts = _member_parts(out, name, "member")
    if not parts:
        return None
    if member.ischr() or member.isblk():
        raise out.fail(f"archive member {name!r} is a device file")
    if not (member.isreg() or member.isdir() or member.issym() or member.islnk() or member.isfifo()):
        raise out.fail(f"archive member {name!r} has an unsupported type {member.type!r}")
    lexical = posixpath.join(base, *parts)
    ipath = out.resolve(lexical, follow_leaf=member.isdir())
    if not _within(ipath, base):
        raise out.fail(f"archive member {name!r} would be written at {ipath}, outside {base}, through a symbolic link")
    uid, gid = (owner.uid, owner.gid) if owner is not None else (member.uid, member.gid)
    huid, hgid = out.host_id(uid), out.host_id(gid)
    mode = member.mode & 0o7777
    mtime_ns = int(member.mtime * 1e9)
    parent = posixpath.dirname(ipath)
    out.ensure_dir(parent, 0, 0)
    host = out.host(ipath)
    current = out.lstat(ipath)
    if member.isdir():
        if current is not None and not stat.S_ISDIR(current.st_mode):
            out.clear(ipath)
            current = None
        if current is None:
            os.mkdir(host, 0o700)
        os.chown(host, huid, hgid)
        os.chmod(host, mode)
        out.note(ipath)
        return ipath, mtime_ns
    if member.issym():
        target = member.linkname
        pointed = _go_clean(target if target.startswith("/") else posixpath.join(parent, target))
        if not _within(pointed, base):
            raise out.fail(f"archive symlink {name!r} points to {target!r}, outside {base}")
        out.clear(ipath)
        os.symlink(target, host)
        os.chown(host, huid, hgid, follow_symlinks=False)
        _times(host, mtime_ns, mtime_ns)
        out.note(ipath)
        return None
    if member.islnk():
        link_parts = _member_parts(out, member.linkname, "hard link target")
        if not link_parts:
            raise out.fail(f"archive hard link {name!r} points to the extraction folder itself")
        source = out.resolve(posixpath.join(base, *link_parts), follow_leaf=False)
        if not _within(source, base):
            raise out.fail(f"archive hard link {name!r} points to {member.linkname!r}, outside {base}")
        sst = out.lstat(source)
        if sst is None or stat.S_ISDIR(sst.st_mode):
            raise out.fail(f"archive hard link {name!r} points to {member.linkname!r}, which the archive has not written as a file")
        if source != ipath:
            out.clear(ipath)
            os.link(out.host(source), host, follow_symlinks=False)
        if not stat.S_ISLNK(sst.st_mode):
            os.chown(host, huid, hgid)
            os.chmod(host, mode)
            _times(host, mtime_ns, mtime_ns)
        out.note(ipath)
        return None
    out.clear(ipath)
    if member.isfifo():
        os.mkfifo(host, 0o600)
        os.chown(host, huid, hgid)
        os.chmod(host, mode)
    else:
        data = tf.extractfile(member)
        assert data is not None
        _write_file(host, data, huid, hgid, mode)
    _times(host, mtime_ns, mtime_ns)
    out.note(ipath)
    return None
