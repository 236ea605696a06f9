"""Manifests: what every path under the home is, taken from outside the sandbox.

The harness runs as root on the host, so the walk must not be steerable by what the
agent left behind: it never follows a symlink (directories are opened with O_NOFOLLOW
and checked against their lstat), never opens a FIFO, socket or device, and never reads
a file past the size fstat gave when it was opened. What it cannot read is recorded
with an ``error`` instead of raised, so one odd path cannot abort an episode.
"""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from .digest import digest_fd

FORMAT = "termrl-manifest/1"
ROOT = "."
"""The key of the root directory itself (its own mode and owner matter too)."""

_KINDS = {
    stat.S_IFREG: "file",
    stat.S_IFDIR: "dir",
    stat.S_IFLNK: "symlink",
    stat.S_IFIFO: "fifo",
    stat.S_IFSOCK: "socket",
    stat.S_IFCHR: "chardev",
    stat.S_IFBLK: "blockdev",
}
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

RACY_NS = 2_000_000_000
"""A path changed this close to the walk keeps no stat key, so the next walk re-reads it.

File timestamps come from a coarse clock (a jiffy, or a second on some filesystems): a
rewrite in the same tick as the walk could leave all four key fields equal. Git calls
this the "racy clean" problem and solves it the same way."""

StatKey = tuple[int, int, int, int]
"""(st_ino, st_size, st_mtime_ns, st_ctime_ns): equal keys mean the bytes need no re-read.
ctime is in it because nobody can set it back, unlike mtime (``touch -d``, ``os.utime``)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One path's type and properties; the unit the diff compares."""

    kind: str
    """'file', 'dir', 'symlink', 'fifo', 'socket', 'chardev', 'blockdev' or 'unknown'."""
    mode: int
    """Permission bits only (stat.S_IMODE), so a type change is never a mode change."""
    uid: int
    gid: int
    size: int = 0
    """Bytes, regular files only; 0 for everything else."""
    sha256: str | None = None
    """Hex sha256 of the bytes, regular files only (past 16 MiB a digest by blocks, ``blocks:...``, :mod:`.digest`);
    None when the file could not be read."""
    target: str | None = None
    """Symlink target as written (fsdecoded), never resolved."""
    error: str | None = None
    """Why the file or directory could not be read, when it could not."""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "mode": self.mode, "uid": self.uid, "gid": self.gid}
        if self.kind == "file":
            d["size"] = self.size
            d["sha256"] = self.sha256
        for name in ("target", "error"):
            value = getattr(self, name)
            if value is not None:
                d[name] = value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Entry:
        return cls(
            kind=d["kind"],
            mode=d["mode"],
            uid=d["uid"],
            gid=d["gid"],
            size=d.get("size", 0),
            sha256=d.get("sha256"),
            target=d.get("target"),
            error=d.get("error"),
        )


@dataclass
class Manifest:
    """Every path under one root: ``entries`` to compare, ``keys`` to skip re-hashing.

    Paths are relative to the root, '/'-separated, decoded with os.fsdecode (so a
    non-UTF-8 name survives as surrogate escapes and round-trips to the same bytes);
    the root itself is ``"."``.
    """

    entries: dict[str, Entry]
    keys: dict[str, StatKey]
    """Only paths last changed well before the walk (see RACY_NS); the rest are re-read."""
    root: str = ""

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, path: object) -> bool:
        return path in self.entries

    def get(self, path: str) -> Entry | None:
        return self.entries.get(path)

    def errors(self) -> dict[str, str]:
        """Paths that could not be read fully, with the reason."""
        return {p: e.error for p, e in sorted(self.entries.items()) if e.error is not None}

    def to_dict(self) -> dict[str, Any]:
        """Rows rather than dicts per path: a 100,000-file home stays a few MB.

        Surrogate-escaped names stay lone surrogates in the JSON text (``\\udcff``);
        ``json.dumps`` with its default ``ensure_ascii=True`` writes them safely.
        """
        rows = {}
        for path in sorted(self.entries):
            e = self.entries[path]
            key = self.keys.get(path)
            rows[path] = [e.kind, e.mode, e.uid, e.gid, e.size, e.sha256, e.target, e.error,
                          list(key) if key is not None else None]
        return {"format": FORMAT, "root": self.root,
                "fields": ["kind", "mode", "uid", "gid", "size", "sha256", "target", "error", "stat_key"],
                "entries": rows}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Manifest:
        if d.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} manifest: format={d.get('format')!r}")
        entries: dict[str, Entry] = {}
        keys: dict[str, StatKey] = {}
        for path, (kind, mode, uid, gid, size, sha, target, error, key) in d["entries"].items():
            entries[path] = Entry(kind, mode, uid, gid, size, sha, target, error)
            if key is not None:
                keys[path] = tuple(key)  # type: ignore[assignment]
        return cls(entries, keys, d.get("root", ""))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> Manifest:
        return cls.from_dict(json.loads(text))


def _describe_error(exc: OSError) -> str:
    return f"{type(exc).__name__}: {exc.strerror or exc}"


def _hash_file(name: str, st: os.stat_result, dir_fd: int | None) -> tuple[str | None, int, str | None]:
    """(sha256, bytes hashed, error) of the regular file lstat'ed as ``st``.

    Module-level so tests can count reads. The fd is checked to be the very inode that
    was lstat'ed: a path swapped for a FIFO or a symlink in between is not read.
    """
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        return None, st.st_size, _describe_error(exc)
    try:
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode) or (fst.st_ino, fst.st_dev) != (st.st_ino, st.st_dev):
            return None, st.st_size, "replaced while being read"
        sha, covered = digest_fd(fd, fst.st_size)
        return sha, covered, None
    except OSError as exc:
        return None, st.st_size, _describe_error(exc)
    finally:
        os.close(fd)


class _Walker:
    """One walk; holds the previous manifest's rows for reuse."""

    def __init__(self, previous: Manifest | None) -> None:
        self.racy_after = time.time_ns() - RACY_NS
        self.prev_entries = previous.entries if previous is not None else {}
        self.prev_keys = previous.keys if previous is not None else {}
        self.entries: dict[str, Entry] = {}
        self.keys: dict[str, StatKey] = {}
        self.stats: dict[str, os.stat_result] | None = None
        """When a dict, every recorded path's lstat (the live manifest indexes inodes by it)."""
        self.on_dir: Callable[[str, int], None] | None = None
        """Called with (path, descriptor) for each folder opened, before it is listed."""

    def record(self, rel: str, name: str, st: os.stat_result, dir_fd: int | None) -> None:
        """Make the Entry for one lstat'ed path, reusing the previous one if nothing moved."""
        key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if self.stats is not None:
            self.stats[rel] = st
        if st.st_ctime_ns < self.racy_after and st.st_mtime_ns < self.racy_after:
            self.keys[rel] = key
        fmt = stat.S_IFMT(st.st_mode)
        kind = _KINDS.get(fmt, "unknown")
        mode = st.st_mode & 0o7777
        prev = self.prev_entries.get(rel)
        if (prev is not None and prev.error is None and prev.kind == kind and prev.mode == mode
                and prev.uid == st.st_uid and prev.gid == st.st_gid
                and self.prev_keys.get(rel) == key):
            # A symlink's target and a file's bytes cannot change without a new ctime.
            self.entries[rel] = prev
            return
        if kind == "file":
            sha, size, error = _hash_file(name, st, dir_fd)
            entry = Entry(kind, mode, st.st_uid, st.st_gid, size, sha, None, error)
        elif kind == "symlink":
            try:
                entry = Entry(kind, mode, st.st_uid, st.st_gid,
                              target=os.fsdecode(os.readlink(name, dir_fd=dir_fd)))
            except OSError as exc:
                entry = Entry(kind, mode, st.st_uid, st.st_gid, error=_describe_error(exc))
        else:
            entry = Entry(kind, mode, st.st_uid, st.st_gid)
        self.entries[rel] = entry

    def fail(self, rel: str, exc: OSError | str) -> None:
        error = exc if isinstance(exc, str) else _describe_error(exc)
        self.entries[rel] = replace(self.entries[rel], error=error)

    def walk(self, root: str) -> None:
        st = os.lstat(root)
        self.record(ROOT, root, st, None)
        if stat.S_ISDIR(st.st_mode):
            self.walk_below(root, ROOT, st)

    def walk_below(self, path: str, rel: str, st: os.stat_result) -> None:
        """Record everything under the folder ``rel`` (at host ``path``, lstat'ed as ``st``)."""
        # Depth-first with an explicit stack: a 5,000-deep `mkdir -p` must not recurse.
        stack: list[tuple[str, str, os.stat_result]] = [(path, "" if rel == ROOT else rel + "/", st)]
        while stack:
            path, prefix, dst = stack.pop()
            rel = prefix[:-1] if prefix else ROOT
            try:
                dfd = os.open(path, _DIR_FLAGS)
            except OSError as exc:
                self.fail(rel, exc)
                continue
            try:
                fst = os.fstat(dfd)
                if (fst.st_ino, fst.st_dev) != (dst.st_ino, dst.st_dev):
                    self.fail(rel, "replaced while being read")
                    continue
                if self.on_dir is not None:
                    self.on_dir(rel, dfd)
                try:
                    with os.scandir(dfd) as it:
                        children = list(it)
                except OSError as exc:
                    self.fail(rel, exc)
                    continue
                for child in children:
                    name = child.name
                    crel = prefix + name
                    try:
                        cst = child.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue  # gone between readdir and lstat: nothing to describe
                    except OSError as exc:
                        self.entries[crel] = Entry("unknown", 0, -1, -1, error=_describe_error(exc))
                        continue
                    self.record(crel, name, cst, dfd)
                    if stat.S_ISDIR(cst.st_mode):
                        stack.append((os.path.join(path, name), crel + "/", cst))
            finally:
                os.close(dfd)


def take_manifest(root: Path | str, previous: Manifest | None = None, *, full: bool = False) -> Manifest:
    """Describe every path under ``root`` (root included, as ``"."``).

    With ``previous`` (and not ``full``), a path whose stat key, mode and owner are
    unchanged keeps its previous Entry, so its bytes are not read again; ``full=True``
    re-reads everything. Directory mtimes are never recorded, so listing or creating
    inside a directory does not change the directory's Entry.
    """
    root_s = os.fspath(root)
    walker = _Walker(None if full else previous)
    walker.walk(root_s)
    return Manifest(walker.entries, walker.keys, root_s)
