"""A whole-machine sandbox's disk: a tmpfs of the task's storage size under its upper layers, and when it counts as full.

One rule for bwrap's upper layers (:mod:`.bwrap.storage`) and a docker container's layer folder
(:mod:`.docker.machine_storage`): the size is the task's ``storage_mb``, else the settings'
``storage_bytes``; past it a write fails with "No space left on device" inside, the host's disk
never fills, and the episode ends with its own end reason (``storage_limit``) once less than
:data:`FULL_BELOW_BYTES` is free.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from ..errors import SandboxError
from ..settings import MiB, SandboxSettings
from ..tasks.model import Resources

_MS_REMOUNT = 32
_MNT_DETACH = 2
FULL_BELOW_BYTES = 1 << 20
"""Free space under which the upper layers count as full (a write of any size may fail there)."""


def storage_size(settings: SandboxSettings, resources: Resources | None) -> tuple[int, bool]:
    """The tmpfs's size in bytes, and whether it is the task's own ``storage_mb`` (else the settings' ``storage_bytes``)."""
    if resources is not None and resources.storage_mb:
        return resources.storage_mb * MiB, True
    return settings.storage_bytes, False


def tmpfs_note(what: str, size_bytes: int, from_task: bool) -> str:
    """The ``storage`` line of ``enforced_limits`` for ``what`` on a tmpfs of that size."""
    return f"{what} on a tmpfs of {size_bytes // MiB} MiB" + (" (the task's storage_mb)" if from_task else "")


def is_full(path: Path | str) -> bool:
    """Whether the file system at ``path`` is full: less than :data:`FULL_BELOW_BYTES` free, or no inode left."""
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize < FULL_BELOW_BYTES or st.f_favail == 0


def unmount(target: Path) -> None:
    """Detach a mount the harness made (lazily: a sandbox still starting may hold it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.umount2(os.fsencode(str(target)), _MNT_DETACH)


class SizedTmpfs:
    """A tmpfs mounted at ``path`` (an existing folder, hidden under it while mounted), ``size_bytes`` big."""

    def __init__(self, path: Path, size_bytes: int, mode: int = 0o711) -> None:
        self.path = path
        self.mode = mode
        self._mount(0, size_bytes)
        self.size_bytes = size_bytes

    def _mount(self, flags: int, size_bytes: int) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        data = f"size={size_bytes},mode={self.mode:04o},nr_inodes={max(size_bytes // 4096, 1024)}".encode()
        if libc.mount(b"termrl-upper", os.fsencode(str(self.path)), b"tmpfs", ctypes.c_ulong(flags), data) != 0:
            errno = ctypes.get_errno()
            raise SandboxError(f"could not mount the upper layers' tmpfs at {self.path}: {os.strerror(errno)}")

    def resize(self, size_bytes: int) -> None:
        """Give the task its own size (before anything is written)."""
        self._mount(_MS_REMOUNT, size_bytes)
        self.size_bytes = size_bytes

    def holds(self, other: os.statvfs_result) -> bool:
        """Whether a statvfs (of an overlay, which reports its upper's file system) is of this tmpfs: its size and inodes."""
        mine = os.statvfs(self.path)
        return (other.f_blocks * other.f_frsize, other.f_files) == (mine.f_blocks * mine.f_frsize, mine.f_files)

    def exhausted(self) -> bool:
        return is_full(self.path)

    def used_bytes(self) -> int:
        st = os.statvfs(self.path)
        return (st.f_blocks - st.f_bfree) * st.f_frsize

    def release(self) -> None:
        unmount(self.path)
