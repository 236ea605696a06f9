"""The build context: what COPY and ADD can see in a context folder, and the paths their sources name.

Ignore file
    ``<Dockerfile name>.dockerignore`` beside the Dockerfile when there is one, else the
    context's ``.dockerignore``, matched as :mod:`.dockerignore` says. Ignored paths do not exist
    for COPY: a source that is only ignored paths is "not found", and an ignored folder is made
    only to hold what an exception brings back inside it.

Sources
    Relative to the context root (a leading ``/`` too); trailing slashes do not matter; each
    path element may hold Go ``filepath.Match`` wildcards; matches come in name order. Stricter
    than the engine, which silently clamps ``../`` to the root: a source that climbs out, or
    that reaches through a symlink leading out of the context (an absolute link target counts
    as out), is refused, and so is one that matches nothing. A source named directly is
    followed if it is a symlink (the engine's FollowSymlinks); symlinks inside a copied folder
    are copied as symlinks.

Remote sources (``http(s)://``, ``git://``, ``ssh://``, ``user@host:path``) are for the
builder to refuse: there is no network.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Iterator

from pytest_termrl.errors import TaskFormatError

from .dockerignore import DockerIgnore
from .paths import MAX_LINKS, glob_regex, go_clean, has_wildcard, unescape

__all__ = ["BuildContext", "is_remote"]


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

    def error(self, where: str, field: str, source: str) -> TaskFormatError:
        return TaskFormatError(where, field, f"source {source} leaves the build context: {self.how}")


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
        self._ignore = DockerIgnore(self.dockerignore)

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
        return self._ignore.ignored(rel)

    def _brings_back(self, rel: str) -> bool:
        """Whether an ignored folder holds something an exception pattern re-includes."""
        if not self._ignore.exceptions:
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
                if hops > MAX_LINKS:
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

    def parts_of(self, path: Path | str, where: str, field: str) -> list[str]:
        """The elements, under the root, of a path that ``sources`` returned, as it was named."""
        absolute = os.path.abspath(os.fspath(path))
        rel = os.path.relpath(absolute, self.root)
        if rel == ".":
            return []
        if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
            raise TaskFormatError(where, field, f"{path} is not inside the build context {self.root}")
        return rel.split(os.sep)

    def followed(self, path: Path | str, where: str, field: str) -> tuple[str, os.stat_result]:
        """The real relative path (posix, "" for the root) and stat of a path that ``sources``
        returned, followed: what is copied under the name ``parts_of`` gives."""
        parts = self.parts_of(path, where, field)
        try:
            resolved, st = self._resolve(parts)
        except _Escapes as esc:
            raise esc.error(where, field, '/'.join(parts) or '.') from None
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
        elements = [e for e in go_clean("/" + pattern).split("/") if e]
        candidates: list[list[str]] = [[]]
        wildcard_seen = False
        hidden = 0
        for index, element in enumerate(elements):
            last = index == len(elements) - 1
            nxt: list[list[str]] = []
            wild = has_wildcard(element)
            if wild:
                try:
                    regex = glob_regex(element)
                except ValueError as err:
                    raise TaskFormatError(where, field, f"bad pattern {pattern!r}: {err}") from None
            for cand in candidates:
                try:
                    real, st = self._resolve(cand)
                except _NotFound as nf:
                    hidden += int(nf.ignored)
                    continue
                except _Escapes as esc:
                    raise esc.error(where, field, repr(pattern)) from None
                if not stat.S_ISDIR(st.st_mode):
                    continue
                if not wild:
                    nxt.append(cand + [unescape(element)])
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
                raise esc.error(where, field, repr(pattern)) from None
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

    def entries(self, real: str) -> Iterator[tuple[str, str, os.stat_result]]:
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
                    if is_dir and self._ignore.exceptions:
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
            named = "/".join(self.parts_of(path, "digest", "COPY"))
            real, st = self.followed(path, "digest", "COPY")
            h.update(b"source\0" + named.encode("utf-8", "surrogateescape") + b"\0")
            if stat.S_ISDIR(st.st_mode):
                for inner, host, est in self.entries(real):
                    h.update(_entry_digest(inner, host, est))
            else:
                h.update(_entry_digest("", os.path.join(self.root, real), st))
        return "sha256:" + h.hexdigest()


def _entry_digest(inner: str, host: str, st: os.stat_result) -> bytes:
    """One entry's part of the digest: its name and mode, then a file's sha256, a link's target or its kind."""
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


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_SCP_LIKE = re.compile(r"[^@/:]+@[^/:]+:")


def is_remote(source: str) -> bool:
    """Whether ``source`` names something on the network (a URL or a git address): the builder
    refuses those, having none."""
    return bool(_SCHEME.match(source) or _SCP_LIKE.match(source))
