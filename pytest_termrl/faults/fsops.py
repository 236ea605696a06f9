"""Root-side file operations on the agent's home that never follow a link.

Faults are injected, checked and undone by the harness, which runs as root on the host,
in a folder the agent's uid owns. Every path is therefore walked one component at a
time with ``O_NOFOLLOW | O_DIRECTORY`` directory descriptors, and every file is opened
with ``O_NOFOLLOW | O_NONBLOCK`` and checked against its lstat: a symlink, a FIFO or a
folder the agent put in the way is reported, never followed, opened for a wait or
written through.
"""

from __future__ import annotations

import hashlib
import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

SANDBOX_HOME = "/home/user"
"""The home as the agent sees it; absolute task paths under it are mapped back."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20


class UnsafePath(OSError):
    """A component of a home-relative path is not a real directory (a link, a file, absent)."""


def rel_parts(rel: str) -> list[str]:
    """'./logs//app.log' -> ['logs', 'app.log']; '/home/user/x' -> ['x']. Refuses '..' and other absolute paths."""
    if rel.startswith(SANDBOX_HOME + "/"):
        rel = rel[len(SANDBOX_HOME) + 1:]
    if rel.startswith("/"):
        raise ValueError(f"not a path inside the home: {rel!r}")
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValueError(f"path must not contain '..': {rel!r}")
    return parts


def normalize(rel: str) -> str:
    """The canonical home-relative spelling ('.' for the home itself)."""
    return "/".join(rel_parts(rel)) or "."


def parent_of(rel: str) -> str:
    parts = rel_parts(rel)
    return "/".join(parts[:-1]) or "."


def basename(rel: str) -> str:
    parts = rel_parts(rel)
    return parts[-1] if parts else "."


def inside(rel: str) -> str:
    """The absolute path the agent uses for a home-relative path."""
    parts = rel_parts(rel)
    return SANDBOX_HOME + ("/" + "/".join(parts) if parts else "")


@contextmanager
def open_parent(home: Path | str, rel: str) -> Iterator[tuple[int, str]]:
    """(directory fd, last component) of ``rel``; every directory on the way is a real one.

    Raises UnsafePath when a component is absent, a symlink or not a directory, and
    ValueError for the home itself (it has no parent inside the home).
    """
    parts = rel_parts(rel)
    if not parts:
        raise ValueError("the home itself has no parent inside the home")
    fd = os.open(os.fspath(home), _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            try:
                nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise UnsafePath(exc.errno, f"{part!r} on the way to {rel!r} is not a real directory: {exc.strerror}") from None
            os.close(fd)
            fd = nfd
        yield fd, parts[-1]
    finally:
        os.close(fd)


def lstat(home: Path | str, rel: str) -> os.stat_result | None:
    """lstat of the path, or None when it (or a real directory on its way) is missing."""
    if not rel_parts(rel):
        return os.lstat(os.fspath(home))
    try:
        with open_parent(home, rel) as (dfd, name):
            return os.lstat(name, dir_fd=dfd)
    except (UnsafePath, FileNotFoundError, NotADirectoryError):
        return None


def kind(st: os.stat_result | None) -> str:
    if st is None:
        return "absent"
    fmt = stat.S_IFMT(st.st_mode)
    return {
        stat.S_IFREG: "file",
        stat.S_IFDIR: "directory",
        stat.S_IFLNK: "symlink",
        stat.S_IFIFO: "fifo",
        stat.S_IFSOCK: "socket",
        stat.S_IFCHR: "character device",
        stat.S_IFBLK: "block device",
    }.get(fmt, "unknown")


def readlink(home: Path | str, rel: str) -> str | None:
    try:
        with open_parent(home, rel) as (dfd, name):
            return os.fsdecode(os.readlink(name, dir_fd=dfd))
    except OSError:
        return None


@contextmanager
def open_regular(home: Path | str, rel: str) -> Iterator[int | None]:
    """A read fd on the regular file at ``rel`` (never a link, FIFO or device), else None."""
    fd: int | None = None
    try:
        with open_parent(home, rel) as (dfd, name):
            st = os.lstat(name, dir_fd=dfd)
            if stat.S_ISREG(st.st_mode):
                fd = os.open(name, _FILE_FLAGS, dir_fd=dfd)
                fst = os.fstat(fd)
                if not stat.S_ISREG(fst.st_mode) or (fst.st_ino, fst.st_dev) != (st.st_ino, st.st_dev):
                    os.close(fd)
                    fd = None
    except (OSError, ValueError):
        if fd is not None:
            os.close(fd)
        fd = None
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def sha256(home: Path | str, rel: str) -> str | None:
    """Hex digest of the regular file at ``rel``; None for anything else or when absent."""
    with open_regular(home, rel) as fd:
        if fd is None:
            return None
        digest = hashlib.sha256()
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
        return digest.hexdigest()


def chmod(home: Path | str, rel: str, mode: int, *, expect: str) -> None:
    """chmod the file or directory at ``rel`` (``expect`` 'file', 'directory' or 'fifo') via its fd."""
    parts = rel_parts(rel)
    if not parts:
        fd = os.open(os.fspath(home), _DIR_FLAGS)
    else:
        with open_parent(home, rel) as (dfd, name):
            st = os.lstat(name, dir_fd=dfd)
            if kind(st) != expect:
                raise UnsafePath(0, f"{rel!r} is a {kind(st)}, not a {expect}")
            flags = _DIR_FLAGS if expect == "directory" else _FILE_FLAGS
            fd = os.open(name, flags, dir_fd=dfd)
    try:
        if kind(os.fstat(fd)) != expect:
            raise UnsafePath(0, f"{rel!r} changed while being opened")
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def chown(home: Path | str, rel: str, uid: int, gid: int) -> None:
    with open_parent(home, rel) as (dfd, name):
        os.chown(name, uid, gid, dir_fd=dfd, follow_symlinks=False)


def rename(home: Path | str, src: str, dst: str) -> None:
    """Rename within the home; refuses to replace anything at ``dst``."""
    with open_parent(home, src) as (sfd, sname), open_parent(home, dst) as (dfd, dname):
        try:
            os.lstat(dname, dir_fd=dfd)
        except FileNotFoundError:
            pass
        else:
            raise FileExistsError(f"{dst!r} already exists")
        os.rename(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)


def mkdir(home: Path | str, rel: str, mode: int, uid: int, gid: int) -> None:
    with open_parent(home, rel) as (dfd, name):
        os.mkdir(name, 0o700, dir_fd=dfd)
        fd = os.open(name, _DIR_FLAGS, dir_fd=dfd)
        try:
            os.fchown(fd, uid, gid)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def mkfifo(home: Path | str, rel: str, mode: int, uid: int, gid: int) -> None:
    with open_parent(home, rel) as (dfd, name):
        os.mkfifo(name, 0o600, dir_fd=dfd)
        # A FIFO opened for reading with O_NONBLOCK returns at once, writer or not.
        fd = os.open(name, _FILE_FLAGS, dir_fd=dfd)
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                raise UnsafePath(0, f"{rel!r} changed while being made")
            os.fchown(fd, uid, gid)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def unlink(home: Path | str, rel: str) -> None:
    with open_parent(home, rel) as (dfd, name):
        os.unlink(name, dir_fd=dfd)


def copy_file(home: Path | str, src: str, dst: str, mode: int, uid: int, gid: int) -> None:
    """Copy the regular file ``src`` to a new file ``dst`` (which must not exist)."""
    with open_regular(home, src) as sfd:
        if sfd is None:
            raise UnsafePath(0, f"{src!r} is not a regular file")
        with open_parent(home, dst) as (dfd, name):
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
            try:
                while chunk := os.read(sfd, _CHUNK):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view):]
                os.fchown(fd, uid, gid)
                os.fchmod(fd, mode)
            finally:
                os.close(fd)
