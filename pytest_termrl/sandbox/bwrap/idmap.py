"""The whole-machine sandbox's id range: a user namespace mapping 0-65535 inside onto unprivileged host ids.

Root inside is host id ``base``, never host id 0; every id a task uses (``USER``, ``chown``,
``adduser``, ``su``) is ``base + id`` on the host. The harness, as root, writes the map of
each sandbox's user namespace itself. The host's system folders become the sandbox's
lowers through idmapped mounts of that same map, so a file the host's root owns is root's
inside too (and writable by root inside only through the overlay's upper layer).
"""

from __future__ import annotations

import ctypes
import os
import pwd
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ...errors import SandboxError
from ...tasks.placement import INSIDE_IDS

DEFAULT_ID_BASE = 1 << 20
"""Host id of root inside, unless ``TERMRL_ID_BASE`` says another: far above any account a distribution makes."""
ID_COUNT = INSIDE_IDS
"""Ids 0-65535 inside: every id an image's accounts use."""

_SYS_OPEN_TREE, _SYS_MOVE_MOUNT, _SYS_MOUNT_SETATTR = 428, 429, 442  # the same numbers on x86_64 and aarch64's generic table
_OPEN_TREE_CLONE, _OPEN_TREE_CLOEXEC = 1, 0o2000000
_AT_EMPTY_PATH, _AT_FDCWD = 0x1000, -100
_MOVE_MOUNT_F_EMPTY_PATH = 0x4
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID, _MOUNT_ATTR_NODEV, _MOUNT_ATTR_IDMAP = 0x1, 0x2, 0x4, 0x100000


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


@dataclass(frozen=True)
class IdRange:
    """Host ids ``base`` .. ``base + count - 1``, shown inside as 0 .. count - 1."""

    base: int
    count: int = ID_COUNT

    def host(self, inside: int) -> int:
        if not 0 <= inside < self.count:
            raise SandboxError(f"id {inside} is outside the sandbox's range 0-{self.count - 1}")
        return self.base + inside

    def map_line(self) -> str:
        return f"0 {self.base} {self.count}\n"

    def check_unused(self) -> None:
        """Refuse a range that holds a host account (its files would be the sandbox's) or host id 0."""
        if self.base <= 0:
            raise SandboxError(f"the sandbox's id range must not include host id 0 (base {self.base})")
        for entry in pwd.getpwall():
            if self.base <= entry.pw_uid < self.base + self.count:
                raise SandboxError(
                    f"host account {entry.pw_name!r} (uid {entry.pw_uid}) lies in the sandbox's id range "
                    f"{self.base}-{self.base + self.count - 1}; choose another with TERMRL_ID_BASE")


def write_maps(pid: int, ids: IdRange) -> None:
    """Map the user namespace of process ``pid`` (bubblewrap's, blocked until this is done) onto ``ids``."""
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{pid}/{name}", "w") as f:
            f.write(ids.map_line())


class HeldNamespace:
    """A user namespace with the range's map, held open by a sleeping process: the map of idmapped mounts."""

    def __init__(self, ids: IdRange) -> None:
        self._process = subprocess.Popen(["unshare", "--user", "--", "sleep", "infinity"], stdin=subprocess.DEVNULL)
        try:
            path = f"/proc/{self._process.pid}/ns/user"
            deadline = time.monotonic() + 5.0
            while os.readlink(path) == os.readlink("/proc/self/ns/user"):  # unshare has not run yet
                if time.monotonic() > deadline or self._process.poll() is not None:
                    raise SandboxError("could not make a user namespace (unshare --user failed): "
                                       "the kernel or the container forbids user namespaces")
                time.sleep(0.001)
            write_maps(self._process.pid, ids)
            self.fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except BaseException:
            self._process.kill()
            self._process.wait()
            raise

    def close(self) -> None:
        os.close(self.fd)
        self._process.kill()
        self._process.wait()


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise SandboxError(f"{what} failed: {os.strerror(errno)} (idmapped mounts need Linux 5.12 or later and root)")
    return result


def idmapped_mount(source: str, target: Path, userns_fd: int | None, *, nosuid: bool = False) -> None:
    """Mount ``source`` (that folder alone, no submount) read-only at ``target``, its ids shown through the map.

    No submount comes along: what the host mounts below a system folder (an engine's data
    under /var/lib/docker) never becomes part of a lower. ``userns_fd`` None: ids as they are
    (a read-only bind that the range's root can reach where the source's parents would stop it).
    """
    libc = ctypes.CDLL(None, use_errno=True)
    fd = _check(libc.syscall(_SYS_OPEN_TREE, _AT_FDCWD, os.fsencode(source), _OPEN_TREE_CLONE | _OPEN_TREE_CLOEXEC),
                f"open_tree({source})")
    try:
        flags = _MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NODEV | (_MOUNT_ATTR_IDMAP if userns_fd is not None else 0) | (_MOUNT_ATTR_NOSUID if nosuid else 0)
        attr = _MountAttr(flags, 0, 0, userns_fd or 0)
        _check(libc.syscall(_SYS_MOUNT_SETATTR, fd, b"", _AT_EMPTY_PATH, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr))),
               f"mount_setattr({source}, idmap)")
        _check(libc.syscall(_SYS_MOVE_MOUNT, fd, b"", _AT_FDCWD, os.fsencode(str(target)), _MOVE_MOUNT_F_EMPTY_PATH),
               f"move_mount({source} -> {target})")
    finally:
        os.close(fd)
