"""Root-side file operations on the agent's home that never follow a link.

Faults are injected, checked and undone by the harness, which runs as root on the host,
in a folder the agent's uid owns. Every path is therefore walked one component at a
time with ``O_NOFOLLOW | O_DIRECTORY`` directory descriptors, and every file is opened
with ``O_NOFOLLOW | O_NONBLOCK`` and checked against its lstat: a symlink, a FIFO or a
folder the agent put in the way is reported, never followed, opened for a wait or
written through.

The home may also be a whole machine's workdir reached from the host (:class:`~..sandbox.reach.Anchored`),
whose overlay lives in the sandbox's user namespace: it cannot hold an object owned by an id it does
not map (host root), so what the harness creates there it creates as the object's owner.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

from ..oracle.digest import digest_fd
from ..sandbox.reach import Anchored, HostHome

T = TypeVar("T")

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


def inside(rel: str, home: str = SANDBOX_HOME) -> str:
    """The absolute path the agent uses for a home-relative path (``home``: the folder as the agent sees it)."""
    parts = rel_parts(rel)
    top = home.rstrip("/")
    return (top + "/" + "/".join(parts)) if parts else (top or "/")


def open_home(home: HostHome | str) -> int:
    """A directory descriptor on the home itself (an anchored one walked without following links)."""
    if isinstance(home, Anchored):
        return home.open()
    return os.open(os.fspath(home), _DIR_FLAGS)


@contextmanager
def _fs_ids(uid: int, gid: int) -> Iterator[None]:
    """This thread's file-system ids are ``uid``/``gid`` for the block (setfsuid is per thread), then root's again."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.setfsgid(gid)
    libc.setfsuid(uid)
    try:
        yield
    finally:
        libc.setfsuid(0)
        libc.setfsgid(0)


def _open(name: str, flags: int, dir_fd: int, held: list[tuple[int, int]] | None = None) -> int:
    """``os.open``; for a harness that is not root, an object of its own that refuses it (a fault's 000 file, a folder
    it may not search, which root's rights pass) is opened once its owner's bits are added, and its mode is given back
    at once, or, for a folder the walk goes on through (``held``), when the walk ends (:func:`_give_back`)."""
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except PermissionError:
        if os.geteuid() == 0:
            raise
    else:
        if held is None or os.geteuid() == 0 or os.fstat(fd).st_mode & stat.S_IXUSR:
            return fd
        os.close(fd)  # readable, but the walk cannot look anything up in it
    path_fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        st = os.fstat(path_fd)
        if st.st_uid != os.geteuid() or stat.S_ISLNK(st.st_mode):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
        mode = stat.S_IMODE(st.st_mode)
        os.chmod(f"/proc/self/fd/{path_fd}", mode | (0o700 if stat.S_ISDIR(st.st_mode) else 0o600))
        try:
            return os.open(name, flags, dir_fd=dir_fd)
        finally:
            if held is None:
                os.chmod(f"/proc/self/fd/{path_fd}", mode)
            else:
                held.append((os.dup(path_fd), mode))
    finally:
        os.close(path_fd)


def _give_back(held: list[tuple[int, int]]) -> None:
    """The modes :func:`_open` added to, innermost first."""
    for path_fd, mode in reversed(held):
        try:
            os.chmod(f"/proc/self/fd/{path_fd}", mode)
        finally:
            os.close(path_fd)
    held.clear()


def _create(make: Callable[[], T], uid: int, gid: int) -> T:
    """``make()``, again as ``uid``/``gid`` when the file system cannot map root's ids (EOVERFLOW: a machine's overlay)."""
    try:
        return make()
    except OSError as exc:
        if exc.errno != errno.EOVERFLOW:
            raise
    with _fs_ids(uid, gid):
        return make()


@contextmanager
def open_parent(home: HostHome | str, rel: str) -> Iterator[tuple[int, str]]:
    """(directory fd, last component) of ``rel``; every directory on the way is a real one.

    Raises UnsafePath when a component is absent, a symlink or not a directory, and
    ValueError for the home itself (it has no parent inside the home).
    """
    parts = rel_parts(rel)
    if not parts:
        raise ValueError("the home itself has no parent inside the home")
    fd = open_home(home)
    held: list[tuple[int, int]] = []
    try:
        for part in parts[:-1]:
            try:
                nfd = _open(part, _DIR_FLAGS, fd, held)
            except OSError as exc:
                raise UnsafePath(exc.errno, f"{part!r} on the way to {rel!r} is not a real directory: {exc.strerror}") from None
            os.close(fd)
            fd = nfd
        yield fd, parts[-1]
    finally:
        os.close(fd)
        _give_back(held)


def lstat(home: HostHome | str, rel: str) -> os.stat_result | None:
    """lstat of the path, or None when it (or a real directory on its way) is missing."""
    if not rel_parts(rel):
        fd = open_home(home)
        try:
            return os.fstat(fd)
        finally:
            os.close(fd)
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


def readlink(home: HostHome | str, rel: str) -> str | None:
    try:
        with open_parent(home, rel) as (dfd, name):
            return os.fsdecode(os.readlink(name, dir_fd=dfd))
    except OSError:
        return None


@contextmanager
def open_regular(home: HostHome | str, rel: str) -> Iterator[int | None]:
    """A read fd on the regular file at ``rel`` (never a link, FIFO or device), else None."""
    fd: int | None = None
    try:
        with open_parent(home, rel) as (dfd, name):
            st = os.lstat(name, dir_fd=dfd)
            if stat.S_ISREG(st.st_mode):
                fd = _open(name, _FILE_FLAGS, dfd)
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


def sha256(home: HostHome | str, rel: str) -> str | None:
    """Digest of the regular file at ``rel``, as the oracle takes it (:func:`.digest.digest_fd`); None for anything else
    or when absent."""
    with open_regular(home, rel) as fd:
        if fd is None:
            return None
        return digest_fd(fd, os.fstat(fd).st_size)[0]


def chmod(home: HostHome | str, rel: str, mode: int, *, expect: str) -> None:
    """chmod the file or directory at ``rel`` (``expect`` 'file', 'directory' or 'fifo') via its fd."""
    parts = rel_parts(rel)
    if not parts:
        fd = open_home(home)
    else:
        with open_parent(home, rel) as (dfd, name):
            st = os.lstat(name, dir_fd=dfd)
            if kind(st) != expect:
                raise UnsafePath(0, f"{rel!r} is a {kind(st)}, not a {expect}")
            flags = _DIR_FLAGS if expect == "directory" else _FILE_FLAGS
            fd = _open(name, flags, dfd)
    try:
        if kind(os.fstat(fd)) != expect:
            raise UnsafePath(0, f"{rel!r} changed while being opened")
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def chown(home: HostHome | str, rel: str, uid: int, gid: int) -> None:
    with open_parent(home, rel) as (dfd, name):
        os.chown(name, uid, gid, dir_fd=dfd, follow_symlinks=False)


def rename(home: HostHome | str, src: str, dst: str) -> None:
    """Rename within the home; refuses to replace anything at ``dst``."""
    with open_parent(home, src) as (sfd, sname), open_parent(home, dst) as (dfd, dname):
        try:
            os.lstat(dname, dir_fd=dfd)
        except FileNotFoundError:
            pass
        else:
            raise FileExistsError(f"{dst!r} already exists")
        owner = os.lstat(sname, dir_fd=sfd)  # a lower's file is copied up first, as its owner on a machine's overlay
        _create(lambda: os.rename(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd), owner.st_uid, owner.st_gid)


def mkdir(home: HostHome | str, rel: str, mode: int, uid: int, gid: int) -> None:
    with open_parent(home, rel) as (dfd, name):
        _create(lambda: os.mkdir(name, 0o700, dir_fd=dfd), uid, gid)
        fd = os.open(name, _DIR_FLAGS, dir_fd=dfd)
        try:
            os.fchown(fd, uid, gid)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def mkfifo(home: HostHome | str, rel: str, mode: int, uid: int, gid: int) -> None:
    with open_parent(home, rel) as (dfd, name):
        _create(lambda: os.mkfifo(name, 0o600, dir_fd=dfd), uid, gid)
        # A FIFO opened for reading with O_NONBLOCK returns at once, writer or not.
        fd = os.open(name, _FILE_FLAGS, dir_fd=dfd)
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                raise UnsafePath(0, f"{rel!r} changed while being made")
            os.fchown(fd, uid, gid)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def unlink(home: HostHome | str, rel: str) -> None:
    with open_parent(home, rel) as (dfd, name):
        owner = os.fstat(dfd)
        _create(lambda: os.unlink(name, dir_fd=dfd), owner.st_uid, owner.st_gid)


def copy_file(home: HostHome | str, src: str, dst: str, mode: int, uid: int, gid: int) -> None:
    """Copy the regular file ``src`` to a new file ``dst`` (which must not exist)."""
    with open_regular(home, src) as sfd:
        if sfd is None:
            raise UnsafePath(0, f"{src!r} is not a regular file")
        with open_parent(home, dst) as (dfd, name):
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = _create(lambda: os.open(name, flags, 0o600, dir_fd=dfd), uid, gid)
            try:
                while chunk := os.read(sfd, _CHUNK):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view):]
                os.fchown(fd, uid, gid)
                os.fchmod(fd, mode)
            finally:
                os.close(fd)
